// all_gather on commsim-measure's side: nccl-tests all_gather_perf, each rank contributing bytes/n (the size
// is the gathered output).
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {

const MeasureWorkload& measure_workload_all_gather() {
  static const MeasureWorkload w{"all_gather", [](IssueContext& c) {
    COMMSIM_NCCL_CHECK(ncclAllGather(c.send(), c.recv(), c.floats() / c.ranks(), ncclFloat, c.comm, c.stream()));
  }};
  return w;
}

}  // namespace commsim::measure
