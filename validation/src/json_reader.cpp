// Checked JSON access with JSON paths in every error, and strict number parsing for text inputs.
#include "commsim/validation/json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"

namespace commsim::validation {

nlohmann::json parse_json_file_text(std::string_view text, const std::string& file, const std::string& what) {
  text = strip_utf8_bom(text);
  // The 1-based line and column of byte offset `at`.
  auto location = [&](std::size_t at) {
    at = std::min(at, text.size());
    int line = 1, col = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return SourceLocation{file, line, col};
  };
  auto reason = [](const nlohmann::json::exception& e) {
    std::string why = e.what();
    const auto colon = why.find("; ");
    if (colon != std::string::npos) return why.substr(colon + 2);
    const auto bracket = why.find("] ");
    return bracket != std::string::npos ? why.substr(bracket + 2) : why;
  };
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the failure.
    throw InputError(location(e.byte > 0 ? e.byte - 1 : 0), "not valid " + what + ": " + reason(e));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range ("1e400": "number overflow parsing '1e400'"): nlohmann names the
    // token but not where it is, so the first occurrence of the token is the location given.
    const std::string why = reason(e);
    const auto open = why.find('\''), close = why.rfind('\'');
    std::size_t at = 0;
    if (open != std::string::npos && close > open) {
      const std::size_t found = text.find(why.substr(open + 1, close - open - 1));
      if (found != std::string_view::npos) at = found;
    }
    throw InputError(location(at), "not valid " + what + ": " + why + " (beyond the range of a number)");
  } catch (const nlohmann::json::exception& e) {
    throw InputError({file, 1, 1}, "not valid " + what + ": " + reason(e));
  }
}

void JsonValue::fail(const std::string& why) const {
  throw InputError({file_, 0, 0}, path_ + ": " + why);
}

std::string JsonValue::type_name() const {
  return value_->type_name();
}

JsonValue JsonValue::at(const std::string& key) const {
  if (!value_->is_object()) fail("expected an object, found " + type_name());
  const auto it = value_->find(key);
  if (it == value_->end()) fail("missing key \"" + key + "\"");
  return JsonValue(*it, file_, path_ + "." + key);
}

std::optional<JsonValue> JsonValue::find(const std::string& key) const {
  if (!value_->is_object()) fail("expected an object, found " + type_name());
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonValue(*it, file_, path_ + "." + key);
}

std::vector<JsonValue> JsonValue::items(std::size_t max_items) const {
  if (!value_->is_array()) fail("expected an array, found " + type_name());
  if (value_->size() > max_items)
    fail("has " + std::to_string(value_->size()) + " elements, more than " + std::to_string(max_items));
  std::vector<JsonValue> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], file_, path_ + "[" + std::to_string(i) + "]");
  return out;
}

std::string JsonValue::text() const {
  if (!value_->is_string()) fail("expected a string, found " + type_name());
  return value_->get<std::string>();
}

bool JsonValue::boolean() const {
  if (!value_->is_boolean()) fail("expected true or false, found " + type_name());
  return value_->get<bool>();
}

double JsonValue::number(double lo, double hi) const {
  if (!value_->is_number()) fail("expected a number, found " + type_name());
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("is not a finite number");
  if (v < lo || v > hi)
    fail("value " + value_->dump() + " is outside [" + nlohmann::json(lo).dump() + ", " +
         nlohmann::json(hi).dump() + "]");
  return v;
}

double JsonValue::positive_time_us() const {
  if (!value_->is_number()) fail("expected a time in microseconds (a number), found " + type_name());
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("time " + value_->dump() + " is not finite");
  if (v <= 0) fail("time " + value_->dump() + " us must be positive");
  if (v > static_cast<double>(kMaxSimulatedTime) / 1e6)
    fail("time " + value_->dump() + " us exceeds the largest simulated time (2^62 ps, about 53 days)");
  return v;
}

std::int64_t JsonValue::integer(std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = 0;
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail("value " + value_->dump() + " is larger than " + std::to_string(hi));
    v = value_->get<std::int64_t>();
  } else if (value_->is_number_float()) {
    const double d = value_->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) fail("expected a whole number, found " + value_->dump());
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
      fail("value " + value_->dump() + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
           "]");
    v = static_cast<std::int64_t>(d);
  } else {
    fail("expected a whole number, found " + type_name());
  }
  if (v < lo || v > hi)
    fail("value " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "]");
  return v;
}

std::uint64_t JsonValue::bytes(std::uint64_t lo) const {
  if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > kMaxBytes) {
    fail("size " + value_->dump() + " B is larger than the largest size commsim simulates (" +
         format_size(kMaxBytes) + ")");
  }
  if (value_->is_number() && !value_->is_number_float() && value_->get<std::int64_t>() < 0)
    fail("size " + value_->dump() + " is negative");
  if (value_->is_number_float() && value_->get<double>() > static_cast<double>(kMaxBytes))
    fail("size " + value_->dump() + " B is larger than the largest size commsim simulates (" +
         format_size(kMaxBytes) + ")");
  return static_cast<std::uint64_t>(
      integer(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(kMaxBytes)));
}

int JsonValue::gpu(int gpu_count) const {
  if (value_->is_number() && value_->is_number_integer() && gpu_count > 0) {
    const bool neg = !value_->is_number_unsigned() && value_->get<std::int64_t>() < 0;
    if (neg || value_->get<std::uint64_t>() >= static_cast<std::uint64_t>(gpu_count))
      fail("GPU " + value_->dump() + " is not in the topology, which has GPUs 0-" +
           std::to_string(gpu_count - 1));
  }
  return static_cast<int>(integer(0, gpu_count - 1));
}

std::optional<std::int64_t> parse_integer(std::string_view text, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < lo || v > hi)
    return std::nullopt;
  return v;
}

std::optional<double> parse_finite(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace commsim::validation
