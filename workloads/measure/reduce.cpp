// reduce on commsim-measure's side: nccl-tests reduce_perf, a float sum of the whole buffer to --root.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {

const MeasureWorkload& measure_workload_reduce() {
  static const MeasureWorkload w{"reduce", [](IssueContext& c) {
    COMMSIM_NCCL_CHECK(ncclReduce(c.send(), c.recv(), c.floats(), ncclFloat, ncclSum, c.root_rank(), c.comm,
                                  c.stream()));
  }};
  return w;
}

}  // namespace commsim::measure
