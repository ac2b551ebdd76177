// The one list of workloads: every tool's subcommands, help texts, planning and joins come from here.
#include "commsim/workloads/registry.hpp"

#include <algorithm>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"

namespace commsim::workloads {
namespace {

using Kind = FlagSpec::Kind;

const std::vector<std::string> kSizeColumns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                                               "ngpus", "transport", "protocol",   "channels"};

FlagSpec gpus_flag() {
  return {"--gpus", Kind::Text, "GPUs in rank order: 0-3, 0,2,4, all", "all", false, Side::Simulate, {}};
}
FlagSpec launch_flag() {
  return {
      "--launch",
      Kind::Text,
      "single-thread: one host thread drives every GPU (nccl-tests -g N);\nthread-per-gpu: "
      "commsim-measure's default, or one process per GPU (mpirun);\nauto: single-thread inside one machine, "
      "thread-per-gpu across machines",
      "auto",
      false,
      Side::Simulate,
      {"auto", "single-thread", "thread-per-gpu"}};
}
FlagSpec cuda_graph_flag() {
  return {
      "--cuda-graph",
      Kind::Text,
      "on: the timed iterations run from one captured CUDA graph (nccl-tests -G,\nPyTorch CUDA graphs): no "
      "host enqueue per iteration",
      "off",
      false,
      Side::Simulate,
      {"off", "on"}};
}
FlagSpec root_flag() {
  return {"--root", Kind::Int, "Root rank (index into --gpus)", "0", false, Side::Simulate, {}};
}
/// commsim-measure's --root is a GPU index, not a rank.
FlagSpec measure_root_flag() {
  return {"--root", Kind::Int, "Root GPU", "0", false, Side::Measure, {}};
}

/// A ring or collective workload over --gpus, listed `measure_order`th by commsim-measure.
WorkloadSpec over_gpus(std::string name, std::string summary, Family family, BusBw busbw, bool rooted,
                       int measure_order) {
  WorkloadSpec w;
  w.name = std::move(name);
  w.summary = std::move(summary);
  w.example = "--gpus 0-3";
  w.family = family;
  w.busbw = busbw;
  w.rooted = rooted;
  w.measured = true;
  w.measure_order = measure_order;
  w.columns = kSizeColumns;
  if (family == Family::Collective) w.columns[5] = "algorithm";
  w.flags = {gpus_flag(), launch_flag(), cuda_graph_flag()};
  if (rooted) w.flags.insert(w.flags.end(), {root_flag(), measure_root_flag()});
  return w;
}

std::vector<WorkloadSpec> build() {
  std::vector<WorkloadSpec> out;
  WorkloadSpec p2p;
  p2p.name = "p2p";
  p2p.summary =
      "Unidirectional send from --src to --dst (or every directed pair with\n--pairs all), one host thread "
      "per GPU";
  p2p.example = "--src 0 --dst 1";
  p2p.family = Family::PointToPoint;
  p2p.measured = true;
  p2p.measure_order = 1;
  p2p.columns = {"src",        "dst",       "bytes",    "time_us", "algbw_gbps",
                 "busbw_gbps", "transport", "protocol", "channels"};
  p2p.flags = {{"--src", Kind::Int, "Sending GPU index", "-1", false, Side::Simulate, {}, false},
               {"--dst", Kind::Int, "Receiving GPU index", "-1", false, Side::Simulate, {}, false},
               {"--pairs", Kind::Text, "'all': every directed GPU pair", "", false, Side::Simulate, {}},
               // commsim-measure plans every pair unless --src and --dst are given.
               {"--pairs",
                Kind::Text,
                "'all': every directed pair of --gpus (the default)",
                "",
                false,
                Side::Measure,
                {}},
               {"--src", Kind::Int, "Sending GPU", "-1", false, Side::Measure, {}, false},
               {"--dst", Kind::Int, "Receiving GPU", "-1", false, Side::Measure, {}, false}};
  out.push_back(p2p);

  out.push_back(
      over_gpus("sendrecv",
                "nccl-tests sendrecv_perf over --gpus: every rank sends to the next and\nreceives from "
                "the previous in one group",
                Family::Ring, BusBw::One, false, 2));
  out.push_back(
      over_gpus("alltoall",
                "nccl-tests alltoall_perf over --gpus, as NCCL runs it: grouped sends\nand receives of "
                "bytes/n to and from every other rank",
                Family::Ring, BusBw::RanksMinusOne, false, 7));
  WorkloadSpec alltoallv = over_gpus(
      "alltoallv",
      "The uneven all-to-all of MoE token dispatch over --gpus: grouped sends\nand receives whose per-peer "
      "sizes follow --skew (or a --counts file)",
      Family::Ring, BusBw::RanksMinusOne, false, 11);
  alltoallv.example = "--gpus 0-3 --skew 1.2";
  alltoallv.flags.push_back(
      {"--skew",
       Kind::Number,
       "Expert popularity skew: peer k of a seeded order receives a share\n1/(1+k)^skew "
       "(0: uniform, alltoall's sizes)",
       "0",
       false,
       Side::Both,
       {}});
  alltoallv.flags.push_back(
      {"--skew-seed", Kind::Int, "Seed of the peers' popularity order", "1", false, Side::Both, {}});
  alltoallv.flags.push_back(
      {"--counts",
       Kind::Text,
       "File of n lines of n relative sizes (line r: what rank r sends each\nrank), instead "
       "of --skew",
       "",
       false,
       Side::Both,
       {}});
  alltoallv.flags.push_back(
      {"--block-align",
       Kind::Text,
       "Every block a multiple of this size (a multiple of 4 B), so that blocks\nlying back to back in the "
       "buffers start aligned to it: 4B (floats),\n16B (NCCL's vector copies), or a token's bytes (8KiB)",
       "4B",
       false,
       Side::Both,
       {}});
  out.push_back(alltoallv);

  WorkloadSpec exchange;
  exchange.name = "exchange";
  exchange.summary =
      "Bidirectional exchange between --pair A,B with --mode sequential (one\nstream), overlapped (separate "
      "communicators and streams) or batched\n(one group)";
  exchange.example = "--pair 0,1 --mode batched";
  exchange.family = Family::Pair;
  exchange.measured = true;
  exchange.measure_order = 3;
  exchange.columns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                      "mode",  "transport", "protocol",   "channels"};
  exchange.flags = {{"--pair", Kind::Text, "The two GPUs, e.g. 0,1", "", true, Side::Both, {}},
                    {"--mode", Kind::Text, "sequential, overlapped or batched", "", true, Side::Both, {}}};
  out.push_back(exchange);

