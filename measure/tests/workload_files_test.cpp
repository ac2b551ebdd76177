// The registry and workloads/measure/ agree: one measure file per measured workload, none for any other.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "commsim/core/args.hpp"
#include "commsim/workloads/registry.hpp"

using namespace commsim;

TEST_CASE("workloads/measure/ holds one file per measured registry workload and no other") {
  std::set<std::string> files;
  for (const std::string& stem : split_list(COMMSIM_MEASURE_WORKLOAD_STEMS)) files.insert(stem);
  std::set<std::string> measured;
  for (const workloads::WorkloadSpec* w : workloads::measured_workloads()) {
    std::string stem = w->name;
    std::replace(stem.begin(), stem.end(), '-', '_');
    measured.insert(stem);
    CHECK_MESSAGE(files.count(stem) == 1, "no workloads/measure/" << stem << ".cpp for " << w->name);
  }
  for (const std::string& stem : files) {
    CHECK_MESSAGE(measured.count(stem) == 1,
                  "workloads/measure/" << stem << ".cpp is not a measured workload in the registry");
  }
  CHECK(measured.size() == files.size());
}

TEST_CASE("measured workloads come in commsim-measure's order, and only measured ones") {
  std::string names;
  for (const workloads::WorkloadSpec* w : workloads::measured_workloads()) {
    CHECK(w->measured);
    names += (names.empty() ? "" : ",") + w->name;
  }
  CHECK(names ==
        "p2p,sendrecv,exchange,all_reduce,all_gather,reduce_scatter,alltoall,broadcast,reduce,pipeline,"
        "alltoallv");
}
