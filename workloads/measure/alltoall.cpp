// alltoall on commsim-measure's side: nccl-tests alltoall_perf as NCCL runs it, grouped sends and receives of
// bytes/n (in floats) to and from every rank.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  cudaStream_t s0 = dv.stream[0];
  const int n = ctx.ranks();
  const std::size_t floats = ctx.bytes() / 4;
  const std::size_t per = floats / n;
  COMMSIM_NCCL_CHECK(ncclGroupStart());
  for (int p = 0; p < n; ++p) {
    COMMSIM_NCCL_CHECK(ncclSend(static_cast<float*>(ctx.send()) + p * per, per, ncclFloat, p, ctx.comm, s0));
    COMMSIM_NCCL_CHECK(ncclRecv(static_cast<float*>(ctx.recv()) + p * per, per, ncclFloat, p, ctx.comm, s0));
  }
  COMMSIM_NCCL_CHECK(ncclGroupEnd());
}

}  // namespace

const MeasureWorkload& measure_workload_alltoall() {
  static const MeasureWorkload w{"alltoall", &issue};
  return w;
}

}  // namespace commsim::measure