  out.push_back(
      over_gpus("all_reduce",
                "nccl-tests all_reduce_perf over --gpus (Ring/Tree, LL/LL128/Simple as NCCL's tuner "
                "picks)",
                Family::Collective, BusBw::TwiceRanksMinusOne, false, 4));
  out.push_back(over_gpus("all_gather", "nccl-tests all_gather_perf over --gpus (size = the gathered output)",
                          Family::Collective, BusBw::RanksMinusOne, false, 5));
  out.push_back(over_gpus("reduce_scatter", "nccl-tests reduce_scatter_perf over --gpus (size = the input)",
                          Family::Collective, BusBw::RanksMinusOne, false, 6));
  WorkloadSpec broadcast = over_gpus(
      "broadcast",
      "nccl-tests broadcast_perf over --gpus from --root; or with --model NAME\nthe model's tensors, one "
      "broadcast per tensor or per --bucket-bytes bucket",
      Family::Collective, BusBw::One, true, 8);
  broadcast.flags.push_back({"--model",
                             Kind::Text,
                             "Broadcast this model's tensors (`commsim model list`) instead of a\nsize sweep",
                             "",
                             false,
                             Side::Simulate,
                             {}});
  broadcast.flags.push_back({"--bucket-bytes",
                             Kind::Text,
                             "With --model: coalesce consecutive tensors into buckets of at most\nthis size "
                             "(default: one broadcast per tensor)",
                             "",
                             false,
                             Side::Simulate,
                             {}});
  out.push_back(broadcast);
  out.push_back(over_gpus("reduce", "nccl-tests reduce_perf over --gpus to --root", Family::Collective,
                          BusBw::One, true, 9));

