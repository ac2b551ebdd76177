// reduce_scatter on commsim-measure's side: nccl-tests reduce_scatter_perf, a float sum leaving bytes/n on
// each rank (the size is the input).
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const std::size_t floats = ctx.bytes() / 4;
  COMMSIM_NCCL_CHECK(
      ncclReduceScatter(dv.send, dv.recv, floats / ctx.ranks(), ncclFloat, ncclSum, ctx.comm, dv.stream[0]));
}

}  // namespace

const MeasureWorkload& measure_workload_reduce_scatter() {
  static const MeasureWorkload w{"reduce_scatter", &issue};
  return w;
}

}  // namespace commsim::measure
