// `commsim validate`: join measured results with predictions and print the error, per configuration and
// regime.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "commands.hpp"
#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/crossval.hpp"
#include "commsim/validation/nccl_tests.hpp"
#include "commsim/validation/report.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> nccl_tests;
  std::vector<std::string> measured;
  std::vector<std::string> torch;
  std::vector<std::string> manifests;
  bool cross_validate = false;
  std::vector<std::string> families;
  std::vector<std::string> parameters;
  std::vector<std::string> probe;         ///< --cross-validate: probed-start's probe configurations
  std::vector<std::string> probe_params;  ///< and the parameters refitted on them
  std::vector<std::string> start_params;  ///< refitted per machine start on its training rows
  int start_rounds = 0;          ///< times the shared parameters are refitted under each start's own refit
  std::string loss = "squared";  ///< --cross-validate: what each fold's fit minimises
  double loss_scale =
      validation::kDefaultLossScale;  ///< and, for soft-l1, from how many sigmas it grows linearly
  int jobs = 0;  ///< --cross-validate: threads for each fit's Jacobian (0: every hardware thread)
  std::string json;
  std::string band = "cross-validated";  ///< --cross-validate: where a fold's band takes its model error
  std::string band_out;                  ///< --cross-validate: write --band-set with the pooled held-out band
  std::string band_set;                  ///< the set --band-out copies (default: --params)
  std::string topology;
  std::string gpu;
  std::string params;
  std::string model = "nccl";
  std::vector<std::string> nccl_env;
  std::string gpu_map;
  std::string csv;
  std::string report;
  std::string markdown;
  std::string fit_note;
  bool per_size = false;
};

/// The command line that regenerates a report, rebuilt from the options (report paths included), every
/// value shell-quoted so that pasting it runs exactly this command.
std::string validate_command_line(const ValidateOptions& o) {
  std::string cmd = "commsim validate --topology " + shell_quote(o.topology);
  auto add = [&](const char* flag, const std::string& v) {
    if (!v.empty()) cmd += std::string(" ") + flag + " " + shell_quote(v);
  };
  add("--gpu", o.gpu);
  add("--params", o.params);
  if (o.model != "nccl") add("--cost-model", o.model);
  for (const auto& e : o.nccl_env) add("--nccl-env", e);
  add("--gpu-map", o.gpu_map);
  add("--fit-note", o.fit_note);
  if (!o.nccl_tests.empty()) cmd += " --nccl-tests";
  for (const auto& f : o.nccl_tests) cmd += " " + shell_quote(f);
  if (!o.measured.empty()) cmd += " --measured";
  for (const auto& d : o.measured) cmd += " " + shell_quote(d);
  if (!o.torch.empty()) cmd += " --torch";
  for (const auto& f : o.torch) cmd += " " + shell_quote(f);
  if (!o.manifests.empty()) cmd += " --manifest";
  for (const auto& f : o.manifests) cmd += " " + shell_quote(f);
  if (o.cross_validate) cmd += " --cross-validate";
  for (const auto& f : o.families) add("--family", f);
  for (const auto& p : o.parameters) add("--param", p);
  for (const auto& p : o.probe) add("--probe", p);
  for (const auto& p : o.probe_params) add("--probe-param", p);
  for (const auto& p : o.start_params) add("--start-param", p);
  if (o.start_rounds != 0) add("--start-rounds", std::to_string(o.start_rounds));
  if (o.loss != "squared") {
    add("--loss", o.loss);
    if (o.loss_scale != validation::kDefaultLossScale) add("--loss-scale", std::to_string(o.loss_scale));
  }
  if (o.band != "cross-validated") add("--band", o.band);
  add("--band-set", o.band_set);
  add("--band-out", o.band_out);
  add("--json", o.json);
  add("--csv", o.csv);
  add("--report", o.report);
  add("--markdown", o.markdown);
  return cmd;
}

