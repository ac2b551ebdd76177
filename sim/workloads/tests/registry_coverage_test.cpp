// The registry and workloads/sim/ agree: every registry workload has a simulator side, and no file is
// unregistered.
#include <doctest/doctest.h>

#include "commsim/models/nccl_env.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/topo/load.hpp"
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

TEST_CASE("alltoallv: with no skew it is alltoall, with a skew the busiest link sets a longer time") {
  topo::Diagnostics diag;
  const topo::Topology t =
      topo::load_topology(COMMSIM_SOURCE_DIR "/topologies/library/real/h200x4.topo", {}, diag);
  const auto model = models::make_transfer_model("nccl", models::ModelParams{}, models::NcclEnv{});
  sim::Runtime runtime(t, *model);
  sim::RowRequest row;
  row.gpus = {0, 1, 2, 3};
  row.bytes = 256ULL << 20;
  row.args = workloads::WorkloadArgs::defaults(workloads::find_workload("alltoallv"), workloads::Side::Simulate);
  const auto time = [&](const char* name) {
    return runtime.run(sim::sim_workload(name).program(row)).per_iteration;
  };
  const Picoseconds even = time("alltoall");
  CHECK(time("alltoallv") == even);
  row.args.numbers["--skew"] = 2.0;
  CHECK(time("alltoallv") > even * 3 / 2);
}
