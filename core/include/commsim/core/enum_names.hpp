// One way to name an enum's values: a table of {value, name} pairs gives both directions and the error text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "commsim/core/error.hpp"

namespace commsim {

/// A fixed table of an enum's values and their names, e.g.
///   constexpr EnumNames<Mode, 3> kModes{{{Mode::A, "a"}, {Mode::B, "b"}, {Mode::C, "c"}}};
template <typename E, std::size_t N>
struct EnumNames {
  std::pair<E, const char*> entries[N];

  /// The name of `value` ("?" for a value outside the table).
  constexpr const char* name(E value) const {
    for (const auto& [v, n] : entries) {
      if (v == value) return n;
    }
    return "?";
  }
  /// "a, b, c": the names in table order, for help texts and errors.
  std::string list() const {
    std::string out;
    for (const auto& [v, n] : entries) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
  }
  /// The value named `text`, if any (for callers whose error text is their own).
  constexpr std::optional<E> find(std::string_view text) const {
    for (const auto& [v, n] : entries) {
      if (text == n) return v;
    }
    return std::nullopt;
  }
  /// The value named `text`; throws UsageError "unknown <what> 'text'; valid <plural>: a, b, c" otherwise.
  E parse(std::string_view text, std::string_view what, std::string_view plural) const {
    if (const auto v = find(text)) return *v;
    throw UsageError("unknown " + std::string(what) + " '" + std::string(text) + "'; valid " +
                     std::string(plural) + ": " + list());
  }
};

}  // namespace commsim
