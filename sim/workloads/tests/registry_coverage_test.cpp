// The registry and workloads/sim/ agree: every registry workload has a simulator side, and no file is
// unregistered.
#include <doctest/doctest.h>

#include "commsim/sim/sim_workload.hpp"
#include "commsim/workloads/registry.hpp"

using namespace commsim;

TEST_CASE("every registry workload has a simulator side that simulates it") {
  for (const workloads::WorkloadSpec& w : workloads::registry()) {
    CAPTURE(w.name);
    CHECK_NOTHROW(sim::sim_workload(w.name));
    CHECK((sim::sim_workload(w.name).simulate != nullptr));
  }
}

TEST_CASE("every file in workloads/sim/ registers a registry workload, each once") {
  for (const sim::SimWorkload* w : sim::sim_workloads()) {
    CAPTURE(w->name);
    CHECK(workloads::lookup_workload(w->name) != nullptr);
  }
  CHECK(sim::sim_workloads().size() == workloads::registry().size());
}
