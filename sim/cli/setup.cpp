// Loading the inputs every simulating subcommand needs.
#include "setup.hpp"

#include <iostream>

#include "commsim/topo/load.hpp"

namespace commsim::cli {

std::unique_ptr<SimSetup> load_setup(const std::string& topology, const std::string& gpu,
                                     const std::string& params, const std::string& cost_model,
                                     const std::vector<std::string>& nccl_env) {
  auto s = std::make_unique<SimSetup>();
  s->env = models::NcclEnv::parse(nccl_env);
  s->params = params.empty() ? models::ModelParams::defaults() : models::ModelParams::load(params);
  s->model = models::make_transfer_model(cost_model, s->params, s->env);
  topo::Diagnostics diag;
  s->topology = topo::load_topology(topology, {gpu, ""}, diag);
  for (const auto& w : diag.warnings()) std::cerr << "commsim: warning: " << w << "\n";
  if (!params.empty()) {
    s->params_note = "parameters " + s->params.provenance() + ", from --params";
    return s;
  }
  std::string model = s->topology.gpus.empty() ? "" : s->topology.gpus.front().model;
  for (const auto& g : s->topology.gpus) {
    if (g.model != model) model.clear();  // mixed GPUs: no single fitted set applies
  }
  if (const models::ModelParams* fitted = models::ModelParams::fitted_for_gpu(model)) {
    s->params = *fitted;
    s->model = models::make_transfer_model(cost_model, s->params, s->env);
    s->params_note = "parameters " + s->params.provenance() + ", the fitted set for " + model +
                     " (default for this GPU; --params overrides)";
  } else {
    s->params_note = "parameters " + s->params.provenance() + ": no fitted set for " +
                     (model.empty() ? std::string("these GPUs") : model) +
                     ", so the band is the wider datasheet band";
  }
  return s;
}

}  // namespace commsim::cli
