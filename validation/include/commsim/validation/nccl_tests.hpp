// Parser for nccl-tests text output (*_perf): several runs per file, header metadata, both time columns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commsim::validation {

struct NcclTestsRow {
  std::uint64_t size = 0;   ///< bytes, nccl-tests' size column
  std::uint64_t count = 0;  ///< elements
  std::string type;
  std::string redop;
  int root = -1;
  double time_us = 0;  ///< out-of-place time
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  double time_ip_us = 0;  ///< in-place time (0 when the column is absent)
  double algbw_ip_gbps = 0;
  double busbw_ip_gbps = 0;
  int line = 0;
};

struct NcclTestsDevice {
  int rank = 0;
  int cuda_device = 0;  ///< device index as the process saw it (after CUDA_VISIBLE_DEVICES)
  std::string bus_id;   ///< "0000:00:06" as printed, may be empty
  std::string name;     ///< "NVIDIA H200"
};

struct NcclTestsRun {
  std::string file;
  int line = 0;                       ///< first line of the run
  std::string op;                     ///< "sendrecv", "all_reduce", ...
  std::string version;                ///< nccl-tests version, e.g. "2.19.6"
  std::vector<std::string> nccl_env;  ///< NCCL_*=VALUE entries of the environment nccl-tests' JSON records
  std::string nccl_version;  ///< NCCL library version the run reports, e.g. "2.28.3" (empty: not recorded)
  int nthreads = 1;
  int ngpus = 1;  ///< GPUs per thread
  int graph = 0;  ///< nccl-tests -G: CUDA graph launches of the timed iterations (0: launched from the host)
  std::vector<NcclTestsDevice> devices;
  std::vector<NcclTestsRow> rows;
};

/// Parses every run in `text`: the text `*_perf` prints, or nccl-tests' JSON output (`-J FILE`, detected by
/// its leading '{'; its row line numbers are result indices). Throws InputError naming file and line for: no
/// run, a data row that does not parse, a run that ends without rows, truncated rows, versions older
/// than 2.0, and non-monotonic sizes.
std::vector<NcclTestsRun> parse_nccl_tests(std::string_view text, const std::string& file);

/// Whether each of the run's `gpus` GPUs had a host thread of its own: `-t N` (one GPU a thread), or one GPU
/// a process under mpirun (its Rank lines list every process's GPU); false for one thread driving every GPU
/// (`-g N`). Throws InputError at the run's first line for a mix commsim does not model: several threads or
/// processes of which some drive several GPUs (`-t 2 -g 2`, or `-g 2` a process under mpirun).
bool thread_per_gpu(const NcclTestsRun& run, std::size_t gpus);

/// NCCL's version code (22803) as text ("2.28.3"); codes below 10000 as NCCL < 2.9 numbers them (2708).
std::string nccl_version_text(long code);

/// The NCCL minor release commsim's model follows (its tuner, protocols and chunking).
inline constexpr const char* kModeledNccl = "2.28";

/// A warning for data that ran another NCCL than `params` was fitted on, or, for a set that names none (the
/// datasheet set), another minor release than kModeledNccl; empty when they agree or `ran` is unknown.
std::string nccl_version_warning(const std::string& ran, const std::string& set_name,
                                 const std::string& set_version);

}  // namespace commsim::validation
