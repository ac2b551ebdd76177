// all_reduce on commsim-measure's side: nccl-tests all_reduce_perf, a float sum of the whole buffer.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const std::size_t floats = ctx.bytes() / 4;
  COMMSIM_NCCL_CHECK(ncclAllReduce(dv.send, dv.recv, floats, ncclFloat, ncclSum, ctx.comm, dv.stream[0]));
}

}  // namespace

const MeasureWorkload& measure_workload_all_reduce() {
  static const MeasureWorkload w{"all_reduce", &issue};
  return w;
}

}  // namespace commsim::measure
