// sendrecv on commsim-measure's side: nccl-tests sendrecv_perf, each rank sends to the next and receives from
// the previous in one group.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  cudaStream_t s0 = dv.stream[0];
  const int r = ctx.rank;
  const int n = ctx.ranks();
  const std::size_t bytes = ctx.bytes();
  COMMSIM_NCCL_CHECK(ncclGroupStart());
  COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, (r + 1) % n, ctx.comm, s0));
  COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, (r + n - 1) % n, ctx.comm, s0));
  COMMSIM_NCCL_CHECK(ncclGroupEnd());
}

}  // namespace

const MeasureWorkload& measure_workload_sendrecv() {
  static const MeasureWorkload w{"sendrecv", &issue};
  return w;
}

}  // namespace commsim::measure
