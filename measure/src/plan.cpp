// Planning measurement configurations and their seeded, reproducible order.
#include "commsim/measure/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::measure {
namespace {

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

using workloads::Family;

/// The measured workload called `name`; UsageError naming the ones commsim-measure runs otherwise.
const workloads::WorkloadSpec& measured_spec(const std::string& name) {
  const workloads::WorkloadSpec* spec = workloads::lookup_workload(name);
  if (spec && spec->measured) return *spec;
  std::string list;
  for (const workloads::WorkloadSpec* w : workloads::measured_workloads()) {
    list += (list.empty() ? "" : ", ") + w->name;
  }
  throw UsageError("unknown workload '" + name + "'; commsim-measure runs: " + list);
}

using AddConfig = std::function<void(Config)>;

/// PointToPoint: --src to --dst, or every directed pair of `gpus`, at every size.
void plan_point_to_point(const PlanOptions& o, const std::vector<int>& gpus, const AddConfig& add) {
  std::vector<std::pair<int, int>> pairs;
  if (o.src >= 0 || o.dst >= 0) {
    if (o.src < 0 || o.dst < 0) throw UsageError(o.workload + " needs both --src and --dst (or --pairs all)");
    if (o.src == o.dst) throw UsageError("--src and --dst are the same GPU");
    for (int g : {o.src, o.dst}) {
      if (g >= o.gpu_count) throw UsageError("GPU " + std::to_string(g) + " does not exist");
    }
    pairs.push_back({o.src, o.dst});
  } else {
    if (gpus.size() < 2)
      throw UsageError(o.workload + " needs at least 2 GPUs; found " + std::to_string(gpus.size()));
    for (int a : gpus) {
      for (int b : gpus) {
        if (a != b) pairs.push_back({a, b});
      }
    }
  }
  for (const auto& [a, b] : pairs) {
    for (auto s : o.sizes) add({0, o.workload, a, b, {a, b}, s, "", 0});
  }
}

/// Pair: the two GPUs of --pair in one --mode, at every size.
void plan_pair(const PlanOptions& o, const AddConfig& add) {
  if (o.pair.size() != 2 || o.pair[0] == o.pair[1])
    throw UsageError(o.workload + " needs --pair A,B with two GPUs");
  if (o.mode != "sequential" && o.mode != "overlapped" && o.mode != "batched") {
    throw UsageError(o.workload + " needs --mode sequential|overlapped|batched");
  }
  for (int g : o.pair) {
    if (g >= o.gpu_count) throw UsageError("GPU " + std::to_string(g) + " does not exist");
  }
  for (auto s : o.sizes) add({0, o.workload, o.pair[0], o.pair[1], o.pair, s, o.mode, 0});
}

/// Pipeline: every stage of `gpus`, activation sizes x microbatch counts x P2P modes.
void plan_pipeline(const PlanOptions& o, const std::vector<int>& gpus, const AddConfig& add) {
  if (gpus.size() < 2)
    throw UsageError(o.workload + " needs at least 2 stages (GPUs); found " + std::to_string(gpus.size()));
  if (o.microbatches.empty()) throw UsageError(o.workload + " needs --microbatches");
  for (int m : o.microbatches) {
    if (m < 1) throw UsageError("--microbatches must be at least 1");
  }
  if (o.modes.empty()) throw UsageError(o.workload + " needs --mode");
  for (const auto& m : o.modes) {
    if (m != "sequential" && m != "overlapped" && m != "batched") {
      throw UsageError("unknown " + o.workload + " mode '" + m + "'; valid: sequential, overlapped, batched");
    }
  }
  if (o.fwd_us < 0 || o.bwd_us < 0) throw UsageError("--fwd-us and --bwd-us must not be negative");
  if (o.chunks < 1 || o.chunks > 64) throw UsageError("--chunks must be between 1 and 64");
  for (int m : o.microbatches) {
    if (o.chunks > 1 && m % static_cast<int>(gpus.size()) != 0) {
      throw UsageError("the interleaved schedule needs --microbatches to be a multiple of the stages (" +
                       std::to_string(gpus.size()) + "); got " + std::to_string(m));
    }
  }
  for (auto s : o.sizes) {
    for (int m : o.microbatches) {
      for (const auto& mode : o.modes)
        add({0, o.workload, -1, -1, gpus, s, mode, 0, m, o.fwd_us, o.bwd_us, o.chunks});
    }
  }
}

/// Ring and Collective: all of `gpus` (rooted ones at --root), at every size.
void plan_over_gpus(const PlanOptions& o, const workloads::WorkloadSpec& spec, const std::vector<int>& gpus,
                    const AddConfig& add) {
  if (gpus.size() < 2)
    throw UsageError(o.workload + " needs at least 2 GPUs; found " + std::to_string(gpus.size()));
  if (spec.rooted && std::find(gpus.begin(), gpus.end(), o.root) == gpus.end()) {
    throw UsageError("--root " + std::to_string(o.root) + " is not one of the GPUs");
  }
  for (auto s : o.sizes) add({0, o.workload, -1, -1, gpus, s, "", o.root});
}

}  // namespace

