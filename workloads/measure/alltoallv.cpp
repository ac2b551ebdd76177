// alltoallv on commsim-measure's side: the uneven all-to-all of MoE token dispatch, grouped sends and
// receives of the per-peer sizes both tools derive from the same flags (workloads/alltoallv.hpp).
#include <algorithm>
#include <map>
#include <utility>

#include "commsim/core/args.hpp"
#include "commsim/workloads/alltoallv.hpp"
#include "gpu/check.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

/// The per-peer sizes of a configuration, computed once per thread and configuration (not in the timed loop).
const std::vector<std::uint64_t>& matrix(const Config& c) {
  thread_local std::map<std::pair<int, std::uint64_t>, std::vector<std::uint64_t>> cache;
  auto [it, fresh] = cache.try_emplace({c.id, c.bytes});
  if (fresh) {
    it->second = workloads::alltoallv_matrix(
        static_cast<int>(c.gpus.size()), c.bytes, c.args.number("--skew"),
        static_cast<std::uint64_t>(c.args.integer("--skew-seed")), c.args.str("--counts"),
        parse_size_flag("--block-align", c.args.str("--block-align")));
  }
  return it->second;
}

/// Each rank's blocks lie back to back in its send buffer (in peer order) and its receive buffer (in source
/// order), as ncclSend/ncclRecv in one group: NCCL's alltoallv.
void issue(IssueContext& ctx) {
  MeasureDevice& dv = ctx.device;
  const int n = ctx.ranks();
  const auto nn = static_cast<std::size_t>(n);
  const auto r = static_cast<std::size_t>(ctx.rank);
  const std::vector<std::uint64_t>& m = matrix(ctx.config);
  std::size_t send_at = 0, recv_at = 0;
  COMMSIM_NCCL_CHECK(ncclGroupStart());
  for (std::size_t p = 0; p < nn; ++p) {
    const std::uint64_t out = m[r * nn + p], in = m[p * nn + r];
    if (out > 0)
      COMMSIM_NCCL_CHECK(ncclSend(static_cast<char*>(dv.send) + send_at, out / 4, ncclFloat,
                                  static_cast<int>(p), ctx.comm, dv.stream[0]));
    if (in > 0)
      COMMSIM_NCCL_CHECK(ncclRecv(static_cast<char*>(dv.recv) + recv_at, in / 4, ncclFloat,
                                  static_cast<int>(p), ctx.comm, dv.stream[0]));
    send_at += out;
    recv_at += in;
  }
  COMMSIM_NCCL_CHECK(ncclGroupEnd());
}

/// The largest send or receive total of any rank: a rank may receive more than the mean size.
std::size_t buffer_bytes(const Config& c) {
  const std::vector<std::uint64_t>& m = matrix(c);
  const std::size_t n = c.gpus.size();
  std::uint64_t most = 0;
  for (std::size_t r = 0; r < n; ++r) {
    std::uint64_t out = 0, in = 0;
    for (std::size_t p = 0; p < n; ++p) {
      out += m[r * n + p];
      in += m[p * n + r];
    }
    most = std::max({most, out, in});
  }
  return most;
}

}  // namespace

const MeasureWorkload& measure_workload_alltoallv() {
  static const MeasureWorkload w{"alltoallv", &issue, &buffer_bytes};
  return w;
}

}  // namespace commsim::measure
