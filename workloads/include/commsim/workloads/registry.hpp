// The workload registry: what each workload is (name, flags, sizes, busbw, result columns), shared by the
// simulator and commsim-measure, so that both tools look workloads up by name and list none by hand.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace commsim::workloads {

/// How a workload's GPUs and sizes are chosen; the tools plan and join rows by family, never by name.
enum class Family {
  PointToPoint,  ///< one send between --src and --dst, or every directed pair (--pairs all)
  Ring,          ///< grouped sends and receives over --gpus in rank order (sendrecv, alltoall, alltoallv)
  Pair,          ///< two GPUs (--pair) exchanging in a --mode
  Collective,    ///< one NCCL collective over --gpus (rooted ones take --root)
  Pipeline,      ///< Megatron pipeline steps over stages
  ModelPush,     ///< a model's weights pushed from trainers to rollout GPUs
  GradientSync,  ///< a model's gradients all-reduced in buckets
};

/// What the size of a row means.
enum class SizeMeaning {
  PerRank,        ///< nccl-tests' size column: each rank's send buffer (all_gather: the gathered output)
  PerMicrobatch,  ///< activation bytes per microbatch, sent forward and (as gradients) back
  WholeModel,     ///< the model's bytes (sizes come from the model spec, not a sweep)
};

/// nccl-tests' bus bandwidth factor (busbw = algbw x factor over n ranks).
enum class BusBw {
  One,                ///< 1 (p2p, sendrecv, broadcast, reduce, pipeline)
  RanksMinusOne,      ///< (n-1)/n (all_gather, reduce_scatter, alltoall)
  TwiceRanksMinusOne  ///< 2(n-1)/n (all_reduce)
};

/// Which tool declares a flag (they differ only where issue #15 has not unified them yet).
enum class Side { Both, Simulate, Measure };

/// A workload-specific command-line flag, declared once here and added to both tools' subcommands.
struct FlagSpec {
  enum class Kind { Int, Number, Text, TextList, IntList };
  std::string name;  ///< "--src"
  Kind kind = Kind::Text;
  std::string help;
  std::string default_value;  ///< printed as the default in --help ("" for none)
  bool required = false;
  Side side = Side::Both;
  std::vector<std::string> choices;  ///< allowed values (empty: any)
  bool show_default = true;          ///< --help prints default_value (where there is one)
  char delimiter = 0;                ///< list kinds: each value is also split at this character (0: not)
  /// A time flag's documented unit ("us" for --fwd-us): the flag also takes a value with a duration unit
  /// ("1.5ms"), converted to this unit; a bare number is in it. Empty: not a time flag.
  std::string time_unit{};
};

/// One workload. Each has one file on the simulator side (workloads/sim/<stem>.cpp: builds the program)
/// and, where `measured`, one on the measure side (workloads/measure/<stem>.cpp: issues the NCCL calls),
/// registered under this name (the stem is the name with '-' written '_').
struct WorkloadSpec {
  std::string name;     ///< "all_reduce", as nccl-tests names it (<name>_perf)
  std::string summary;  ///< one line (with \n breaks) for --help
  std::string example;  ///< flags for the EXAMPLE line of `commsim simulate <name> --help`
  Family family = Family::Ring;
  SizeMeaning size = SizeMeaning::PerRank;
  BusBw busbw = BusBw::One;
  bool rooted = false;               ///< takes --root (broadcast, reduce)
  bool measured = false;             ///< commsim-measure runs it (its twin in workloads/measure/)
  int measure_order = 0;             ///< where commsim-measure lists it among the measured (ascending)
  std::vector<std::string> columns;  ///< the result columns `commsim simulate` prints, in order
  std::vector<FlagSpec> flags;       ///< workload-specific flags (the setup flags are common to all)

  /// busbw / algbw over `ranks` GPUs.
  double busbw_factor(int ranks) const;
};

/// The values of a workload's own flags (WorkloadSpec::flags), by flag name ("--src").
struct WorkloadArgs {
  std::map<std::string, std::string, std::less<>> text;
  std::map<std::string, int, std::less<>> ints;
  std::map<std::string, double, std::less<>> numbers;
  std::map<std::string, std::vector<std::string>, std::less<>> lists;
  std::map<std::string, std::vector<int>, std::less<>> int_lists;

  /// Every flag of `spec` declared for `side` (and for both tools) at its default value.
  static WorkloadArgs defaults(const WorkloadSpec& spec, Side side);
  /// The value of a flag; "" / 0 / empty when the workload has no such flag.
  const std::string& str(std::string_view flag) const;
  int integer(std::string_view flag) const;
  double number(std::string_view flag) const;
  const std::vector<std::string>& list(std::string_view flag) const;
  const std::vector<int>& int_list(std::string_view flag) const;
};

/// Every workload, in the order help texts list them.
const std::vector<WorkloadSpec>& registry();
/// The workload called `name`; UsageError listing the valid names otherwise.
const WorkloadSpec& find_workload(std::string_view name);
/// nullptr when no workload is called `name`.
const WorkloadSpec* lookup_workload(std::string_view name);
/// The workloads commsim-measure runs (`measured`), in its order (WorkloadSpec::measure_order).
const std::vector<const WorkloadSpec*>& measured_workloads();
/// "p2p, sendrecv, ...": the names of the workloads that satisfy `pred`, for messages.
template <typename Pred>
std::string workload_names(Pred pred) {
  std::string out;
  for (const WorkloadSpec& w : registry()) {
    if (pred(w)) out += (out.empty() ? "" : ", ") + w.name;
  }
  return out;
}

}  // namespace commsim::workloads
