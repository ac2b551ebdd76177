// reduce on commsim-measure's side: nccl-tests reduce_perf, a float sum of the whole buffer to --root.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const std::size_t floats = ctx.bytes() / 4;
  COMMSIM_NCCL_CHECK(
      ncclReduce(dv.send, dv.recv, floats, ncclFloat, ncclSum, ctx.root_rank(), ctx.comm, dv.stream[0]));
}

}  // namespace

const MeasureWorkload& measure_workload_reduce() {
  static const MeasureWorkload w{"reduce", &issue};
  return w;
}

}  // namespace commsim::measure
