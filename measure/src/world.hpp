// The processes of one measurement: MPI ranks (one per GPU, mpirun/srun) or this process alone.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace commsim::measure {

/// Collective helpers over the measurement's processes. Without MPI (the default launch) it is a world of one
/// process and every collective is the identity, so the measurement loop has one code path for both launches.
class World {
 public:
  /// Initialises MPI when `use_mpi` (throws UsageError when this build has no MPI); otherwise one process.
  World(bool use_mpi, int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// True when this build was compiled with MPI support (`--launch mpi` available).
  static bool mpi_built();
  bool mpi() const { return mpi_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank among the processes of this host, and how many share the host.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }

  void barrier() const;
  /// Broadcasts `bytes` bytes at `data` from `root`.
  void bcast(void* data, std::size_t bytes, int root) const;
  std::string bcast(std::string s, int root) const;
  int max(int v) const;
  int min(int v) const;
  /// Every process's string, in rank order, on `root` (empty elsewhere).
  std::vector<std::string> gather(const std::string& mine, int root = 0) const;
  /// Ends every process with `code` (MPI_Abort); a no-op without MPI.
  void abort(int code) const;

 private:
  int allreduce(int v, bool take_max) const;
  bool mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
};

}  // namespace commsim::measure
