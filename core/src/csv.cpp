// CSV: the one writer behind every CSV commsim and commsim-measure write, and the line splitter.
#include "commsim/core/csv.hpp"

#include <cmath>
#include <cstdio>

namespace commsim {

std::string csv_quote(std::string_view field) {
  const bool edge_space = !field.empty() && (field.front() == ' ' || field.front() == '\t' ||
                                             field.back() == ' ' || field.back() == '\t');
  if (!edge_space && field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string q = "\"";
  for (char c : field) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string csv_number(double v, const CsvOptions& o) {
  if (std::isnan(v)) return "";  // no value (a row without a band): an empty cell, never "nan"
  char buf[512];                 // "%.6f" of 1e300 takes 308 digits
  switch (o.doubles) {
    case CsvDoubles::RoundTrip: {
      const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
      return std::string(buf, end);
    }
    case CsvDoubles::Fixed:
      std::snprintf(buf, sizeof buf, "%.*f", o.precision, v);
      return buf;
    case CsvDoubles::General:
      break;
  }
  std::snprintf(buf, sizeof buf, "%.*g", o.precision, v);
  return buf;
}

CsvWriter& CsvWriter::raw(std::string_view text) {
  if (row_started_) out_ += ',';
  out_ += text;
  row_started_ = true;
  return *this;
}

CsvWriter& CsvWriter::field(std::string_view text) {
  return raw(csv_quote(text));
}

CsvWriter& CsvWriter::field(double v) {
  return raw(csv_number(v, options_));
}

CsvWriter& CsvWriter::end_row() {
  out_ += '\n';
  row_started_ = false;
  return *this;
}

CsvWriter& CsvWriter::header(std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) field(n);
  return end_row();
}

std::vector<std::string> csv_split(std::string_view line, char delimiter) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delimiter) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace commsim