/// --cross-validate: leave-one-family-out over the manifests' rows; text on stdout, Markdown and JSON files.
void run_cross_validation(const ValidateOptions& o, const SimSetup& setup,
                          const validation::ManifestData& data) {
  if (!o.nccl_tests.empty() || !o.measured.empty() || !o.torch.empty())
    throw UsageError("--cross-validate reads only --manifest data (list the runs in a manifest)");
  if (!o.nccl_env.empty())
    throw UsageError("--cross-validate takes each run's NCCL knobs from its manifest's nccl_env column");
  std::vector<validation::Family> families;
  for (const auto& f : o.families) families.push_back(validation::parse_family(f));
  if (families.empty()) {
    families = validation::all_families();
    if (!o.probe.empty()) families.push_back(validation::Family::ProbedStart);
  }
  validation::CalibrateOptions fit;
  fit.parameters = o.parameters;
  fit.probe = o.probe;
  fit.probe_parameters = o.probe_params;
  fit.start_parameters = o.start_params;
  fit.start_rounds = o.start_rounds;
  fit.loss = validation::parse_fit_loss(o.loss);
  fit.loss_scale = o.loss_scale;
  fit.jobs = o.jobs;
  fit.cross_validated_band = o.band == "cross-validated";
  const auto cv = validation::cross_validate(data, setup.topology, setup.params, families, fit);
  std::printf(
      "commsim validate --cross-validate: %zu manifest(s), %zu machine start(s), parameters start from %s\n",
      data.manifests.size(), data.starts.size(), setup.params.provenance().c_str());
  std::printf("%s", validation::cross_validation_text(cv).c_str());
  const std::string cmd = validate_command_line(o);
  if (!o.markdown.empty()) write_file_atomic(o.markdown, validation::cross_validation_markdown(cv, cmd));
  if (!o.json.empty()) write_file_atomic(o.json, validation::cross_validation_json(cv, cmd).dump(2) + "\n");
  if (!o.csv.empty()) write_file_atomic(o.csv, validation::cross_validation_csv(cv));
  if (!o.band_out.empty()) {
    const std::string set = o.band_set.empty() ? o.params : o.band_set;
    const models::BandParams band = validation::cross_validated_band(cv, data, setup.params.band);
    std::size_t held = 0;
    for (const auto& fold : cv.folds) held += fold.held_out.size();
    char values[200];
    std::snprintf(
        values, sizeof values,
        "[band] from %zu held-out predictions: -%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB", held,
        100 * band.latency_below, 100 * band.latency_above, 100 * band.bandwidth_below,
        100 * band.bandwidth_above);
    write_file_atomic(
        o.band_out,
        validation::params_with_band_toml(
            set, band,
            {"Parameter set " + set +
                 " with the band cross-validation measured (commsim validate "
                 "--cross-validate --band-out).",
             values,
             "Each bound's band: the 90th percentile of |log(measured / predicted)| over every held-out "
             "prediction (a fit that never saw the row), the same factor below and above, and the 90th "
             "percentile of the runs' deviation below and above their median, in quadrature (log space).",
             "Reproduce: " + validate_command_line(o)},
            o.band_out));
    std::printf("\n%s; written with %s's values to %s\n", values, set.c_str(), o.band_out.c_str());
  }
}

/// Refuses, before any work, an output path that is one of the inputs (or another output).
void guard_validate_paths(const ValidateOptions& o) {
  OutputGuard guard;
  guard_topology(guard, "--topology", o.topology);
  guard.input("--params", o.params);
  guard.input("--gpu-map", o.gpu_map);
  guard.inputs("--nccl-tests", o.nccl_tests);
  for (const auto& dir : o.measured) guard.input_in("--measured", dir, {"results.json"});
  guard.inputs("--torch", o.torch);
  guard.inputs("--manifest", o.manifests);
  for (const auto& m : o.manifests) {
    for (const auto& e : validation::load_manifest(m))
      guard.input("--manifest " + m + " (a run it lists)", e.file);
  }
  guard.output("--csv", o.csv);
  guard.output("--report", o.report);
  guard.output("--markdown", o.markdown);
  guard.output("--json", o.json);
  guard.input("--band-set", o.band_set);
  guard.output("--band-out", o.band_out);
  guard.check();
}

