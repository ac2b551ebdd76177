// p2p on commsim-measure's side: one send from rank 0 (--src) to rank 1 (--dst).
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  cudaStream_t s0 = dv.stream[0];
  if (ctx.rank == 0) COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), ctx.bytes(), ncclInt8, 1, ctx.comm, s0));
  if (ctx.rank == 1) COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), ctx.bytes(), ncclInt8, 0, ctx.comm, s0));
}

}  // namespace

const MeasureWorkload& measure_workload_p2p() {
  static const MeasureWorkload w{"p2p", &issue};
  return w;
}

}  // namespace commsim::measure
