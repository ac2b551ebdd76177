// `commsim calibrate`: fit transfer-model parameters to commsim-measure data and write a parameter file.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/params.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/calibrate.hpp"
#include "commsim/validation/crossval.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

struct CalibrateCliOptions {
  validation::CalibrateOptions fit;
  std::string topology;
  std::string gpu;
  std::string start;
  std::string out;
  std::string name;
  std::vector<std::string> nccl_env;
  bool fit_given = false;
  bool band_only = false;
  bool allow_degenerate = false;
  std::string loss = "squared";
};

void print_rows(const char* what, const std::vector<validation::Comparison>& rows) {
  for (const auto& [label, cs] : validation::group_by_label(rows)) {
    const auto s = validation::stats(cs);
    std::printf("  %-9s %-36s %4d sizes  MAPE %5.1f%%  worst %5.1f%%\n", what, label.c_str(), s.count, s.mape,
                s.worst);
  }
}

void run_calibrate(const CalibrateCliOptions& o) {
  OutputGuard guard;
  guard_topology(guard, "--topology", o.topology);
  guard.input("--start", o.start);
  guard.input("--gpu-map", o.fit.gpu_map);
  guard.inputs("--nccl-tests", o.fit.nccl_tests);
  for (const auto& dir : o.fit.measured) guard.input_in("--measured", dir, {"results.json"});
  guard.inputs("--manifest", o.fit.manifests);
  for (const auto& m : o.fit.manifests) {
    for (const auto& e : validation::load_manifest(m))
      guard.input("--manifest " + m + " (a run it lists)", e.file);
  }
  guard.output("--out", o.out);
  guard.check();
  const models::ModelParams start =
      o.start.empty() ? models::ModelParams::defaults() : models::ModelParams::load(o.start);
  topo::Diagnostics diag;
  const topo::Topology t = topo::load_topology(o.topology, {o.gpu, ""}, diag);
  for (const auto& w : diag.warnings()) std::cerr << "commsim: warning: " << w << "\n";
  if (o.band_only && o.fit.manifests.empty()) throw UsageError("--band-only needs --manifest CSV...");
  validation::CalibrateResult r;
  validation::CalibrateOptions used = o.fit;
  if (o.fit.manifests.empty()) {
    r = validation::calibrate(t, start, models::NcclEnv::parse(o.nccl_env), o.fit);
  } else {
    if (!o.fit.measured.empty() || !o.fit.nccl_tests.empty() || !o.nccl_env.empty())
      throw UsageError(
          "--manifest lists every run with its knobs: drop --measured, --nccl-tests and --nccl-env");
    const auto data = validation::load_manifest_data(o.fit.manifests, t, start);
    for (const auto& w : data.warnings) std::cerr << "commsim: warning: " << w << "\n";
    if (!o.fit_given) used.workloads.clear();  // a manifest's rows are all fitted unless --fit says otherwise
    if (o.band_only) {
      if (!o.fit.parameters.empty()) throw UsageError("--band-only fits no parameters: drop --param");
      r = validation::manifest_band(data, t, start);
    } else {
      r = validation::calibrate_manifest(data, t, start, used);
    }
  }

  std::printf(
      "commsim calibrate: %zu sizes fitted, %zu held out; %d iterations, %d simulations of the data\n",
      r.fitted_rows.size(), r.held_out_rows.size(), r.iterations, r.evaluations);
  std::printf("cost (%s of the weighted relative errors) %.4g -> %.4g; Jacobian condition number %.3g\n\n",
              o.fit.loss == validation::FitLoss::SoftL1 ? "soft-L1 loss" : "sum of squares", r.start_cost,
              r.cost, r.condition);
  std::printf("  %-26s %12s %12s %12s\n", "parameter", "start", "fitted", "std. error");
  for (const auto& v : r.values) {
    std::printf("  %-26s %12.4g %12.4g %12.2g %s%s\n", v.parameter.name.c_str(), v.start, v.value,
                v.std_error, v.parameter.unit.c_str(), v.at_bound ? "  (at its bound: widen or fix it)" : "");
  }
  std::printf("\nResiduals with the fitted values:\n");
  print_rows("fitted", r.fitted_rows);
  print_rows("held-out", r.held_out_rows);
  if (o.band_only) {
    std::printf("\nMAPE %.1f%% of %s on these rows (no fit: its values are unchanged)\n",
                validation::stats(r.fitted_rows).mape, start.name.c_str());
  } else {
    std::printf("\nMAPE %.1f%% fitted (on the data the parameters were fitted to)\n",
                validation::stats(r.fitted_rows).mape);
  }
  if (r.band_fitted) {
    const auto& b = r.params.band;
    std::printf(
        "band: -%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB; coverage on these rows %.1f%%\n",
        100 * b.latency_below, 100 * b.latency_above, 100 * b.bandwidth_below, 100 * b.bandwidth_above,
        validation::stats(r.fitted_rows).coverage);
  }
  if (!r.band_widened.empty())
    std::printf(
        "band kept at the start set's where it is wider (%s): %s was fitted on more configurations "
        "than these rows show\n",
        r.band_widened.c_str(), start.name.c_str());
  if (!r.band_kept.empty())
    std::cerr << "commsim: warning: the band " << r.band_kept
              << " is the start set's: no configuration there "
              << "was measured more than once, so the runs' spread is unknown\n";
  if (!r.held_out_rows.empty())
    std::printf("MAPE %.1f%% held-out\n", validation::stats(r.held_out_rows).mape);
  if (r.degenerate && !o.allow_degenerate) {
    throw ValueError("degenerate fit, " + o.out + " not written: " + r.why_degenerate +
                     ". Fit fewer parameters (--param), or add data that separates them.");
  }
  if (r.degenerate)
    std::cerr << "commsim: warning: degenerate fit written (--allow-degenerate): " << r.why_degenerate
              << "\n";
  const std::string name = o.name.empty() ? o.out.substr(o.out.find_last_of('/') + 1,
                                                         o.out.rfind(".toml") - o.out.find_last_of('/') - 1)
                                          : o.name;
  write_file_atomic(o.out, validation::fitted_params_toml(r, o.start, name, used, o.out));
  std::printf("wrote %s\n", o.out.c_str());
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateCliOptions>();
  CLI::App* c = app.add_subcommand(
      "calibrate", "Fit transfer-model parameters to commsim-measure data and write a parameter file");
  c->add_option("--measured", o->fit.measured, "commsim-measure output directories");
  c->add_option("--nccl-tests", o->fit.nccl_tests, "nccl-tests logs (their op is the workload name)");
  c->add_option("--gpu-map", o->fit.gpu_map, "index,pci.bus_id CSV mapping the logs' devices to GPUs");
  c->add_option(
       "--out", o->out,
       "Parameter file to write (TOML); not written when the fit is degenerate\n(see --allow-degenerate)")
      ->required();
  add_setup_flags(c, {&o->topology, &o->gpu, nullptr, nullptr, &o->nccl_env}, SetupRole::Measured);
  c->add_option(
      "--start", o->start,
      "Parameter set to start from; its other keys are copied to --out\n(default: the NCCL defaults). "
      "Every fit also writes [band] from its residuals,\nthe measured spread and its standard errors; from a "
      "fitted set, each side\nat least as wide as that set's");
  c->add_option("--manifest", o->fit.manifests,
                "manifest.csv files listing nccl-tests runs with their launch and knobs");
  c->add_flag(
      "--band-only", o->band_only,
      "With --manifest: keep --start's values and compute only its [band] from\nits residuals and the "
      "measured spread on the manifest data");
  c->add_option(
       "--fit", o->fit.workloads,
       "Rows fitted: a workload, or a configuration as validate labels it\n('p2p 0->1', 'exchange gpus 0,1 "
       "batched'), either optionally followed by\n' >=SIZE' (only sizes from SIZE). Every other row is held "
       "out and only\nvalidated")
      ->capture_default_str();
  c->add_option("--param", o->fit.parameters,
                "Parameters to fit, as section.key (repeatable). Default: those a p2p\nsweep pins down");
  c->add_option("--name", o->name, "name = in the written file (default: --out's file name)");
  c->add_option("--max-iterations", o->fit.max_iterations, "Levenberg-Marquardt iterations")
      ->capture_default_str();
  c->add_option("--loss", o->loss,
                "What the fit minimises: squared (least squares) or soft-l1 (squares up to\n--loss-scale "
                "sigmas, linear beyond)")
      ->capture_default_str();
  c->add_option("--loss-scale", o->fit.loss_scale,
                "soft-l1: the weighted residual, in sigmas, from which the loss grows linearly")
      ->capture_default_str();
  c->add_option("--jobs", o->fit.jobs,
                "Threads that evaluate the fit's Jacobian (default: every hardware thread); the\nfit is "
                "the same for any count")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--allow-degenerate", o->allow_degenerate,
              "Write --out even when the fit is degenerate (the file says so): values\nthat trade off are "
              "one of many equally good choices");
  c->footer(R"(
METHOD
  Weighted least squares on relative error: each size's residual is (predicted - measured) / measured divided
  by the assumed measurement error (2% from 1 MiB, 8% below). --loss soft-l1 minimises a soft L1 loss of
  those residuals instead (squares up to --loss-scale sigmas, linear beyond), so sizes measured in a host's
  slow mode pull the fit less; standard errors are still least squares' at the optimum. Levenberg-Marquardt over the parameters scaled
  to their bounds, with a forward-difference Jacobian; every evaluation simulates the fitted rows exactly as
  `commsim validate` does. Standard errors come from the Jacobian at the optimum and the residual variance.
  A fit is degenerate, and nothing is written (unless --allow-degenerate), when the Jacobian is nearly
  rank-deficient or a parameter's standard error exceeds half its value.

EXAMPLE
  commsim calibrate --topology topologies/library/real/h200x4.topo --start models/params/h200.toml \
    --measured validation/data/h200x4/measure/p2p_all validation/data/h200x4/measure/sendrecv_g2 \
    --out /tmp/h200-refit.toml)");
  c->callback([o, c] {
    o->fit_given = c->count("--fit") > 0;
    o->fit.loss = validation::parse_fit_loss(o->loss);
    run_calibrate(*o);
  });
}

}  // namespace commsim::cli