  WorkloadSpec pipeline;
  pipeline.name = "pipeline";
  pipeline.summary =
      "Megatron 1F1B pipeline step over --stages P GPUs (or --gpus), or the\ninterleaved schedule "
      "(--schedule "
      "interleaved --chunks V); P2P --mode\nsequential|overlapped|batched";
  pipeline.example =
      "--stages 4 --microbatches 4,16 --activation-bytes 4MiB,64MiB --fwd-us 500 --bwd-us 1000";
  pipeline.family = Family::Pipeline;
  pipeline.size = SizeMeaning::PerMicrobatch;
  pipeline.measured = true;
  pipeline.measure_order = 10;
  pipeline.columns = {"bytes", "microbatches", "mode",       "framework", "time_us",
                      "stage", "gpu",          "compute_us", "comm_us",   "bubble_us"};
  pipeline.flags = {
      {"--stages",
       Kind::Int,
       "Pipeline stages P: rank r runs stage r on GPU r",
       "0",
       false,
       Side::Simulate,
       {},
       false},
      {"--gpus",
       Kind::Text,
       "GPUs for the stages in order (instead of the first P)",
       "all",
       false,
       Side::Simulate,
       {},
       false},
      {"--microbatches", Kind::Text, "Microbatches per step, a list: 4,16", "", true, Side::Simulate, {}},
      {"--activation-bytes",
       Kind::Text,
       "Activation (and gradient) bytes per microbatch, a list: 4MiB,64MiB",
       "",
       true,
       Side::Simulate,
       {}},
      {"--fwd-us",
       Kind::Number,
       "Forward compute per stage and microbatch (us, or with a unit: 0.5ms)",
       "",
       true,
       Side::Simulate,
       {}},
      {"--bwd-us",
       Kind::Number,
       "Backward compute per stage and microbatch (us, or with a unit: 1ms)",
       "",
       true,
       Side::Simulate,
       {}},
      {"--mode",
       Kind::Text,
       "P2P modes, a list of sequential, overlapped, batched (default: all)",
       "",
       false,
       Side::Simulate,
       {}},
      {"--schedule",
       Kind::Text,
       "1f1b (Megatron's non-interleaved) or interleaved (virtual pipeline\nstages, --chunks V)",
       "1f1b",
       false,
       Side::Simulate,
       {"1f1b", "interleaved"}},
      {"--chunks",
       Kind::Int,
       "Model chunks per stage for --schedule interleaved; --fwd-us/--bwd-us\nare per stage and split evenly "
       "over "
       "the chunks",
       "0",
       false,
       Side::Simulate,
       {},
       false},
      // commsim-measure: comma-split lists, emulated compute with defaults, the schedule checked when run.
      {"--activation-bytes",
       Kind::TextList,
       "Activation size(s) sent between stages, with a unit",
       "",
       false,
       Side::Measure,
       {},
       true,
       ','},
      {"--microbatches", Kind::IntList, "Microbatch count(s)", "", true, Side::Measure, {}, true, ','},
      {"--mode",
       Kind::TextList,
       "P2P mode(s): sequential, overlapped, batched",
       "",
       true,
       Side::Measure,
       {},
       true,
       ','},
      {"--fwd-us",
       Kind::Number,
       "Emulated forward compute per stage and microbatch (us, or with a unit)",
       "500",
       false,
       Side::Measure,
       {}},
      {"--bwd-us",
       Kind::Number,
       "Emulated backward compute per stage and microbatch (us, or with a unit)",
       "1000",
       false,
       Side::Measure,
       {}},
      {"--schedule",
       Kind::Text,
       "Pipeline schedule: 1f1b or interleaved (with --chunks)",
       "1f1b",
       false,
       Side::Measure,
       {}},
      {"--chunks",
       Kind::Int,
       "Model chunks per stage for --schedule interleaved (--fwd-us/--bwd-us split\nevenly)",
       "0",
       false,
       Side::Measure,
       {},
       false},
      {"--framework",
       Kind::Text,
       "nccl: plain NCCL calls (torch: measure/torch/)",
       "nccl",
       false,
       Side::Measure,
       {}}};
  for (FlagSpec& f : pipeline.flags) {
    if (f.name == "--fwd-us" || f.name == "--bwd-us") f.time_unit = "us";
  }
  out.push_back(pipeline);

  WorkloadSpec ws;
  ws.name = "weight-sync";
  ws.summary =
      "RL trainer-to-rollout weight push of --model from --from to --to, by\nNCCL broadcast or a copy-engine "
      "P2P "
      "engine (--method)";
  ws.example = "--model qwen2.5-32b --from 0 --to 1-3 --method broadcast";
  ws.family = Family::ModelPush;
  ws.size = SizeMeaning::WholeModel;
  ws.columns = {"model", "method", "tensors", "transfers", "bytes", "timing", "time_us"};
  ws.flags = {
      {"--model",
       Kind::Text,
       "Model whose weights are pushed (`commsim model list`)",
       "",
       true,
       Side::Simulate,
       {}},
      {"--from",
       Kind::Text,
       "Trainer GPU(s): 0, or 0-7 for several trainers, each pushing to its contiguous\nshare of --to in "
       "parallel "
       "(one communicator or engine per trainer)",
       "",
       true,
       Side::Simulate,
       {}},
      {"--to", Kind::Text, "Rollout GPUs: 1-3", "", true, Side::Simulate, {}},
      {"--method",
       Kind::Text,
       "broadcast (NCCL) or p2p-engine (copy engines)",
       "",
       true,
       Side::Simulate,
       {"broadcast", "p2p-engine"}},
      {"--bucket-bytes",
       Kind::Text,
       "broadcast: coalesce consecutive tensors into buckets of at most this\nsize",
       "",
       false,
       Side::Simulate,
       {}},
      {"--streams", Kind::Int, "p2p-engine: copy streams per rollout GPU", "4", false, Side::Simulate, {}}};
  out.push_back(ws);

