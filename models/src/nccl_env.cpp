// Parsing and validation of NCCL environment knobs given with --nccl-env.
#include "commsim/models/nccl_env.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"

namespace commsim::models {
namespace {

constexpr std::array<const char*, 11> kPathNames{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                 "P2C", "PXN", "PHB", "SYS", "NET"};

constexpr std::array<const char*, 16> kKeys{"NCCL_P2P_DISABLE",
                                            "NCCL_SHM_DISABLE",
                                            "NCCL_IB_DISABLE",
                                            "NCCL_P2P_LEVEL",
                                            "NCCL_PROTO",
                                            "NCCL_BUFFSIZE",
                                            "NCCL_P2P_NVL_CHUNKSIZE",
                                            "NCCL_P2P_PCI_CHUNKSIZE",
                                            "NCCL_P2P_NET_CHUNKSIZE",
                                            "NCCL_P2P_LL_THRESHOLD",
                                            "NCCL_NCHANNELS_PER_NET_PEER",
                                            "NCCL_MIN_NCHANNELS",
                                            "NCCL_MAX_NCHANNELS",
                                            "NCCL_ALGO",
                                            "NCCL_NVLS_ENABLE",
                                            "NCCL_DEBUG"};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

long long parse_int(const std::string& key, const std::string& value, long long lo, long long hi) {
  long long v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size() || v < lo || v > hi) {
    throw UsageError("--nccl-env " + key + "=" + value + ": expected an integer between " +
                     std::to_string(lo) + " and " + std::to_string(hi));
  }
  return v;
}

std::uint64_t parse_bytes(const std::string& key, const std::string& value, std::uint64_t lo,
                          std::uint64_t hi) {
  std::uint64_t v = 0;
  if (!value.empty() && std::all_of(value.begin(), value.end(),
                                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    v = static_cast<std::uint64_t>(parse_int(key, value, 0, static_cast<long long>(hi)));
  } else {
    try {
      v = parse_size(value);
    } catch (const ValueError& e) {
      throw UsageError("--nccl-env " + key + "=" + value + ": " + e.what());
    }
  }
  if (v < lo || v > hi) {
    throw UsageError("--nccl-env " + key + "=" + value + ": must be between " + format_size(lo) + " and " +
                     format_size(hi));
  }
  return v;
}

}  // namespace

const char* path_type_name(PathType t) {
  return kPathNames[static_cast<std::size_t>(t)];
}

std::string NcclEnv::known_keys() {
  std::string out;
  for (const char* k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

NcclEnv NcclEnv::parse(const std::vector<std::string>& settings) {
  NcclEnv env;
  for (const std::string& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--nccl-env '" + s + "': expected KEY=VALUE, e.g. NCCL_PROTO=Simple");
    }
    const std::string key = s.substr(0, eq);
    const std::string value = s.substr(eq + 1);
    env.settings.push_back(s);
    if (key == "NCCL_P2P_DISABLE") {
      env.p2p_disable = parse_int(key, value, 0, 1) == 1;
    } else if (key == "NCCL_IB_DISABLE") {
      env.ib_disable = parse_int(key, value, 0, 1) == 1;
    } else if (key == "NCCL_SHM_DISABLE") {
      env.shm_disable = parse_int(key, value, 0, 1) == 1;
    } else if (key == "NCCL_P2P_LEVEL") {
      const std::string v = upper(value);
      std::optional<PathType> level;
      for (std::size_t i = 0; i <= static_cast<std::size_t>(PathType::Sys); ++i) {
        if (v == kPathNames[i]) level = static_cast<PathType>(i);
      }
      if (!level && !v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) {
        static constexpr std::array<PathType, 6> kOld{PathType::Loc, PathType::Pix, PathType::Pxb,
                                                      PathType::Phb, PathType::Sys, PathType::Sys};
        level = kOld[static_cast<std::size_t>(std::min<long long>(parse_int(key, v, 0, 1000), 5))];
      }
      if (!level)
        throw UsageError("--nccl-env NCCL_P2P_LEVEL=" + value +
                         ": valid levels: LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, or 0-5");
      env.p2p_level = level;
    } else if (key == "NCCL_PROTO") {
      // NCCL_PROTO=LL,Simple enables those; NCCL_PROTO=^LL128 disables the listed ones.
      std::string list = value;
      const bool negate = !list.empty() && list[0] == '^';
      if (negate) list.erase(0, 1);
      bool ll = false, ll128 = false, simple = false;
      std::size_t start = 0;
      while (start <= list.size()) {
        std::size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        const std::string name = upper(list.substr(start, end - start));
        if (name == "LL") {
          ll = true;
        } else if (name == "LL128") {
          ll128 = true;
        } else if (name == "SIMPLE") {
          simple = true;
        } else {
          throw UsageError(
              "--nccl-env NCCL_PROTO=" + value + ": unknown protocol '" + list.substr(start, end - start) +
              "'; valid: LL, LL128, Simple (comma-separated, optionally starting with ^ to exclude)");
        }
        start = end + 1;
      }
      env.proto_ll = negate ? !ll : ll;
      env.proto_ll128 = negate ? !ll128 : ll128;
      env.proto_simple = negate ? !simple : simple;
      if (!env.proto_ll && !env.proto_ll128 && !env.proto_simple) {
        throw UsageError("--nccl-env NCCL_PROTO=" + value + " leaves no protocol enabled");
      }
    } else if (key == "NCCL_BUFFSIZE") {
      env.buffsize = parse_bytes(key, value, 8 * 1024, 1ULL << 30);
    } else if (key == "NCCL_P2P_NVL_CHUNKSIZE") {
      env.p2p_nvl_chunksize = parse_bytes(key, value, 1024, 1ULL << 27);
    } else if (key == "NCCL_P2P_PCI_CHUNKSIZE") {
      env.p2p_pci_chunksize = parse_bytes(key, value, 1024, 1ULL << 27);
    } else if (key == "NCCL_P2P_NET_CHUNKSIZE") {
      env.p2p_net_chunksize = parse_bytes(key, value, 1024, 1ULL << 27);
    } else if (key == "NCCL_P2P_LL_THRESHOLD") {
      env.p2p_ll_threshold = parse_bytes(key, value, 0, 1ULL << 30);
    } else if (key == "NCCL_NCHANNELS_PER_NET_PEER") {
      env.nchannels_per_net_peer = static_cast<int>(parse_int(key, value, 1, 64));
    } else if (key == "NCCL_MIN_NCHANNELS") {
      env.min_nchannels = static_cast<int>(parse_int(key, value, 1, 64));
    } else if (key == "NCCL_MAX_NCHANNELS") {
      env.max_nchannels = static_cast<int>(parse_int(key, value, 1, 64));
    } else if (key == "NCCL_ALGO") {
      // NCCL_ALGO=Ring,Tree enables those; ^Tree disables the listed ones. NVLS, NVLSTree, CollNetDirect,
      // CollNetChain and PAT are accepted but not modelled (off or absent on the machines commsim models).
      std::string list = upper(value);
      const bool negate = !list.empty() && list[0] == '^';
      if (negate) list.erase(0, 1);
      bool ring = false, tree = false;
      std::size_t start = 0;
      while (start <= list.size()) {
        std::size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        const std::string name = list.substr(start, end - start);
        if (name == "RING") {
          ring = true;
        } else if (name == "TREE") {
          tree = true;
        } else if (name != "NVLS" && name != "NVLSTREE" && name != "COLLNETDIRECT" &&
                   name != "COLLNETCHAIN" && name != "COLLNET" && name != "PAT") {
          throw UsageError(
              "--nccl-env NCCL_ALGO=" + value + ": unknown algorithm '" + name +
              "'; valid: Ring, Tree (NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT are accepted "
              "but not modelled), comma-separated, optionally starting with ^ to exclude");
        }
        start = end + 1;
      }
      env.algo_ring = negate ? !ring : ring;
      env.algo_tree = negate ? !tree : tree;
      if (!env.algo_ring && !env.algo_tree)
        throw UsageError("--nccl-env NCCL_ALGO=" + value +
                         " leaves neither Ring nor Tree, the algorithms commsim models");
      env.algo = value;
    } else if (key == "NCCL_NVLS_ENABLE") {
      if (parse_int(key, value, 0, 1) != 0) {
        throw UsageError(
            "--nccl-env NCCL_NVLS_ENABLE=1: NVLink SHARP is not modelled; commsim always assumes NVLS off");
      }
    } else if (key == "NCCL_DEBUG") {
      // Accepted so users can paste their environment; it changes no timing.
    } else {
      throw UsageError("--nccl-env: unknown knob '" + key + "'; commsim understands: " + known_keys());
    }
  }
  if (env.min_nchannels && env.max_nchannels && *env.min_nchannels > *env.max_nchannels) {
    throw UsageError("--nccl-env: NCCL_MIN_NCHANNELS is larger than NCCL_MAX_NCHANNELS");
  }
  return env;
}

}  // namespace commsim::models
