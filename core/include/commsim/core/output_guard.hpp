// Outputs never overwrite inputs: every path a command writes is checked against every path it reads (and
// every other path it writes) after resolving links, before the command does any work.
#pragma once

#include <string>
#include <vector>

#include "commsim/core/error.hpp"

namespace commsim {

/// Collects a command's input and output paths, each with the flag that named it, and refuses clashes.
/// `g.input("--topology", t); g.output("-o", out); g.check();` throws a UsageError (exit 2) when `out` is
/// `t`, through symbolic links, `..`, hard links or a different spelling. Empty paths and "-" (standard
/// output) are ignored.
class OutputGuard {
 public:
  /// A file the command reads.
  void input(const std::string& flag, const std::string& path);
  /// Every file in `paths` (repeatable flags).
  void inputs(const std::string& flag, const std::vector<std::string>& paths);
  /// The files the command reads inside directory `dir` (`names` relative to it, e.g. "results.json").
  void input_in(const std::string& flag, const std::string& dir, const std::vector<std::string>& names);
  /// A file the command writes.
  void output(const std::string& flag, const std::string& path);
  /// The files the command writes inside directory `dir` (`names` relative to it).
  void output_in(const std::string& flag, const std::string& dir, const std::vector<std::string>& names);

  /// Throws UsageError naming both flags and the file when an output is an input or another output, and
  /// IoError when an output is an existing directory.
  void check() const;

 private:
  struct Entry {
    std::string flag;
    std::string path;      ///< as given
    std::string resolved;  ///< absolute, links resolved (std::filesystem::weakly_canonical)
  };
  static Entry entry(const std::string& flag, const std::string& path);
  std::vector<Entry> inputs_;
  std::vector<Entry> outputs_;
};

/// Creates output directory `dir` (and its parents) if missing. Throws IoError naming `flag` and `dir` when
/// it cannot, e.g. when `dir` is a file.
void create_output_directory(const std::string& flag, const std::string& dir);

}  // namespace commsim