  WorkloadSpec gs;
  gs.name = "grad-sync";
  gs.summary = "Data-parallel gradient all-reduce of --model over --gpus in --bucket-bytes buckets";
  gs.example = "--model llama-3-8b --gpus all --baseline-nccl-env NCCL_IB_DISABLE=1";
  gs.family = Family::GradientSync;
  gs.size = SizeMeaning::WholeModel;
  gs.busbw = BusBw::TwiceRanksMinusOne;
  gs.columns = {"case",  "topology", "model",      "ngpus",      "buckets", "bucket_bytes",
                "bytes", "time_us",  "algbw_gbps", "busbw_gbps", "speedup"};
  gs.flags = {{"--model", Kind::Text, "Model whose gradients are reduced", "", true, Side::Simulate, {}},
              {"--gpus", Kind::Text, "Data-parallel GPUs: 0-15, all", "all", false, Side::Simulate, {}},
              {"--bucket-bytes",
               Kind::Text,
               "Gradient bucket size (DDP's default 25MiB)",
               "",
               false,
               Side::Simulate,
               {}},
              {"--baseline-topology",
               Kind::Text,
               "Also run on this fabric (e.g. the TCP what-if) and report the speedup",
               "",
               false,
               Side::Simulate,
               {}},
              {"--baseline-nccl-env",
               Kind::TextList,
               "Also run with these extra NCCL knobs (e.g. NCCL_IB_DISABLE=1: TCP\nsockets over the same "
               "NICs) and report "
               "the speedup",
               "",
               false,
               Side::Simulate,
               {}}};
  out.push_back(gs);
  return out;
}

}  // namespace

WorkloadArgs WorkloadArgs::defaults(const WorkloadSpec& spec, Side side) {
  WorkloadArgs a;
  for (const FlagSpec& f : spec.flags) {
    if (f.side != Side::Both && f.side != side) continue;
    switch (f.kind) {
      case Kind::Int:
        a.ints[f.name] = f.default_value.empty() ? 0 : std::stoi(f.default_value);
        break;
      case Kind::Number:
        a.numbers[f.name] = f.default_value.empty() ? 0.0 : std::stod(f.default_value);
        break;
      case Kind::Text:
        a.text[f.name] = f.default_value;
        break;
      case Kind::TextList:
        a.lists[f.name] = f.default_value.empty() ? std::vector<std::string>{} : split_list(f.default_value);
        break;
      case Kind::IntList:
        a.int_lists[f.name] = {};
        if (f.default_value.empty()) break;
        for (const std::string& v : split_list(f.default_value)) a.int_lists[f.name].push_back(std::stoi(v));
        break;
    }
  }
  return a;
}

const std::string& WorkloadArgs::str(std::string_view flag) const {
  static const std::string none;
  const auto it = text.find(flag);
  return it == text.end() ? none : it->second;
}

int WorkloadArgs::integer(std::string_view flag) const {
  const auto it = ints.find(flag);
  return it == ints.end() ? 0 : it->second;
}

double WorkloadArgs::number(std::string_view flag) const {
  const auto it = numbers.find(flag);
  return it == numbers.end() ? 0.0 : it->second;
}

const std::vector<std::string>& WorkloadArgs::list(std::string_view flag) const {
  static const std::vector<std::string> none;
  const auto it = lists.find(flag);
  return it == lists.end() ? none : it->second;
}

const std::vector<int>& WorkloadArgs::int_list(std::string_view flag) const {
  static const std::vector<int> none;
  const auto it = int_lists.find(flag);
  return it == int_lists.end() ? none : it->second;
}

double WorkloadSpec::busbw_factor(int ranks) const {
  const double n = ranks;
  switch (busbw) {
    case BusBw::One:
      return 1.0;
    case BusBw::RanksMinusOne:
      return (n - 1) / n;
    case BusBw::TwiceRanksMinusOne:
      return 2 * (n - 1) / n;
  }
  return 1.0;
}

const std::vector<WorkloadSpec>& registry() {
  static const std::vector<WorkloadSpec> all = build();
  return all;
}

const WorkloadSpec* lookup_workload(std::string_view name) {
  for (const WorkloadSpec& w : registry()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

const std::vector<const WorkloadSpec*>& measured_workloads() {
  static const std::vector<const WorkloadSpec*> measured = [] {
    std::vector<const WorkloadSpec*> out;
    for (const WorkloadSpec& w : registry()) {
      if (w.measured) out.push_back(&w);
    }
    std::stable_sort(out.begin(), out.end(), [](const WorkloadSpec* a, const WorkloadSpec* b) {
      return a->measure_order < b->measure_order;
    });
    return out;
  }();
  return measured;
}

const WorkloadSpec& find_workload(std::string_view name) {
  if (const WorkloadSpec* w = lookup_workload(name)) return *w;
  throw UsageError("unknown workload '" + std::string(name) +
                   "'; valid workloads: " + workload_names([](const WorkloadSpec&) { return true; }));
}

}  // namespace commsim::workloads
