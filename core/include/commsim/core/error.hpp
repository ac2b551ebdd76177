// Typed errors thrown by commsim libraries; each main() maps them to an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace commsim {

/// Exit codes used by every commsim executable (documented in README.md).
enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,    ///< a bug: an unexpected exception
  kUsage = 2,       ///< bad command line: unknown flag, bad value, unknown name
  kInput = 3,       ///< bad input file contents: parse errors with file, line and column
  kIo = 4,          ///< a file could not be read or written
  kHang = 5,        ///< commsim-measure: a hang the watchdog could not recover
  kSomeFailed = 6,  ///< the run finished, but some points or repetitions failed (their rows say why)
};

/// A position in a text file. Lines and columns count from 1; 0 means "unknown".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col", "file:line" or "file" depending on what is known.
  std::string str() const;
};

/// Base class of every error commsim throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  virtual ExitCode exit_code() const { return ExitCode::kInternal; }
};

/// A value that is wrong in itself, independent of where it came from (for example "12 parsecs" as a size).
/// Parsers catch it and rethrow an InputError that carries the location.
class ValueError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kInput; }
};

/// Malformed input file: message is "file:line:col: error: detail".
class InputError : public Error {
 public:
  InputError(SourceLocation where, const std::string& detail)
      : Error(where.str() + ": error: " + detail), where_(std::move(where)), detail_(detail) {}
  const SourceLocation& where() const { return where_; }
  const std::string& detail() const { return detail_; }
  ExitCode exit_code() const override { return ExitCode::kInput; }

 private:
  SourceLocation where_;
  std::string detail_;
};

/// Bad command-line usage: unknown names, bad flag values, conflicting options.
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kUsage; }
};

/// A file could not be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kIo; }
};

/// A run that finished with some of its points failed (a sweep's, or commsim-measure's repetitions): the
/// results are written, the failed rows say why, and the exit code is 6, not 1 (an internal error).
class PartialFailure : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kSomeFailed; }
};

}  // namespace commsim
