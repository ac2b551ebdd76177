// alltoallv's per-peer sizes (MoE token dispatch): from a counts file or a seeded skew, the same in both
// tools.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"

namespace commsim::workloads {

/// Relative weights w[r*n+p] of what rank r sends rank p, read from `file`: n lines of n non-negative numbers
/// (blank lines and lines starting with '#' skipped). Throws InputError naming file, line and column.
inline std::vector<double> alltoallv_counts_file(const std::string& file, int n) {
  // read_file refuses devices, FIFOs and oversized files (core/limits.hpp) like every other input reader.
  const std::string text = read_file(file);
  std::istringstream in(text);
  std::vector<double> w;
  std::string line;
  int line_no = 0, rows = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    if (++rows > n)
      throw InputError({file, line_no, 1},
                       "more than " + std::to_string(n) + " rows for " + std::to_string(n) + " ranks");
    std::istringstream cells(line);
    std::string cell;
    int cols = 0;
    while (cells >> cell) {
      const int col = static_cast<int>(line.find(cell)) + 1;
      std::size_t used = 0;
      double v = -1;
      try {
        v = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != cell.size() || !std::isfinite(v) || v < 0)
        throw InputError({file, line_no, col}, "'" + cell + "' is not a non-negative number");
      w.push_back(v);
      ++cols;
    }
    if (cols != n)
      throw InputError({file, line_no, 1}, std::to_string(cols) + " numbers where " + std::to_string(n) +
                                               " ranks need " + std::to_string(n));
  }
  if (rows != n)
    throw InputError({file, line_no, 1}, std::to_string(rows) + " rows where " + std::to_string(n) +
                                             " ranks need " + std::to_string(n));
  return w;
}

/// Bytes rank r sends rank p (index r*n+p) in one alltoallv over n ranks that moves `bytes` per rank on
/// average (nccl-tests' size column: the mean send buffer). Weights come from `counts_file` when given, else
/// from a seeded skew: expert (peer) popularity 1/(1+k)^skew over a permutation of the peers drawn from
/// `seed` (skew 0: uniform, which is alltoall). Every size is a multiple of `align` bytes (default 4 B:
/// floats; blocks lie back to back in the buffers, so their offsets are multiples of it too); a rank's block
/// to itself is a local copy and is 0. Throws UsageError for fewer than 2 ranks, a negative skew, weights
/// that sum to 0 or an alignment that is not a positive multiple of 4 B.
inline std::vector<std::uint64_t> alltoallv_matrix(int n, std::uint64_t bytes, double skew,
                                                   std::uint64_t seed, const std::string& counts_file = {},
                                                   std::uint64_t align = 4) {
  if (n < 2) throw UsageError("alltoallv needs at least 2 GPUs");
  if (align == 0 || align % 4 != 0) throw UsageError("--block-align must be a positive multiple of 4 B");
  if (!(skew >= 0) || skew > 100) throw UsageError("--skew must be between 0 and 100");
  const auto nn = static_cast<std::size_t>(n);
  std::vector<double> w(nn * nn, 0.0);
  if (!counts_file.empty()) {
    w = alltoallv_counts_file(counts_file, n);
  } else {
    std::vector<int> order(nn);
    for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    std::uint64_t state = seed;
    for (std::size_t i = nn; i > 1; --i) {  // Fisher-Yates with SplitMix64: the same order on every machine
      std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      std::swap(order[i - 1], order[static_cast<std::size_t>((z ^ (z >> 31)) % i)]);
    }
    for (std::size_t r = 0; r < nn; ++r) {
      for (std::size_t p = 0; p < nn; ++p) w[r * nn + p] = std::pow(1.0 + order[p], -skew);
    }
  }
  double total = 0;
  for (std::size_t r = 0; r < nn; ++r) {
    w[r * nn + r] = 0;
    for (std::size_t p = 0; p < nn; ++p) total += w[r * nn + p];
  }
  if (!(total > 0)) throw UsageError("alltoallv: the per-peer weights sum to 0");
  // The off-diagonal blocks carry (n-1)/n of every rank's buffer, as in alltoall; the rest is the local
  // block.
  const double moved = static_cast<double>(bytes) * static_cast<double>(n - 1);
  std::vector<std::uint64_t> out(nn * nn, 0);
  for (std::size_t i = 0; i < nn * nn; ++i)
    out[i] =
        static_cast<std::uint64_t>(std::floor(moved * w[i] / total / static_cast<double>(align))) * align;
  return out;
}

}  // namespace commsim::workloads
