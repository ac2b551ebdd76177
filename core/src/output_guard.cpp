// Checking a command's output paths against its input paths before it runs.
#include "commsim/core/output_guard.hpp"

#include <filesystem>
#include <system_error>

namespace commsim {
namespace fs = std::filesystem;

namespace {

/// True when `a` and `b` name the same file: the same resolved path, or (both existing) the same inode, which
/// also catches hard links.
bool same_file(const std::string& a_resolved, const std::string& b_resolved) {
  if (a_resolved == b_resolved) return true;
  std::error_code ec;
  const bool same = fs::equivalent(a_resolved, b_resolved, ec);
  return !ec && same;
}

}  // namespace

OutputGuard::Entry OutputGuard::entry(const std::string& flag, const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) resolved = fs::absolute(path, ec).lexically_normal();
  return {flag, path, resolved.string()};
}

void OutputGuard::input(const std::string& flag, const std::string& path) {
  if (!path.empty() && path != "-") inputs_.push_back(entry(flag, path));
}

void OutputGuard::inputs(const std::string& flag, const std::vector<std::string>& paths) {
  for (const auto& p : paths) input(flag, p);
}

void OutputGuard::input_in(const std::string& flag, const std::string& dir,
                           const std::vector<std::string>& names) {
  if (dir.empty()) return;
  for (const auto& n : names) input(flag, (fs::path(dir) / n).string());
}

void OutputGuard::output(const std::string& flag, const std::string& path) {
  if (!path.empty() && path != "-") outputs_.push_back(entry(flag, path));
}

void OutputGuard::output_in(const std::string& flag, const std::string& dir,
                            const std::vector<std::string>& names) {
  if (dir.empty()) return;
  for (const auto& n : names) output(flag, (fs::path(dir) / n).string());
}

void OutputGuard::check() const {
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Entry& out = outputs_[i];
    std::error_code ec;
    if (fs::is_directory(out.resolved, ec))
      throw IoError(out.flag + " " + out.path + ": is a directory; expected a file name to write");
    for (const Entry& in : inputs_) {
      if (same_file(out.resolved, in.resolved)) {
        throw UsageError(out.flag + " " + out.path + " would overwrite the input " + in.flag + " " + in.path +
                         " (both are " + in.resolved + "); write the output elsewhere");
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      const Entry& other = outputs_[j];
      if (same_file(out.resolved, other.resolved)) {
        throw UsageError(out.flag + " " + out.path + " and " + other.flag + " " + other.path +
                         " are the same file (" + out.resolved + "); give each output its own path");
      }
    }
  }
}

void create_output_directory(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw IoError(flag + " " + dir + ": exists and is not a directory; expected an output directory");
  fs::create_directories(dir, ec);
  if (ec) throw IoError(flag + " " + dir + ": cannot create the directory: " + ec.message());
}

}  // namespace commsim
