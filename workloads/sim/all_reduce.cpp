// all_reduce on the simulator's side: nccl-tests all_reduce_perf as NCCL's tuner runs it (algorithm, protocol, channels).
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {

const SimWorkload& sim_workload_all_reduce() { return collective_workload<models::CollOp::AllReduce>(); }

}  // namespace commsim::sim
