// alltoall on the simulator's side: nccl-tests alltoall_perf, bytes/n to and from every rank in one group.
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {

const SimWorkload& sim_workload_alltoall() { return ring_workload<&alltoall_program>("alltoall"); }

}  // namespace commsim::sim
