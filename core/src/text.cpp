// File reading and writing, binary-input detection, line splitting and HTML escaping.
#include "commsim/core/text.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

namespace commsim {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IoError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw IoError(path + ": read failed");
  return buf.str();
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(tmp + ": cannot create: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) throw IoError(tmp + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw IoError(path + ": cannot replace: " + ec.message());
  }
}

void require_text(std::string_view text, const std::string& file, const std::string& what) {
  if (text.empty()) throw InputError({file, 1, 1}, "file is empty; expected " + what);
  int line = 1;
  int col = 1;
  std::size_t i = 0;
  bool only_space = true;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    if (c == '\n') {
      ++line;
      col = 1;
      ++i;
      continue;
    }
    if (c < 0x20 && c != '\t' && c != '\r' && c != 0x1b) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      throw InputError({file, line, col}, std::string("binary data (byte ") + code + "); expected " + what);
    }
    if (c == 0x7f) throw InputError({file, line, col}, "binary data (byte 0x7f); expected " + what);
    if (c >= 0x80) {
      if ((c & 0xe0) == 0xc0 && c >= 0xc2) {
        len = 2;
      } else if ((c & 0xf0) == 0xe0) {
        len = 3;
      } else if ((c & 0xf8) == 0xf0 && c <= 0xf4) {
        len = 4;
      } else {
        len = 0;
      }
      bool ok = len > 0 && i + len <= text.size();
      for (std::size_t k = 1; ok && k < len; ++k)
        ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (!ok) throw InputError({file, line, col}, "invalid UTF-8 (binary data?); expected " + what);
    }
    if (!std::isspace(c)) only_space = false;
    i += len;
    ++col;
  }
  if (only_space) throw InputError({file, 1, 1}, "file holds only whitespace; expected " + what);
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  int number = 1;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({number++, line});
    start = next;
  }
  return lines;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

}  // namespace commsim
