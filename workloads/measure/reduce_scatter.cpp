// reduce_scatter on commsim-measure's side: nccl-tests reduce_scatter_perf, a float sum leaving bytes/n on
// each rank (the size is the input).
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {

const MeasureWorkload& measure_workload_reduce_scatter() {
  static const MeasureWorkload w{"reduce_scatter", [](IssueContext& c) {
    COMMSIM_NCCL_CHECK(ncclReduceScatter(c.send(), c.recv(), c.floats() / c.ranks(), ncclFloat, ncclSum, c.comm,
                                         c.stream()));
  }};
  return w;
}

}  // namespace commsim::measure
