// Typed, located access to TOML fields: every quantity must carry a unit, every error names file:line:col.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"

namespace commsim {

/// Wraps a toml++ table with the file name it came from so errors can point at line and column.
class TomlFields {
 public:
  TomlFields(const toml::table& table, std::string file, std::string context)
      : table_(table), file_(std::move(file)), context_(std::move(context)) {}

  /// Location of a key (or of the table itself when the key is absent).
  SourceLocation where(std::string_view key = {}) const;
  [[noreturn]] void fail(std::string_view key, const std::string& detail) const;

  bool has(std::string_view key) const { return table_.contains(key); }
  std::optional<std::string> string(std::string_view key) const;
  std::string required_string(std::string_view key) const;
  std::optional<std::int64_t> integer(std::string_view key) const;
  std::int64_t required_integer(std::string_view key) const;
  std::optional<bool> boolean(std::string_view key) const;
  /// Quantities are strings with units: "25GBps", "1.5us", "24MiB". A bare number is an error.
  std::optional<double> bandwidth(std::string_view key) const;
  double required_bandwidth(std::string_view key) const;
  std::optional<Picoseconds> duration(std::string_view key) const;
  std::optional<std::uint64_t> size(std::string_view key) const;
  const toml::table* subtable(std::string_view key) const;
  /// Throws InputError naming the first key not in `known` (catches typos such as "nvlnk_links").
  void reject_unknown_keys(std::initializer_list<std::string_view> known) const;

  const toml::table& table() const { return table_; }
  const std::string& file() const { return file_; }

 private:
  template <typename F>
  auto quantity(std::string_view key, F&& parse) const -> std::optional<decltype(parse(std::string_view{}))>;

  const toml::table& table_;
  std::string file_;
  std::string context_;
};

/// Parses TOML text; syntax errors become InputError with the file, line and column toml++ reports.
toml::table parse_toml(std::string_view text, const std::string& file);

}  // namespace commsim
