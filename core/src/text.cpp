// File reading and writing, binary-input detection, line splitting and HTML escaping.
#include "commsim/core/text.hpp"

#include "commsim/core/limits.hpp"
#include "commsim/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commsim {

std::string read_file(const std::string& path) {
  // Opened without blocking (a FIFO would wait for a writer) and checked on the open descriptor, so what is
  // checked is what is read: only a regular file of at most kMaxInputFileBytes is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw IoError(path + ": refused: is " + std::string(kind) +
                  "; commsim reads its inputs only from regular files");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > kMaxInputFileBytes) {
    throw IoError(path + ": refused: " + std::to_string(size) +
                  " bytes is larger than the largest input file " + "commsim reads (" +
                  format_size(kMaxInputFileBytes) + ")");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string out;
  out.resize(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (true) {
    if (done == out.size()) {
      // The file grew while being read: read on, but never past the limit.
      if (out.size() >= kMaxInputFileBytes) {
        char probe = 0;
        const ssize_t n = ::read(fd, &probe, 1);
        if (n == 0) break;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw IoError(path + ": read failed: " + std::strerror(errno));
        throw IoError(path + ": refused: grew past the largest input file commsim reads (" +
                      format_size(kMaxInputFileBytes) + ") while being read");
      }
      out.resize(std::min<std::size_t>(std::max<std::size_t>(out.size() * 2, 4096), kMaxInputFileBytes));
    }
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(path + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw IoError(path + ": is a directory; expected a file name to write");
  // The temporary file is a unique sibling (same directory, so the rename is atomic), created exclusively.
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";  // (appended, not "." + ...: GCC 12 warns -Wrestrict on that once inlined)
  name += target.filename().string();
  name += ".tmp.XXXXXX";
  std::string tmp = (dir / name).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw IoError(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      fs::remove(tmp, ec);
      throw IoError(path + ": write failed: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary new file gets (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const int err = errno;
    fs::remove(tmp, ec);
    throw IoError(path + ": write failed: " + std::strerror(err));
  }
  std::error_code rename_error;
  fs::rename(tmp, path, rename_error);
  if (rename_error) {
    fs::remove(tmp, ec);  // its own error code: the rename's is the one reported
    throw IoError(path + ": cannot replace: " + rename_error.message());
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

std::string join_ints(const std::vector<int>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += std::to_string(parts[i]);
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

std::string shell_quote(std::string_view s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789@%_+=:,./-") == std::string_view::npos;
  if (plain) return std::string(s);
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::string markdown_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '<':
        out += "&lt;";
        break;
      case '\\':
      case '|':
      case '`':
      case '[':
      case ']':
        out += '\\';
        out += ch;
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string markdown_code_span(std::string_view s) {
  if (s.find('<') != std::string_view::npos) return markdown_escape(s);
  std::string body(s);
  std::replace(body.begin(), body.end(), '\n', ' ');
  std::replace(body.begin(), body.end(), '\r', ' ');
  std::size_t longest = 0, run = 0;
  for (char ch : body) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  if (!body.empty() && (body.front() == '`' || body.back() == '`')) body = " " + body + " ";
  return fence + body + fence;
}

std::string markdown_code_block(std::string_view s, std::string_view info) {
  std::size_t longest = 0, run = 0;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + std::string(info) + "\n" + std::string(s) + "\n" + fence + "\n";
}

}  // namespace commsim
