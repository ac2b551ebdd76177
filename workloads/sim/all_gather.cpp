// all_gather on the simulator's side: nccl-tests all_gather_perf as NCCL's tuner runs it (algorithm, protocol, channels).
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {

const SimWorkload& sim_workload_all_gather() { return collective_workload<models::CollOp::AllGather>(); }

}  // namespace commsim::sim
