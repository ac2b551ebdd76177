// Tests of the workload registry: names, lookups, busbw factors and flag defaults.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "commsim/core/error.hpp"
#include "commsim/workloads/alltoallv.hpp"
#include "commsim/workloads/registry.hpp"

using namespace commsim;
using namespace commsim::workloads;

TEST_CASE("registry: names are unique and every workload has columns and a summary") {
  std::set<std::string> names;
  for (const WorkloadSpec& w : registry()) {
    CHECK(names.insert(w.name).second);
    CHECK_FALSE(w.summary.empty());
    CHECK_FALSE(w.columns.empty());
    for (const FlagSpec& f : w.flags) CHECK(f.name.rfind("--", 0) == 0);
  }
  CHECK(names.count("all_reduce") == 1);
  CHECK(names.count("pipeline") == 1);
}

TEST_CASE("registry: an unknown name lists the valid ones") {
  CHECK(lookup_workload("gossip") == nullptr);
  try {
    find_workload("gossip");
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("unknown workload 'gossip'") != std::string::npos);
    CHECK(what.find("p2p, sendrecv") != std::string::npos);
  }
}

TEST_CASE("registry: busbw factors are nccl-tests' (2(n-1)/n for all_reduce, (n-1)/n for all_gather)") {
  CHECK(find_workload("all_reduce").busbw_factor(4) == doctest::Approx(1.5));
  CHECK(find_workload("all_gather").busbw_factor(4) == doctest::Approx(0.75));
  CHECK(find_workload("alltoall").busbw_factor(8) == doctest::Approx(0.875));
  CHECK(find_workload("sendrecv").busbw_factor(4) == doctest::Approx(1.0));
  CHECK(find_workload("broadcast").busbw_factor(4) == doctest::Approx(1.0));
}

TEST_CASE("registry: flag defaults per tool") {
  const WorkloadArgs a = WorkloadArgs::defaults(find_workload("weight-sync"), Side::Simulate);
  CHECK(a.integer("--streams") == 4);
  CHECK(a.str("--method").empty());
  CHECK(a.str("--no-such-flag").empty());
  const WorkloadArgs c = WorkloadArgs::defaults(find_workload("all_reduce"), Side::Simulate);
  CHECK(c.str("--gpus") == "all");
  CHECK(c.str("--launch") == "auto");
}

TEST_CASE("alltoallv: skew 0 gives alltoall's blocks, bytes/n to every other rank") {
  const auto m = alltoallv_matrix(4, 1 << 20, 0.0, 1);
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 4; ++p)
      CHECK(m[static_cast<std::size_t>(r * 4 + p)] == (r == p ? 0u : (1u << 20) / 4));
  }
}

TEST_CASE("alltoallv: a skew moves the same bytes, unevenly, in whole floats, the same for a seed") {
  const std::uint64_t bytes = 64ULL << 20;
  const auto m = alltoallv_matrix(8, bytes, 1.5, 7);
  std::uint64_t total = 0, most = 0, least = ~0ULL;
  for (std::size_t i = 0; i < m.size(); ++i) {
    CHECK(m[i] % 4 == 0);
    if (i / 8 == i % 8) continue;
    total += m[i];
    most = std::max(most, m[i]);
    least = std::min(least, m[i]);
  }
  CHECK(static_cast<double>(total) == doctest::Approx(static_cast<double>(bytes) * 7).epsilon(1e-6));
  CHECK(most > 4 * least);
  CHECK(alltoallv_matrix(8, bytes, 1.5, 7) == m);
  CHECK(alltoallv_matrix(8, bytes, 1.5, 8) != m);
}

TEST_CASE("alltoallv: --block-align makes every block, and so every back-to-back offset, a multiple of it") {
  const std::uint64_t bytes = 64ULL << 20;
  for (const std::uint64_t align : {16ULL, 8192ULL}) {
    const auto m = alltoallv_matrix(4, bytes, 1.2, 1, {}, align);
    std::uint64_t total = 0;
    for (std::size_t r = 0; r < 4; ++r) {
      std::uint64_t offset = 0;  // a rank's send buffer, blocks in peer order
      for (std::size_t p = 0; p < 4; ++p) {
        CHECK(offset % align == 0);
        CHECK(m[r * 4 + p] % align == 0);
        offset += m[r * 4 + p];
        total += m[r * 4 + p];
      }
    }
    // Rounding down each block loses less than one alignment unit a block.
    CHECK(total <= bytes * 3);
    CHECK(total + 12 * align > bytes * 3);
  }
  // The default, 4 B (floats), as before: the 4-B matrix is the one without the argument.
  CHECK(alltoallv_matrix(4, bytes, 1.2, 1, {}, 4) == alltoallv_matrix(4, bytes, 1.2, 1));
  CHECK_THROWS_AS(alltoallv_matrix(4, bytes, 1.2, 1, {}, 6), UsageError);
  CHECK_THROWS_AS(alltoallv_matrix(4, bytes, 1.2, 1, {}, 0), UsageError);
}

TEST_CASE("alltoallv: bad counts files and flags are clear errors") {
  const std::string dir = COMMSIM_SOURCE_DIR "/workloads/tests/";
  CHECK_THROWS_AS(alltoallv_matrix(1, 1024, 0.0, 1), UsageError);
  CHECK_THROWS_AS(alltoallv_matrix(4, 1024, -1.0, 1), UsageError);
  CHECK_THROWS_AS(alltoallv_matrix(4, 1024, 0.0, 1, dir + "no-such-counts.txt"), IoError);
  try {
    alltoallv_matrix(2, 1024, 0.0, 1, dir + "alltoallv-bad-counts.txt");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("alltoallv-bad-counts.txt:3:3") != std::string::npos);
  }
  const auto m = alltoallv_matrix(2, 1024, 0.0, 1, dir + "alltoallv-counts.txt");
  CHECK(m[1] == 4 * m[2]);  // rank 0 sends rank 1 four times what rank 1 sends rank 0
}
