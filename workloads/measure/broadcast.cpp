// broadcast on commsim-measure's side: nccl-tests broadcast_perf, the whole buffer (in floats) from --root.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const std::size_t floats = ctx.bytes() / 4;
  COMMSIM_NCCL_CHECK(
      ncclBroadcast(dv.send, dv.recv, floats, ncclFloat, ctx.root_rank(), ctx.comm, dv.stream[0]));
}

}  // namespace

const MeasureWorkload& measure_workload_broadcast() {
  static const MeasureWorkload w{"broadcast", &issue};
  return w;
}

}  // namespace commsim::measure
