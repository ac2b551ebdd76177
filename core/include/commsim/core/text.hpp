// Text in and out: reading input files (binary detection, line splitting with original columns), writing
// files atomically, escaping for HTML and Markdown, quoting for the shell.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/error.hpp"

namespace commsim {

/// Reads a whole file. Throws IoError if it cannot be opened or read.
std::string read_file(const std::string& path);

/// Writes a file atomically: to a unique temporary sibling (same directory), then renamed over `path`, so a
/// reader never sees half a file and a failed write leaves the old one. The one writer of every output file
/// commsim and commsim-measure write. Throws IoError (naming `path` and the reason; `path` a directory is
/// one).
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
/// The same for integers (GPU lists): join_ints({0, 1}, " ") is "0 1".
std::string join_ints(const std::vector<int>& parts, std::string_view separator);

/// Escapes &, <, >, " and ' for HTML text and attribute values (the one escaper of every HTML and SVG page
/// commsim writes).
std::string html_escape(std::string_view s);

/// `s` as one POSIX shell word: unchanged when it holds only characters no shell treats specially
/// (letters, digits and @%_+=:,./-), else in single quotes with each ' written '\''. Pasting a command
/// built from quoted words runs exactly that command: `m;touch PWNED;x` stays one argument.
std::string shell_quote(std::string_view s);

/// `s` as inline Markdown text that renders as itself and can hold no HTML or link: < as an entity (no tag
/// can open), backslash, |, `, [ and ] backslash-escaped (table cells, code spans, links), line breaks as
/// spaces (no new block can start). Text without those characters is unchanged ("p2p 0->1" stays as it is).
std::string markdown_escape(std::string_view s);

/// `s` as an inline Markdown code span: delimited by more backticks than any run inside it, line breaks as
/// spaces. Unchanged text inside single backticks when `s` holds no backtick or line break. Text holding a
/// '<' is written as markdown_escape text instead: not every renderer keeps a tag in a code span literal.
std::string markdown_code_span(std::string_view s);

/// `s` as a fenced Markdown code block ending in a newline, `info` after the opening fence (e.g. "sh"): the
/// fence is longer than any backtick run in `s`, so nothing in `s` can close it.
std::string markdown_code_block(std::string_view s, std::string_view info = "");

}  // namespace commsim
