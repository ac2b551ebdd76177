// all_gather on commsim-measure's side: nccl-tests all_gather_perf, each rank contributing bytes/n (the size
// is the gathered output).
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const std::size_t floats = ctx.bytes() / 4;
  COMMSIM_NCCL_CHECK(
      ncclAllGather(dv.send, dv.recv, floats / ctx.ranks(), ncclFloat, ctx.comm, dv.stream[0]));
}

}  // namespace

const MeasureWorkload& measure_workload_all_gather() {
  static const MeasureWorkload w{"all_gather", &issue};
  return w;
}

}  // namespace commsim::measure
