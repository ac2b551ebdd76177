// Loading the inputs every simulating subcommand needs.
#include "setup.hpp"

#include <filesystem>
#include <iostream>

#include "commsim/models/nccl_env.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/load.hpp"

namespace commsim::cli {

std::unique_ptr<SimSetup> load_setup(const std::string& topology, const std::string& gpu,
                                     const std::string& params, const std::string& cost_model,
                                     const std::vector<std::string>& nccl_env) {
  models::NcclEnv env = models::NcclEnv::parse(nccl_env);
  models::ModelParams set =
      params.empty() ? models::ModelParams::defaults() : models::ModelParams::load(params);
  auto transfer = models::make_transfer_model(cost_model, set, env);
  topo::Diagnostics diag;
  // The topology is built in place: assigning one copies its graph (boost's adjacency_list has no move
  // assignment), 25 MB and a tenth of the set-up for the 16,384-GPU cluster.
  std::unique_ptr<SimSetup> s(new SimSetup{std::move(env), std::move(set), std::move(transfer),
                                           topo::load_topology(topology, {gpu, ""}, diag), ""});
  for (const auto& w : diag.warnings()) std::cerr << "commsim: warning: " << w << "\n";
  const std::string model = s->topology.gpu_model();  // mixed GPUs: none, so no single fitted set applies
  if (!params.empty()) {
    s->params_note = "parameters " + s->params.provenance() + ", from --params";
    // A set fitted for another GPU model: its band was measured there, not on these GPUs.
    if (!s->params.gpu.empty() && s->params.gpu != model) {
      s->params_note += "; it was fitted for " + s->params.gpu + " and these GPUs are " +
                        (model.empty() ? std::string("of several models") : model) +
                        ", so its band says how far to trust it there, not here";
      std::cerr << "commsim: warning: --params " << params << " was fitted for " << s->params.gpu
                << ", the topology's GPUs are " << (model.empty() ? std::string("of several models") : model)
                << "\n";
    }
  } else if (const models::ModelParams* fitted = models::ModelParams::fitted_for_gpu(model)) {
    s->params = *fitted;
    s->model = models::make_transfer_model(cost_model, s->params, s->env);
    s->params_note = "parameters " + s->params.provenance() + ", the fitted set for " + model +
                     " (default for this GPU; --params overrides)";
  } else {
    s->params_note = "parameters " + s->params.provenance() + ": no fitted set for " +
                     (model.empty() ? std::string("these GPUs") : model) +
                     ", so the band is the wider datasheet band";
  }
  // A fit inside one machine says nothing about the network between machines: the band widens to the
  // datasheet's where that is wider.
  if (const models::BandParams across = models::network_band(s->params);
      s->topology.fabric && across != s->params.band) {
    s->params.band = across;
    s->band_widened = true;
    s->params_note += std::string("; its fit had no transfer over a network, so across this topology's ") +
                      topo::kind_name(s->topology.fabric->kind) +
                      " the band is widened to the datasheet band where that is wider (every row)";
  }
  return s;
}

const char* band_kind(const models::ModelParams& params, bool widened) {
  return params.fitted.empty() ? "datasheet" : widened ? "fitted, widened" : "fitted";
}

void guard_topology(OutputGuard& guard, const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  guard.input(flag, path);
  // The files the loader reads besides it: the nvlink capture beside a matrix, and every topo_file and
  // nvlink_file a what-if TOML names.
  for (const topo::TopologyInput& in : topo::topology_inputs(path))
    guard.input(flag + " (" + in.what + ")", in.path);
}

void add_setup_flags(CLI::App* app, const SetupFlagTargets& to, SetupRole role) {
  const bool what_if = role == SetupRole::WhatIf;
  if (to.topology) {
    app->add_option("--topology", *to.topology,
                    what_if ? "Topology: `nvidia-smi topo -m` output or a what-if .toml"
                            : "Topology of the measured machine")
        ->required();
  }
  if (to.gpu) {
    app->add_option("--gpu", *to.gpu,
                    what_if ? "GPU generation (`commsim topo gpus`); default: what the topology says"
                            : "GPU generation, as for simulate");
  }
  if (to.params) {
    app->add_option(
        "--params", *to.params,
        what_if ? "Parameter set (TOML) over the defaults, e.g. models/params/h200.toml;\ndefault: the "
                  "fitted set of the topology's GPU model where there is one\n(models/params/h200.toml "
                  "for H200s), else models/params/nccl-default.toml"
                : "Parameter set (TOML) over the defaults");
  }
  if (to.cost_model) {
    std::string models_help = "Cost (transfer) model:";
    for (const auto& m : models::transfer_models())
      models_help += "\n  " + std::string(m.name) + ": " + std::string(m.description);
    app->add_option("--cost-model", *to.cost_model,
                    what_if ? models_help : "Cost (transfer) model (see `commsim simulate p2p --help`)")
        ->capture_default_str();
  }
  if (to.nccl_env) {
    app->add_option("--nccl-env", *to.nccl_env,
                    what_if ? "NCCL knob as a what-if, repeatable: KEY=VALUE, e.g. NCCL_PROTO=Simple,\n"
                              "NCCL_P2P_DISABLE=1, NCCL_BUFFSIZE=8MiB. Known: " +
                                  models::NcclEnv::known_keys()
                            : "NCCL knobs the measurement ran with, KEY=VALUE, repeatable")
        ->allow_extra_args(false);
  }
}

}  // namespace commsim::cli
