// broadcast on commsim-measure's side: nccl-tests broadcast_perf, the whole buffer (in floats) from --root.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {

const MeasureWorkload& measure_workload_broadcast() {
  static const MeasureWorkload w{"broadcast", [](IssueContext& c) {
    COMMSIM_NCCL_CHECK(ncclBroadcast(c.send(), c.recv(), c.floats(), ncclFloat, c.root_rank(), c.comm, c.stream()));
  }};
  return w;
}

}  // namespace commsim::measure