std::string Config::tag() const {
  const workloads::WorkloadSpec* spec = workloads::lookup_workload(workload);
  char buf[128];
  if (spec && spec->family == Family::Pipeline) {
    std::snprintf(buf, sizeof buf, "%s_cfg%04d_p%zu_v%d_sz%llu_m%d_%s", workload.c_str(), id, gpus.size(),
                  chunks, static_cast<unsigned long long>(bytes), microbatches, mode.c_str());
  } else if (spec && spec->family == Family::PointToPoint) {
    std::snprintf(buf, sizeof buf, "%s_cfg%04d_s%dd%d_sz%llu", workload.c_str(), id, src, dst,
                  static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%s_cfg%04d_g%zu_sz%llu", workload.c_str(), id, gpus.size(),
                  static_cast<unsigned long long>(bytes));
  }
  return buf;
}

std::vector<int> run_order(std::size_t count, std::uint64_t seed, int rep) {
  std::vector<int> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = static_cast<int>(i);
  std::uint64_t state = seed * 0x100000001b3ULL + static_cast<std::uint64_t>(rep) + 1;
  for (std::size_t i = count; i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(splitmix(state) % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::vector<Config> plan_configs(const PlanOptions& o) {
  const workloads::WorkloadSpec& spec = measured_spec(o.workload);
  if (o.gpu_count < 1) throw UsageError("no GPU to measure on");
  if (o.sizes.empty()) throw UsageError("no sizes to measure");
  std::vector<int> gpus = o.gpus;
  if (gpus.empty()) {
    for (int g = 0; g < o.gpu_count; ++g) gpus.push_back(g);
  }
  for (int g : gpus) {
    if (g < 0 || g >= o.gpu_count) {
      throw UsageError("GPU " + std::to_string(g) + " does not exist; this machine has GPUs 0-" +
                       std::to_string(o.gpu_count - 1));
    }
  }
  // Counted before any configuration is built, without overflow: a plan over thousands of GPUs (every pair
  // of 2,000 GPUs at 20 sizes is 80 million configurations) is refused at once instead of filling memory.
  {
    const std::uint64_t g = gpus.size();
    std::uint64_t count = o.sizes.size(), per_config = g;
    switch (spec.family) {
      case Family::PointToPoint:
        per_config = 2;
        if (o.src < 0 && o.dst < 0) count = checked_mul(count, g * (g > 0 ? g - 1 : 0), "configurations");
        break;
      case Family::Pair:
        per_config = 2;
        break;
      case Family::Pipeline:
        count = checked_mul(checked_mul(count, o.microbatches.size(), "configurations"), o.modes.size(),
                            "configurations");
        break;
      default:
        break;
    }
    if (count > kMaxPlanConfigs || checked_mul(count, per_config, "GPU entries") > kMaxPlanGpuEntries) {
      throw UsageError(
          "refused: the plan has " + std::to_string(count) + " configurations of " +
          std::to_string(per_config) + " GPU(s) each; a plan has at most " + std::to_string(kMaxPlanConfigs) +
          " configurations and " + std::to_string(kMaxPlanGpuEntries) +
          " GPU entries in all (core/limits.hpp). Measure fewer GPUs, pairs (--src/--dst) or sizes");
    }
  }
  std::vector<Config> out;
  const auto add = [&](Config c) {
    c.id = static_cast<int>(out.size());
    c.args = o.args;
    out.push_back(std::move(c));
  };
  switch (spec.family) {
    case Family::PointToPoint:
      plan_point_to_point(o, gpus, add);
      break;
    case Family::Pair:
      plan_pair(o, add);
      break;
    case Family::Pipeline:
      plan_pipeline(o, gpus, add);
      break;
    case Family::Ring:
    case Family::Collective:
      plan_over_gpus(o, spec, gpus, add);
      break;
    case Family::ModelPush:
    case Family::GradientSync:
      throw UsageError(o.workload + " is not a size sweep; commsim-measure has no plan for it");
  }
  return out;
}

std::vector<std::uint64_t> collective_sizes(const std::string& workload, std::vector<std::uint64_t> sizes,
                                            std::size_t ranks) {
  const workloads::WorkloadSpec& spec = measured_spec(workload);
  // A busbw of (n-1)/n is nccl-tests' mark of a size split into one piece per rank.
  const bool per_rank = spec.busbw == workloads::BusBw::RanksMinusOne;
  if (spec.family != Family::Collective && !per_rank)
    return sizes;  // bytes: p2p, sendrecv, exchange, pipeline
  const std::uint64_t n = std::max<std::size_t>(ranks, 1);
  std::vector<std::uint64_t> out;
  for (std::uint64_t b : sizes) {
    const std::uint64_t floats = b / 4;
    // nccl-tests (alltoall.cu, all_gather.cu, reduce_scatter.cu): each rank's piece is (count / nranks)
    // rounded down to a multiple of 16 bytes (4 floats).
    b = per_rank ? ((floats / n) & ~std::uint64_t{3}) * n * 4 : floats * 4;
    if (b > 0 && std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  return out;
}

}  // namespace commsim::measure
