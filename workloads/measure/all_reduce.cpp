// all_reduce on commsim-measure's side: nccl-tests all_reduce_perf, a float sum of the whole buffer.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {

const MeasureWorkload& measure_workload_all_reduce() {
  static const MeasureWorkload w{"all_reduce", [](IssueContext& c) {
    COMMSIM_NCCL_CHECK(ncclAllReduce(c.send(), c.recv(), c.floats(), ncclFloat, ncclSum, c.comm, c.stream()));
  }};
  return w;
}

}  // namespace commsim::measure
