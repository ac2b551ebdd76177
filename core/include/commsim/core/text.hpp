// Text in and out: reading input files (binary detection, line splitting with original columns), writing
// files atomically, escaping for HTML.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/error.hpp"

namespace commsim {

/// Reads a whole file. Throws IoError if it cannot be opened or read.
std::string read_file(const std::string& path);

/// Writes a file atomically: to a temporary sibling, then rename. Throws IoError.
void write_file_atomic(const std::string& path, std::string_view contents);

/// Throws InputError (naming the first offending byte's line and column) if `text` is empty, contains NUL
/// bytes or other control characters that text files do not contain, or is not valid UTF-8.
/// `what` describes the expected content, e.g. "an `nvidia-smi topo -m` matrix".
void require_text(std::string_view text, const std::string& file, const std::string& what);

/// A line of a file: its 1-based number and its text without the line terminator ("\n" or "\r\n").
struct Line {
  int number = 0;
  std::string_view text;
};

/// Splits text into lines; a trailing newline does not start an extra line.
std::vector<Line> split_lines(std::string_view text);

/// `parts` with `separator` between each two: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// Escapes &, <, >, " and ' for HTML text and attribute values (the one escaper of every HTML and SVG page
/// commsim writes).
std::string html_escape(std::string_view s);

}  // namespace commsim
