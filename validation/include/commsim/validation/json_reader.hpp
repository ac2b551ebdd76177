// Checked reading of JSON inputs: every value is read through its JSON path, and a wrong type, a missing key
// or an out-of-range value throws InputError naming the file and the path ("$.rows[3].median_us").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/core/error.hpp"

namespace commsim::validation {

/// Parses `text` (a leading UTF-8 byte-order mark is accepted) as JSON; throws InputError naming `file` and
/// the line and column of the failure when it is not JSON ("not valid <what>: ...").
nlohmann::json parse_json_file_text(std::string_view text, const std::string& file, const std::string& what);

/// One value of a JSON document with its file and path. Accessors check the type and range and throw
/// InputError({file}, "$.path: why") otherwise; they never throw nlohmann's exceptions.
class JsonValue {
 public:
  JsonValue(const nlohmann::json& value, std::string file, std::string path = "$")
      : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  const nlohmann::json& raw() const { return *value_; }

  bool is_object() const { return value_->is_object(); }
  /// Whether this object has `key` (false when this is not an object).
  bool has(const std::string& key) const { return value_->is_object() && value_->contains(key); }
  /// Member `key` of this object; throws when this is not an object or `key` is missing.
  JsonValue at(const std::string& key) const;
  /// Member `key`, or nullopt when it is missing or null.
  std::optional<JsonValue> find(const std::string& key) const;
  /// The elements of this array; throws when it is not an array, or has more than `max_items` elements.
  std::vector<JsonValue> items(std::size_t max_items = 10000000) const;

  std::string text() const;  ///< a string
  bool boolean() const;      ///< true or false
  /// A finite number within [lo, hi].
  double number(double lo = -1.7976931348623157e308, double hi = 1.7976931348623157e308) const;
  /// A finite time in microseconds, greater than 0 and at most the largest simulated time.
  double positive_time_us() const;
  /// A whole number within [lo, hi] (a float such as 2.0 is accepted when whole; 1e9 is a number, checked).
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const;
  /// A byte count: a whole number from `lo` to kMaxBytes.
  std::uint64_t bytes(std::uint64_t lo = 0) const;
  /// A GPU index inside a topology of `gpu_count` GPUs.
  int gpu(int gpu_count) const;

  /// Throws InputError naming the file and this value's path.
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::string type_name() const;
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
};

/// `text` as a whole number within [lo, hi] (strict: no sign games, no trailing text); nullopt otherwise.
std::optional<std::int64_t> parse_integer(std::string_view text, std::int64_t lo, std::int64_t hi);
/// `text` as a finite number (strict: the whole text); nullopt otherwise.
std::optional<double> parse_finite(std::string_view text);

}  // namespace commsim::validation