void run_validate(const ValidateOptions& o) {
  guard_validate_paths(o);
  if (o.nccl_tests.empty() && o.measured.empty() && o.torch.empty() && o.manifests.empty())
    throw UsageError(
        "validate needs --measured DIR..., --nccl-tests FILE..., --torch FILE... or --manifest CSV...");
  if (o.cross_validate && o.manifests.empty()) throw UsageError("--cross-validate needs --manifest CSV...");
  if (!o.cross_validate && (!o.families.empty() || !o.parameters.empty() || !o.probe.empty() ||
                            !o.probe_params.empty() || !o.start_params.empty()))
    throw UsageError(
        "--family, --param, --probe, --probe-param and --start-param belong to --cross-validate");
  if (o.probe.empty() && !o.probe_params.empty()) throw UsageError("--probe-param needs --probe");
  if (o.start_rounds != 0 && o.start_params.empty())
    throw UsageError("--start-rounds needs --start-param (the parameters each start refits)");
  if (!o.cross_validate && (!o.band_out.empty() || !o.band_set.empty() || o.band != "cross-validated"))
    throw UsageError("--band, --band-out and --band-set belong to --cross-validate");
  if (!o.band_set.empty() && o.band_out.empty()) throw UsageError("--band-set needs --band-out FILE");
  if (!o.band_out.empty() && !o.start_params.empty())
    throw UsageError(
        "--band-out pools the held-out errors of a set whose host nobody calibrated; --start-param "
        "calibrates each start's host first, which would make that band too narrow: run --band-out without "
        "--start-param");
  if (!o.cross_validate && (o.loss != "squared" || o.loss_scale != validation::kDefaultLossScale))
    throw UsageError("--loss and --loss-scale belong to --cross-validate (validate alone fits nothing)");
  if (!o.cross_validate && o.jobs != 0)
    throw UsageError("--jobs belongs to --cross-validate (validate alone fits nothing)");
  validation::parse_fit_loss(o.loss);  // a bad name fails before any data is read
  if (!o.band_out.empty() && o.band_set.empty() && o.params.empty())
    throw UsageError("--band-out needs --band-set SET or --params SET: the set to write the band into");
  const auto setup = load_setup(o.topology, o.gpu, o.params, o.model, o.nccl_env);
  const models::NcclEnv& env = setup->env;
  const models::ModelParams& params = setup->params;
  validation::ManifestData manifest_data;
  if (!o.manifests.empty()) {
    manifest_data = validation::load_manifest_data(o.manifests, setup->topology, params);
    for (const auto& w : manifest_data.warnings) std::cerr << "commsim: warning: " << w << "\n";
  }
  if (o.cross_validate) return run_cross_validation(o, *setup, manifest_data);
  if (!o.manifests.empty() && !o.nccl_env.empty())
    throw UsageError("--manifest runs carry their own NCCL knobs (nccl_env column); drop --nccl-env");
  sim::Runtime rt(setup->topology, *setup->model);
  std::vector<validation::NcclTestsRun> runs;
  // Data from another NCCL than the set's (or, for the datasheet set, than the one commsim models): warned
  // about once per file, naming both.
  const auto warn_version = [&](const std::string& file, const std::string& ran) {
    if (const std::string w = validation::nccl_version_warning(ran, params.name, params.nccl_version);
        !w.empty())
      std::cerr << "commsim: warning: " << file << " " << w << "\n";
  };
  for (const auto& f : o.nccl_tests) {
    std::set<std::string> versions;
    for (auto& r : validation::parse_nccl_tests(read_file(f), f)) {
      if (versions.insert(r.nccl_version).second) warn_version(f, r.nccl_version);
      runs.push_back(std::move(r));
    }
  }
  const validation::GpuMap map =
      o.gpu_map.empty() ? validation::GpuMap{} : validation::GpuMap::from_csv(o.gpu_map);
  std::vector<validation::Comparison> rows;
  if (!runs.empty()) rows = validation::compare(runs, rt, map);
  std::vector<validation::MeasuredRun> measured;
  for (const auto& dir : o.measured) {
    measured.push_back(validation::load_measured(dir));
    if (const auto v = measured.back().doc.find("nccl_version");
        v != measured.back().doc.end() && v->is_number_integer())
      warn_version(measured.back().file, validation::nccl_version_text(v->get<long>()));
    auto more = validation::compare_measured(measured.back(), rt);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  for (const auto& f : o.torch) {
    auto more = validation::compare_torch(f, rt);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  if (!manifest_data.rows.empty()) {
    std::vector<std::size_t> all(manifest_data.rows.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    auto more = validation::predict_rows(manifest_data, all, setup->topology, params);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  validation::with_band(rows, params);

  std::printf(
      "commsim validate: %zu nccl-tests run(s), %zu commsim-measure dir(s), %zu PyTorch file(s), %zu sizes "
      "compared; model %s, parameters %s%s\n",
      runs.size(), o.measured.size(), o.torch.size(), rows.size(), o.model.c_str(),
      params.provenance().c_str(),
      env.settings.empty()
          ? ""
          : (", NCCL env " + env.settings.front() + (env.settings.size() > 1 ? " ..." : "")).c_str());
  for (const auto& [label, cs] : validation::group_by_label(rows)) {
    std::printf("\n%s (median of %d run(s) per size)\n", label.c_str(), cs.front().runs);
    if (o.per_size) {
      std::printf("  %12s %12s %12s %8s %8s\n", "bytes", "measured_us", "predicted_us", "error", "spread");
      for (const auto& c : cs) {
        std::printf("  %12llu %12.2f %12.2f %+7.1f%% %7.1f%%\n", static_cast<unsigned long long>(c.bytes),
                    c.measured_us, c.predicted_us, 100 * c.error(), 100 * c.spread);
      }
    }
    std::printf("  %-30s %6s %8s %10s %14s %9s %11s\n", "regime", "sizes", "MAPE", "worst", "meas. spread",
                "coverage", "band width");
    for (auto regime :
         {validation::Regime::Latency, validation::Regime::Transition, validation::Regime::Bandwidth}) {
      const auto sub = validation::in_regime(cs, regime);
      if (sub.empty()) continue;
      const auto s = validation::stats(sub);
      std::printf("  %-30s %6d %7.1f%% %9.1f%% %13.1f%% %8.1f%% %10.1f%%\n", validation::regime_name(regime),
                  s.count, s.mape, s.worst, s.spread, s.coverage, s.band_width);
    }
    const auto s = validation::stats(cs);
    std::printf("  %-30s %6d %7.1f%% %9.1f%%  (worst at %llu B)\n", "all sizes", s.count, s.mape, s.worst,
                static_cast<unsigned long long>(s.worst_bytes));
  }
  if (!o.csv.empty()) {
    CsvWriter csv;
    csv.header({"workload", "mode", "gpus", "bytes", "measured_us", "predicted_us", "predicted_lo_us",
                "predicted_hi_us", "error_pct", "runs", "spread_pct", "regime", "source"});
    for (const auto& c : rows) {
      csv.row(c.workload, c.mode, join_ints(c.gpus, " "), c.bytes, c.measured_us, c.predicted_us,
              c.predicted_lo_us, c.predicted_hi_us, 100 * c.error(), c.runs, 100 * c.spread,
              validation::regime_name(validation::regime_of(c.bytes)), c.source);
    }
    write_file_atomic(o.csv, csv.str());
  }
  if (!o.report.empty() || !o.markdown.empty()) {
    validation::ReportContext ctx;
    ctx.command = validate_command_line(o);
    ctx.topology = o.topology;
    ctx.model = o.model;
    ctx.params = o.params.empty() ? params.name : o.params;
    ctx.fit_note = o.fit_note;
    for (const auto& f : o.nccl_tests) ctx.inputs.push_back("nccl-tests log " + f);
    for (const auto& f : o.torch) ctx.inputs.push_back("measure/torch output " + f);
    for (const auto& run : measured) {
      if ((ctx.timeline = validation::pipeline_timeline(run, rt))) break;
    }
    for (const auto& run : measured) {
      ctx.inputs.push_back("commsim-measure " + run.dir);
      for (auto& kv : validation::measured_metadata(run)) ctx.metadata.push_back(std::move(kv));
    }
    if (!o.report.empty()) write_file_atomic(o.report, validation::render_html(rows, ctx));
    if (!o.markdown.empty()) write_file_atomic(o.markdown, validation::render_markdown(rows, ctx));
  }
  // Headline lines last, one per workload and overall.
  std::printf("\n");
  // The manifests' runs pooled over machine starts: the spread a band adds to the model error.
  std::vector<std::size_t> every(manifest_data.rows.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  const validation::RunSpread pooled = validation::run_spread(manifest_data, every);
  for (auto b : {validation::Bound::Latency, validation::Bound::Bandwidth}) {
    const auto sub = validation::in_bound(rows, b);
    if (sub.empty()) continue;
    const auto s = validation::stats(sub);
    std::printf(
        "band %s: coverage %.1f%% of %d sizes, band width %.1f%% vs run-to-run spread %.1f%% (mean of the %d "
        "sizes measured more than once)",
        validation::bound_name(b), s.coverage, s.banded, s.band_width, s.repeated_spread, s.repeated);
    if (const double w = validation::spread_width(pooled, b); w > 0)
      std::printf(
          " and the manifests' runs' 80%% interval %.1f%% (10th to 90th percentile, every run pooled over "
          "machine starts)",
          w);
    std::printf("\n");
  }
  for (const auto& [w, cs] : validation::group_by_workload(rows))
    std::printf("MAPE %.1f%% %s\n", validation::stats(cs).mape, w.c_str());
  std::printf("MAPE %.1f%% overall\n", validation::stats(rows).mape);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* v =
      app.add_subcommand("validate",
                         "Compare predictions with measurements: simulate exactly what was measured\n"
                         "and report the error per configuration and size regime");
  v->add_option("--nccl-tests", o->nccl_tests,
                "nccl-tests text logs (several runs per file are fine; repeats of a\n"
                "configuration are combined by their median)");
  v->add_option(
      "--measured", o->measured,
      "commsim-measure output directories (p2p, sendrecv, alltoall, exchange,\ncollectives, pipeline, "
      "weight-sync)");
  v->add_option("--torch", o->torch,
                "measure/torch outputs (pipeline_1f1b.py, weight_sync_broadcast.py JSON),\nsimulated with "
                "--framework torch");
  add_setup_flags(v, {&o->topology, &o->gpu, &o->params, &o->model, &o->nccl_env}, SetupRole::Measured);
  v->add_option(
      "--gpu-map", o->gpu_map,
      "CSV from `nvidia-smi --query-gpu=index,pci.bus_id --format=csv`: maps\nthe logs' PCI bus ids to "
      "topology GPUs (else CUDA device numbers are used)");
  v->add_option("--csv", o->csv,
                "Write every joined row to this CSV file (--cross-validate: every held-out prediction,\nwith "
                "the family and value its fold left out)");
  v->add_option(
      "--report", o->report,
      "Write a self-contained HTML report (plots, error heatmap, worst cases,\nmetadata) to this file");
  v->add_option("--markdown", o->markdown, "Write a Markdown summary to this file");
  v->add_option(
      "--fit-note", o->fit_note,
      "Say in the reports which data the parameters were fitted on, e.g.\n\"fitted on the p2p sweep; "
      "everything else is held out\"");
  v->add_flag("--per-size", o->per_size, "Print every size, not only the per-regime summary");
  v->add_option(
      "--manifest", o->manifests,
      "manifest.csv files (file,start,workload,gpus,launch,nccl_env,repeat) listing\nnccl-tests runs; each "
      "run is simulated with its own launch and NCCL knobs");
  v->add_flag("--cross-validate", o->cross_validate,
              "Leave-one-family-out cross-validation over the --manifest data: per family\nvalue, fit on the "
              "rest (as calibrate) and predict the held-out rows");
  v->add_option("--family", o->families,
                "Families to hold out (repeatable): ring, pair, knob, collective, launch,\nstart, "
                "probed-start (default: "
                "the first six, and probed-start with --probe)");
  v->add_option(
      "--param", o->parameters,
      "Parameters each fold fits, as section.key (repeatable; see calibrate).\nDefault: " + [] {
        std::string list;
        for (const auto& p : validation::default_cross_validation_parameters())
          list += (list.empty() ? "" : ", ") + p;
        return list;
      }());
  v->add_option(
      "--probe", o->probe,
      "--cross-validate: a configuration as validate labels it (repeatable, e.g.\n'sendrecv gpus 0,1' "
      "and 'sendrecv gpus 0,1 thread-per-gpu') that calibrates a\nheld-out machine start's host: the "
      "probed-start family fits on the other\nstarts, refits --probe-param on these rows of the held-out "
      "start, and predicts\nits other rows");
  v->add_option(
      "--probe-param", o->probe_params, "Parameters the probe refits (repeatable). Default: " + [] {
        std::string list;
        for (const auto& p : validation::default_probe_parameters()) list += (list.empty() ? "" : ", ") + p;
        return list;
      }());
  v->add_option("--start-param", o->start_params,
                "--cross-validate: a parameter (section.key, repeatable; e.g. host.launch_per_gpu)\nrefitted "
                "for each machine start on that start's own training rows before its\nheld-out rows are "
                "predicted, in every family but start and probed-start:\nthe host as it was that day, "
                "calibrated from the other configurations\nmeasured on it. Default: none (one set for every "
                "start)");
  v->add_option(
       "--start-rounds", o->start_rounds,
       "--cross-validate with --start-param: times each fold (start's and probed-start's\ntoo) fits its "
       "shared parameters again with every start's training rows\npredicted under that start's own refit "
       "of --start-param (a joint fit, so that\none start's slow host is not taken for a cost every start "
       "pays); 0: the shared\nfit once, each start refitted after it")
      ->check(CLI::Range(0, 10))
      ->capture_default_str();
  v->add_option("--loss", o->loss,
                "--cross-validate: what each fold's fit minimises, squared or soft-l1 (see\ncalibrate)")
      ->capture_default_str();
  v->add_option("--loss-scale", o->loss_scale,
                "--cross-validate, soft-l1: the weighted residual, in sigmas, from which the\nloss grows "
                "linearly")
      ->capture_default_str();
  v->add_option("--jobs", o->jobs,
                "--cross-validate: threads that evaluate each fit's Jacobian (default: every\nhardware "
                "thread); the figures are the same for any count")
      ->check(CLI::NonNegativeNumber);
  v->add_option("--json", o->json, "--cross-validate: write the per-family tables as JSON to this file");
  v->add_option("--band", o->band,
                "--cross-validate: a fold's band takes its model error from the held-out\nrows of its "
                "family's other folds (cross-validated) or from its own fit's\nresiduals (in-sample)")
      ->check(CLI::IsMember({"cross-validated", "in-sample"}))
      ->capture_default_str();
  v->add_option("--band-out", o->band_out,
                "--cross-validate: write --band-set (default --params) with [band] set from\nevery held-out "
                "prediction of every family, pooled: the band of a set fitted as the\nfolds were (the same "
                "--param on all the data, e.g. by calibrate --manifest)");
  v->add_option("--band-set", o->band_set,
                "The parameter set --band-out copies (its values are kept; only [band] is\nreplaced)");
  v->footer(R"(
OUTPUT
  Per configuration: MAPE and worst error per size regime (latency-bound < 256 KiB, transition, bandwidth-bound
  >= 32 MiB) beside the measurement's own run-to-run spread. The last lines are the headlines:
  "MAPE <x>% <workload>" and "MAPE <x>% overall". Every row carries the parameter set's prediction band;
  coverage is the share of measured medians inside it, band width its mean width relative to the prediction.

CROSS-VALIDATION (--cross-validate)
  Leave one family out: for each value of each family (ring size, GPU pair, NCCL knob, collective, launch,
  machine start) the parameters (--param, as calibrate) are fitted on every other row of the --manifest data
  and the held-out rows are predicted, each with a band whose model error comes from the held-out rows of
  the family's other folds (errors made on values their fits never saw; --band in-sample: from the fold's own
  fit residuals and standard errors), with the measured spread in quadrature. With --probe, the probed-start
  family also holds out each machine start, then refits the host (--probe-param) on that start's probe rows
  (a short measurement a user makes on a new machine) and predicts its other rows. With --start-param, every
  other family's fold refits those parameters for each machine start on that start's own training rows (the
  host as it was that day, from the other configurations measured on it) before predicting the start's
  held-out rows; a start with no training row keeps the fold's fit, and its rows' band takes its model
  error from the other folds' rows as their own fits predict them, no start refitted. With --start-rounds,
  every fold, the start and probed-start families' too, first fits its shared parameters with each training
  start at its own refit (a held-out start then keeps the shared host, or its probe's). Reported per family
  value: MAPE latency-bound (< 1 MiB) and bandwidth-bound (>= 1 MiB), coverage and the worst size. A family
  with one value, or a fold whose fit is degenerate, is refused with the reason.

EXAMPLE
  commsim validate --topology topologies/library/real/h200x4.topo --params models/params/h200.toml \
    --gpu-map validation/data/h200x4/meta/gpus.csv \
    --nccl-tests validation/data/h200x4/nccl-tests/sendrecv_g4_r*.log
  commsim validate --topology topologies/library/real/h200x4.topo --params models/params/nccl-default.toml \
    --manifest validation/data/h200x4/nccl-tests/manifest.csv \
      validation/data/h200x4/coverage/h200x4-2026-11-22a/manifest.csv --cross-validate --family start \
    --markdown /tmp/heldout.md)");
  v->callback([o] { run_validate(*o); });
}

}  // namespace commsim::cli
