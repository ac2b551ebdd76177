// NCCL environment knobs applied as what-ifs (`--nccl-env KEY=VALUE`), validated like NCCL reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commsim::models {

/// NCCL's path types, best to worst (src/graph/topo.h). P2P is used when a pair's path is no worse than the
/// P2P level.
enum class PathType {
  Loc = 0,
  Nvl = 1,
  Nvb = 2,
  C2c = 3,
  Pix = 4,
  Pxb = 5,
  P2c = 6,
  Pxn = 7,
  Phb = 8,
  Sys = 9,
  Net = 10
};
const char* path_type_name(PathType t);

/// The knobs commsim understands. Unset optionals mean "NCCL's default".
struct NcclEnv {
  bool p2p_disable = false;  ///< NCCL_P2P_DISABLE=1
  bool shm_disable = false;  ///< NCCL_SHM_DISABLE=1
  bool ib_disable = false;   ///< NCCL_IB_DISABLE=1: the NET transport uses TCP sockets (over the same NICs)
  std::optional<PathType> p2p_level;               ///< NCCL_P2P_LEVEL (LOC, NVL, PIX, PXB, PHB, SYS or 0-5)
  bool proto_ll = true;                            ///< NCCL_PROTO allows LL
  bool proto_ll128 = true;                         ///< NCCL_PROTO allows LL128
  bool proto_simple = true;                        ///< NCCL_PROTO allows Simple
  std::optional<std::uint64_t> buffsize;           ///< NCCL_BUFFSIZE, bytes
  std::optional<std::uint64_t> p2p_nvl_chunksize;  ///< NCCL_P2P_NVL_CHUNKSIZE, bytes
  std::optional<std::uint64_t> p2p_pci_chunksize;  ///< NCCL_P2P_PCI_CHUNKSIZE, bytes
  std::optional<std::uint64_t> p2p_net_chunksize;  ///< NCCL_P2P_NET_CHUNKSIZE, bytes
  std::optional<std::uint64_t> p2p_ll_threshold;   ///< NCCL_P2P_LL_THRESHOLD, bytes
  std::optional<int> nchannels_per_net_peer;       ///< NCCL_NCHANNELS_PER_NET_PEER
  std::optional<int> min_nchannels;                ///< NCCL_MIN_NCHANNELS
  std::optional<int> max_nchannels;                ///< NCCL_MAX_NCHANNELS
  std::optional<std::string> algo;                 ///< NCCL_ALGO (collectives), as given
  bool algo_ring = true;                           ///< NCCL_ALGO allows Ring
  bool algo_tree = true;                           ///< NCCL_ALGO allows Tree
  std::vector<std::string> settings;               ///< KEY=VALUE as given, for metadata

  /// Parses KEY=VALUE settings. Unknown keys, malformed or out-of-range values throw UsageError naming the
  /// knob and listing the valid ones. Sizes are bytes as NCCL reads them ("4194304"), or with a unit
  /// ("4MiB").
  static NcclEnv parse(const std::vector<std::string>& settings);
  /// Comma-separated list of the supported knobs.
  static std::string known_keys();
};

}  // namespace commsim::models
