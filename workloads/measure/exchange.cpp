// exchange on commsim-measure's side: the two --pair GPUs send to each other, in the --mode given.
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  cudaStream_t s0 = dv.stream[0];
  ncclComm_t comm = ctx.comm;
  const int r = ctx.rank;
  const std::size_t bytes = ctx.bytes();
  const int peer = 1 - r;
  const std::string& mode = ctx.config.mode;
  if (mode == "sequential") {
    // Same stream and communicator; rank 0 sends first, rank 1 receives first.
    if (r == 0) {
      COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, peer, comm, s0));
      COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, peer, comm, s0));
    } else {
      COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, peer, comm, s0));
      COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, peer, comm, s0));
    }
  } else if (mode == "overlapped") {
    // Separate communicators and streams: rank 0 sends on (comm, stream 0) and receives on (comm1, stream 1).
    cudaStream_t s1 = dv.stream[1];
    COMMSIM_CUDA_CHECK(cudaEventRecord(dv.join, s0));
    COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(s1, dv.join, 0));
    if (r == 0) {
      COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, peer, comm, s0));
      COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, peer, ctx.comm1, s1));
    } else {
      COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, peer, comm, s0));
      COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, peer, ctx.comm1, s1));
    }
    COMMSIM_CUDA_CHECK(cudaEventRecord(dv.join, s1));
    COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(s0, dv.join, 0));
  } else {
    COMMSIM_NCCL_CHECK(ncclGroupStart());
    COMMSIM_NCCL_CHECK(ncclSend(ctx.send(), bytes, ncclInt8, peer, comm, s0));
    COMMSIM_NCCL_CHECK(ncclRecv(ctx.recv(), bytes, ncclInt8, peer, comm, s0));
    COMMSIM_NCCL_CHECK(ncclGroupEnd());
  }
}

}  // namespace

const MeasureWorkload& measure_workload_exchange() {
  static const MeasureWorkload w{"exchange", &issue};
  return w;
}

}  // namespace commsim::measure
