// What every simulating subcommand loads first: NCCL knobs, parameter set, cost model and topology.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "commsim/core/output_guard.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/topology.hpp"

namespace commsim::cli {

/// Loaded in order (knobs, parameters, model, topology) so the first bad input is the one reported;
/// topology warnings go to stderr. Without `params`, a topology whose GPUs all have a fitted set
/// (models::ModelParams::fitted_for_gpu) gets that set, else the unfitted defaults; `params_note` says which.
/// Members are stable: `model` may be handed to a Runtime.
struct SimSetup {
  models::NcclEnv env;
  models::ModelParams params;
  std::unique_ptr<models::TransferModel> model;
  topo::Topology topology;
  std::string params_note;  ///< which parameter set, where it was fitted, and why it was chosen
  /// params.band was widened to the datasheet band: a fit inside one machine on a topology with a network.
  bool band_widened = false;
};
/// The kind of band a setup's rows carry, as the JSON outputs name it: "datasheet" (no fitted set), "fitted",
/// or "fitted, widened" (SimSetup::band_widened).
const char* band_kind(const models::ModelParams& params, bool widened);

std::unique_ptr<SimSetup> load_setup(const std::string& topology, const std::string& gpu,
                                     const std::string& params, const std::string& cost_model,
                                     const std::vector<std::string>& nccl_env);

/// Where the setup flags land (nullptr: the command has no such flag).
struct SetupFlagTargets {
  std::string* topology = nullptr;
  std::string* gpu = nullptr;
  std::string* params = nullptr;
  std::string* cost_model = nullptr;
  std::vector<std::string>* nccl_env = nullptr;
};
/// What the setup describes: a machine to simulate (knobs are what-ifs) or the machine a measurement ran on.
enum class SetupRole { WhatIf, Measured };
/// Declares --topology (required), --gpu, --params, --cost-model and --nccl-env on `app`, once for every
/// command.
void add_setup_flags(CLI::App* app, const SetupFlagTargets& to, SetupRole role);

/// Adds the topology file `path` (given by `flag`) to `guard` as an input, with the `nvidia-smi nvlink -s`
/// capture the loader reads beside it when there is one (NAME.nvlink, or nvlink.txt beside topo.txt).
void guard_topology(OutputGuard& guard, const std::string& flag, const std::string& path);

}  // namespace commsim::cli
