// CSV: the one writer behind every CSV commsim and commsim-measure write (RFC 4180 quoting, number formats),
// and the line splitter that reads it back.
#pragma once

#include <charconv>
#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace commsim {

/// How a CsvWriter writes floating-point fields.
enum class CsvDoubles {
  General,    ///< printf "%.<precision>g"; at precision 6 exactly what std::ostream writes by default
  Fixed,      ///< printf "%.<precision>f" (std::fixed)
  RoundTrip,  ///< the shortest text that reads back as the same double (std::to_chars), e.g. 0.1, 1e+300
};

struct CsvOptions {
  /// Round-trip by default (issue #15): every CSV commsim writes reads back as the same doubles, and never in
  /// "%g"'s 6 digits (1.07409e+06).
  CsvDoubles doubles = CsvDoubles::RoundTrip;
  /// Significant digits (General) or digits after the point (Fixed); RoundTrip ignores it.
  int precision = 6;
};

/// `field` as RFC 4180 wants it: unchanged, unless it holds a comma, a double quote, CR or LF, or starts or
/// ends with a space or tab; then in double quotes, each quote doubled.
std::string csv_quote(std::string_view field);

/// `v` formatted as `options` say (no quoting: numbers never need it).
std::string csv_number(double v, const CsvOptions& options = {});

/// Integers a CsvWriter writes exactly (bool is written as 1/0 and char not at all).
template <typename T>
concept CsvInteger = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>;

/// Builds CSV text row by row: `w.row("bytes", "time_us"); w.row(1024, 3.5);` then `w.str()`. Text fields
/// are quoted when they need it (csv_quote), integers are written exactly and doubles as the options say.
/// Rows end in "\n".
class CsvWriter {
 public:
  explicit CsvWriter(CsvOptions options = {}) : options_(options) {}

  CsvWriter& field(std::string_view text);
  CsvWriter& field(const char* text) { return field(std::string_view(text)); }
  CsvWriter& field(const std::string& text) { return field(std::string_view(text)); }
  CsvWriter& field(double v);
  /// true and false as 1 and 0.
  CsvWriter& field(bool v) { return raw(v ? "1" : "0"); }
  template <CsvInteger T>
  CsvWriter& field(T v) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    return raw(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
  /// A field written exactly as given, never quoted: text the caller has formatted itself.
  CsvWriter& raw(std::string_view text);
  /// Ends the current row.
  CsvWriter& end_row();
  /// One whole row.
  template <typename... Fields>
  CsvWriter& row(const Fields&... fields) {
    (field(fields), ...);
    return end_row();
  }
  /// A header row: the column names.
  CsvWriter& header(std::initializer_list<std::string_view> names);

  /// The text so far.
  const std::string& str() const { return out_; }

 private:
  CsvOptions options_;
  std::string out_;
  bool row_started_ = false;
};

/// Splits one CSV line into its fields: double quotes protect delimiters, "" is a literal quote, nothing is
/// trimmed. An unterminated quote runs to the end of the line.
std::vector<std::string> csv_split(std::string_view line, char delimiter = ',');

}  // namespace commsim
