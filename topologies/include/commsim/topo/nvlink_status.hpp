// Parser for `nvidia-smi nvlink -s`: per-GPU model name, UUID and per-link speeds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace commsim::topo {

struct NvlinkGpuStatus {
  int index = 0;
  std::string name;               ///< e.g. "NVIDIA H200"
  std::string uuid;               ///< may be empty
  std::vector<double> link_rate;  ///< bytes/s per link as printed; 0 for <inactive> links
  int line = 0;                   ///< line of the "GPU n:" header

  int active_links() const;
};

struct NvlinkStatus {
  std::string file;
  std::vector<NvlinkGpuStatus> gpus;
};

/// Parses `nvidia-smi nvlink -s` text. Throws InputError with line and column for unrecognised lines, bad
/// speeds, duplicate GPUs or links, and empty or binary input.
NvlinkStatus parse_nvlink_status(std::string_view text, const std::string& file);

}  // namespace commsim::topo
