// World: MPI collectives when built with MPI (COMMSIM_MEASURE_MPI), the one-process identity otherwise.
#include "world.hpp"

#include <unistd.h>

#include <climits>

#include "commsim/core/error.hpp"

#ifdef COMMSIM_MEASURE_MPI
#include <mpi.h>
#endif

namespace commsim::measure {
namespace {

std::string hostname() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

#ifdef COMMSIM_MEASURE_MPI
/// MPI calls that fail abort by default (MPI_ERRORS_ARE_FATAL), so a return code is checked only for the
/// calls whose failure can be a usage problem.
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(std::string("MPI call failed: ") + what);
}
#endif

}  // namespace

bool World::mpi_built() {
#ifdef COMMSIM_MEASURE_MPI
  return true;
#else
  return false;
#endif
}

World::World(bool use_mpi, [[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) : host_(hostname()) {
  if (!use_mpi) return;
#ifdef COMMSIM_MEASURE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) check(MPI_Init(argc, argv), "MPI_Init");
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
#else
  throw UsageError(
      "--launch mpi: this commsim-measure was built without MPI (install libopenmpi-dev and reconfigure)");
#endif
}

World::~World() {
#ifdef COMMSIM_MEASURE_MPI
  if (mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
#endif
}

void World::barrier() const {
#ifdef COMMSIM_MEASURE_MPI
  if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void World::bcast([[maybe_unused]] void* data, [[maybe_unused]] std::size_t bytes,
                  [[maybe_unused]] int root) const {
#ifdef COMMSIM_MEASURE_MPI
  if (mpi_) MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
#endif
}

std::string World::bcast(std::string s, int root) const {
  if (!mpi_) return s;
  auto n = static_cast<unsigned long long>(s.size());
  bcast(&n, sizeof n, root);
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) bcast(s.data(), s.size(), root);
  return s;
}

int World::max(int v) const {
  return allreduce(v, true);
}

int World::min(int v) const {
  return allreduce(v, false);
}

int World::allreduce([[maybe_unused]] int v, [[maybe_unused]] bool take_max) const {
#ifdef COMMSIM_MEASURE_MPI
  if (mpi_) {
    int out = v;
    MPI_Allreduce(&v, &out, 1, MPI_INT, take_max ? MPI_MAX : MPI_MIN, MPI_COMM_WORLD);
    return out;
  }
#endif
  return v;
}

std::vector<std::string> World::gather(const std::string& mine, [[maybe_unused]] int root) const {
  if (!mpi_) return {mine};
  std::vector<std::string> out;
#ifdef COMMSIM_MEASURE_MPI
  if (mine.size() > static_cast<std::size_t>(INT_MAX))
    throw Error("gather: a process's record exceeds 2 GiB");
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(rank_ == root ? size_ : 0), offsets(counts.size());
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == root) {
    long long total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[r] = static_cast<int>(total);
      total += counts[r];
    }
    if (total > INT_MAX) throw Error("gather: the processes' records exceed 2 GiB");
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, root,
              MPI_COMM_WORLD);
  if (rank_ == root) {
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], counts[r]));
  }
#endif
  return out;
}

void World::abort([[maybe_unused]] int code) const {
#ifdef COMMSIM_MEASURE_MPI
  if (mpi_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
}

}  // namespace commsim::measure
