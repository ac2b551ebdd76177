// sendrecv on the simulator's side: nccl-tests sendrecv_perf, each rank to the next in one group.
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {

const SimWorkload& sim_workload_sendrecv() { return ring_workload<&sendrecv_program>("sendrecv"); }

}  // namespace commsim::sim
