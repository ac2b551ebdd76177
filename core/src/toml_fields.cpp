// Implementation of located, unit-checked TOML field access.
#include "commsim/core/toml_fields.hpp"

#include <sstream>

namespace commsim {

SourceLocation TomlFields::where(std::string_view key) const {
  const toml::source_region* region = &table_.source();
  if (!key.empty()) {
    if (const toml::node* n = table_.get(key)) region = &n->source();
  }
  return {file_, static_cast<int>(region->begin.line), static_cast<int>(region->begin.column)};
}

void TomlFields::fail(std::string_view key, const std::string& detail) const {
  std::string prefix = context_.empty() ? std::string() : context_ + ": ";
  if (!key.empty()) prefix += "'" + std::string(key) + "': ";
  throw InputError(where(key), prefix + detail);
}

std::optional<std::string> TomlFields::string(std::string_view key) const {
  const toml::node* n = table_.get(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) fail(key, "expected a string");
  return std::string(*n->value<std::string_view>());
}

std::string TomlFields::required_string(std::string_view key) const {
  auto v = string(key);
  if (!v) fail(key, "missing required key");
  return *v;
}

std::optional<std::int64_t> TomlFields::integer(std::string_view key) const {
  const toml::node* n = table_.get(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) fail(key, "expected an integer");
  return *n->value<std::int64_t>();
}

std::int64_t TomlFields::required_integer(std::string_view key) const {
  auto v = integer(key);
  if (!v) fail(key, "missing required key");
  return *v;
}

std::optional<bool> TomlFields::boolean(std::string_view key) const {
  const toml::node* n = table_.get(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) fail(key, "expected true or false");
  return *n->value<bool>();
}

template <typename F>
auto TomlFields::quantity(std::string_view key, F&& parse) const
    -> std::optional<decltype(parse(std::string_view{}))> {
  const toml::node* n = table_.get(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) {
    std::ostringstream text;
    if (n->is_integer()) {
      text << *n->value<std::int64_t>();
    } else if (n->is_floating_point()) {
      text << *n->value<double>();
    } else {
      fail(key, "expected a quantity with a unit as a string, e.g. \"25GBps\", \"1.5us\" or \"24MiB\"");
    }
    fail(key, "value " + text.str() + " has no unit: write it as a string with a unit, e.g. \"" + text.str() +
                  "GBps\", \"" + text.str() + "us\" or \"" + text.str() + "MiB\"");
  }
  try {
    return parse(*n->value<std::string_view>());
  } catch (const ValueError& e) {
    fail(key, e.what());
  }
}

std::optional<double> TomlFields::bandwidth(std::string_view key) const {
  return quantity(key, [](std::string_view s) { return parse_bandwidth(s); });
}

double TomlFields::required_bandwidth(std::string_view key) const {
  auto v = bandwidth(key);
  if (!v) fail(key, "missing required key");
  return *v;
}

std::optional<Picoseconds> TomlFields::duration(std::string_view key) const {
  return quantity(key, [](std::string_view s) { return parse_duration(s); });
}

std::optional<std::uint64_t> TomlFields::size(std::string_view key) const {
  return quantity(key, [](std::string_view s) { return parse_size(s); });
}

const toml::table* TomlFields::subtable(std::string_view key) const {
  const toml::node* n = table_.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) fail(key, "expected a table");
  return n->as_table();
}

void TomlFields::reject_unknown_keys(std::initializer_list<std::string_view> known) const {
  for (const auto& [k, v] : table_) {
    bool ok = false;
    for (auto name : known) ok = ok || k.str() == name;
    if (!ok) {
      std::string list;
      for (auto name : known) list += (list.empty() ? "" : ", ") + std::string(name);
      const auto& src = v.source();
      throw InputError({file_, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                       (context_.empty() ? std::string() : context_ + ": ") + "unknown key '" +
                           std::string(k.str()) + "'; valid keys: " + list);
    }
  }
}

toml::table parse_toml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw InputError({file, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                     "TOML syntax: " + std::string(e.description()));
  }
}

}  // namespace commsim
