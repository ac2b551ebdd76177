// Tests of the workload registry: names, lookups, busbw factors and flag defaults.
#include <doctest/doctest.h>

#include <set>

#include "commsim/core/error.hpp"
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
