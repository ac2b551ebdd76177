// reduce_scatter on the simulator's side: nccl-tests reduce_scatter_perf as NCCL's tuner runs it (algorithm, protocol, channels).
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {

const SimWorkload& sim_workload_reduce_scatter() { return collective_workload<models::CollOp::ReduceScatter>(); }

}  // namespace commsim::sim
