// Workloads (p2p, sendrecv, exchange): build runtime programs and sweep them over sizes into result tables.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/core/args.hpp"
#include "commsim/sim/runtime.hpp"

namespace commsim::sim {

/// How many machines the GPUs live on (more than one: no host thread can drive them all, so NCCL runs one
/// process per GPU, as under mpirun).
std::size_t machine_count(const topo::Topology& topology, const std::vector<int>& gpus);

enum class ExchangeMode { Sequential, Overlapped, Batched };
ExchangeMode parse_exchange_mode(std::string_view name);
const char* exchange_mode_name(ExchangeMode m);

/// A send of `bytes` to GPU `peer` / a receive from it, as one operation of a send/recv kernel.
OpSpec send(int peer, std::uint64_t bytes);
OpSpec recv(int peer, std::uint64_t bytes);
/// One kernel per rank of one communicator over `gpus`, launched as one ncclGroup from a single host thread
/// (nccl-tests -g N), or one launch per rank from its own thread (`thread_per_gpu`).
Program grouped_program(const std::vector<int>& gpus, std::vector<KernelSpec> kernels, bool thread_per_gpu);

/// One unidirectional send from `src` to `dst`; each GPU is driven by its own host thread.
Program p2p_program(int src, int dst, std::uint64_t bytes);
/// nccl-tests sendrecv_perf: every rank sends to the next and receives from the previous in one group. By
/// default one host thread drives all GPUs (nccl-tests -g N); `thread_per_gpu` gives each GPU its own thread
/// (commsim-measure's default).
Program sendrecv_program(const std::vector<int>& gpus, std::uint64_t bytes, bool thread_per_gpu = false);
/// nccl-tests alltoall_perf as grouped send/recv: every rank sends bytes / n to every other rank and receives
/// as much from each, in one group (the block to itself is a local copy and is not modelled).
Program alltoall_program(const std::vector<int>& gpus, std::uint64_t bytes, bool thread_per_gpu = false);
/// A bidirectional exchange of `bytes` each way between a and b, one host thread per GPU:
/// sequential: one stream and communicator, a sends then receives while b receives then sends;
/// overlapped: the send and the receive on separate communicators and streams, concurrently;
/// batched: both in one ncclGroupStart/End (one kernel per GPU).
Program exchange_program(int a, int b, ExchangeMode mode, std::uint64_t bytes);

/// A result table: named columns, rows of numbers or text.
struct ResultTable {
  using Cell = std::variant<std::int64_t, double, std::string>;
  std::vector<std::string> columns;
  std::vector<std::string> units;  ///< per column, for the table format ("" for none)
  std::vector<std::vector<Cell>> rows;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<std::string> notes;  ///< printed as "# " lines above the table (never in the CSV: csv_meta)
  /// Per row, the part of time_us (us) the prediction band leaves out because it is given, not predicted
  /// (a pipeline step's compute bound); empty: the band covers all of time_us. Not printed.
  std::vector<double> band_exact_us;
  /// Per row, true when time_us is a constant the parameter set gives ([setup]: a communicator's init, an
  /// engine's start), not a prediction: such a row has no band (empty cells; null in JSON; "-" in the table).
  /// Empty: every row is predicted. Not printed.
  std::vector<bool> unbanded;

  /// RFC 4180 CSV at round-trip precision: the header, then the rows; no comment lines.
  std::string to_csv() const;
  /// What the CSV leaves out, for its sidecar (schema "commsim.results_meta/2"): metadata, columns, units,
  /// notes.
  nlohmann::json csv_meta() const;
  std::string to_table() const;
  /// The metadata, "columns", "units" (column -> unit, for the columns that have one) and "rows" (one object
  /// per row), tagged "commsim.results/2" (validation/schema/results.schema.json).
  nlohmann::json to_json() const;
};

}  // namespace commsim::sim
