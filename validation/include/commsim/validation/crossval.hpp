// Measurement manifests and leave-one-family-out cross-validation of fitted parameters on nccl-tests data.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/models/params.hpp"
#include "commsim/topo/topology.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/calibrate.hpp"

namespace commsim::validation {

/// One nccl-tests run listed in a manifest.csv (columns file,start,workload,gpus,launch,nccl_env,repeat).
struct ManifestEntry {
  std::string file;       ///< the nccl-tests JSON or text output, resolved against the manifest's folder
  std::string start;      ///< machine-start id, e.g. "h200x4-2026-11-21"
  std::string workload;   ///< nccl-tests op as commsim spells it: sendrecv, all_reduce, alltoall, ...
  std::vector<int> gpus;  ///< topology GPU indices, rank order
  bool thread_per_gpu = false;        ///< launch: thread-per-gpu (-t N), else single-thread (-g N)
  std::vector<std::string> nccl_env;  ///< KEY=VALUE knobs the run was made with (empty: NCCL's defaults)
  int repeat = 1;
  SourceLocation where;  ///< manifest file and line
  bool graph = false;    ///< launch ends in "-graph": nccl-tests -G, the timed iterations from a CUDA graph
};

/// Reads a manifest. Throws InputError with file, line and column for a missing column, a bad GPU list,
/// launch, knob or repeat, and IoError when the manifest cannot be read.
std::vector<ManifestEntry> load_manifest(const std::string& path);

/// The ways data splits into families for leave-one-family-out cross-validation. ProbedStart splits by
/// machine start as Start does, but each fold then refits a few host parameters on the held-out start's own
/// probe rows (CalibrateOptions::probe) before it predicts the start's other rows: a user's new machine with
/// a short measurement of its host.
enum class Family { Ring, Pair, Knob, Collective, Launch, Start, ProbedStart };
/// The six families a cross-validation runs by default (ProbedStart needs probe rows and is asked for).
const std::vector<Family>& all_families();
/// "ring", "pair", "knob", "collective", "launch", "start", "probed-start"
const char* family_name(Family f);
/// Throws UsageError listing the valid names.
Family parse_family(const std::string& name);

/// What is simulated for a row: rows of one configuration (on any machine start) share their predictions.
struct ManifestConfig {
  std::string workload;
  std::vector<int> gpus;
  bool thread_per_gpu = false;
  std::vector<std::string> nccl_env;
  std::string knob;    ///< nccl_env joined by spaces, "defaults" when empty
  bool graph = false;  ///< nccl-tests -G
};

/// One measured size of one configuration on one machine start (median over its repeats), with the keys of
/// every family.
struct ManifestRow {
  Comparison c;
  std::string start;
  std::size_t config = 0;     ///< index into ManifestData::configs
  std::vector<double> times;  ///< every measured run of this size, microseconds
  std::string family_value(Family f, const std::vector<ManifestConfig>& configs) const;
};

/// Measured data of a set of manifests, checked against the topology and grouped into rows.
struct ManifestData {
  std::vector<ManifestConfig> configs;
  std::vector<ManifestRow> rows;
  std::vector<std::string> warnings;  ///< mismatches that do not prevent comparison (NCCL version)
  std::vector<std::string> manifests;
  std::vector<std::string> starts;      ///< machine starts, in order of appearance
  std::set<std::string> nccl_versions;  ///< the NCCL versions the runs recorded ("2.28.3")
};

/// Loads every manifest's runs. Refuses (InputError naming the manifest line and the mismatch) runs whose op,
/// GPU count or launch differ from the manifest, GPUs outside the topology, and devices of another GPU model
/// than the topology's; warns when the NCCL version differs from `params.nccl_version`.
ManifestData load_manifest_data(const std::vector<std::string>& manifests, const topo::Topology& topology,
                                const models::ModelParams& params);

/// Predicts `rows` under `params`, each configuration with its own NCCL knobs (one simulation per
/// configuration and size, shared by its machine starts). Returns the rows' comparisons, in order.
std::vector<Comparison> predict_rows(const ManifestData& data, const std::vector<std::size_t>& rows,
                                     const topo::Topology& topology, const models::ModelParams& params);

/// One held-out family value: fitted on every other row, predicted on its rows.
struct Fold {
  Family family;
  std::string value;
  int fitted_rows = 0;
  std::vector<Comparison> held_out;  ///< predictions with the fold's fitted parameters, band attached
  std::string refused;               ///< why no fit was made (degenerate, too little data); empty: fitted
  std::vector<FittedValue> values;
  /// Parameters none of the fold's fitted rows depends on (a knob only the held-out rows use, such as
  /// collective.tree_efficiency when NCCL_ALGO=Tree is held out): they keep the start set's value, as they
  /// would for a user predicting a configuration nobody measured.
  std::vector<std::string> kept;
  /// Parameters the fold's rows depend on but cannot pin down (standard error over
  /// CalibrateOptions::max_relative_std_error of the value, or a rank-deficient Jacobian along one alone):
  /// after one refit without them they keep the start set's value too, rather than the fold being refused.
  /// Also host.launch_per_gpu, left out from the first fit, where no training row has one thread driving
  /// several GPUs (nothing tells it from host.launch_base).
  std::vector<std::string> unpinned;
  /// The band its held-out rows carry (relative to the prediction, per size regime), but for the
  /// start_fallback_rows that kept the fold's fit where the other rows' start was refitted (below).
  models::BandParams band;
  /// true: band's model error is from the held-out rows of the family's other folds (out of sample); false:
  /// from this fold's own fit residuals (CalibrateOptions::cross_validated_band off, or a family with one
  /// fitted fold).
  bool band_cross_validated = false;
  /// ProbedStart: the held-out start's probe sizes (fitted, not predicted) and the values the probe gave
  /// (CalibrateOptions::probe_parameters, refitted from the fold's fit).
  int probe_rows = 0;
  std::vector<FittedValue> probe_values;
  /// CalibrateOptions::start_parameters: per machine start of the held-out rows, its refit on that start's
  /// training rows (refused: why the fold's own fit predicted that start's rows instead).
  struct StartFit {
    std::string start;
    int rows = 0;  ///< the start's training sizes the refit used
    std::vector<FittedValue> values;
    std::string refused;
  };
  std::vector<StartFit> start_fits;
  /// With start_fits: how many held-out rows kept the fold's own fit (their start refused), and the band
  /// they carry. Cross-validated, its model error is from the other folds' held-out rows predicted with
  /// their folds' own fits, no start refitted: a row predicted without its start's host is as far off as
  /// those, not as the refitted ones (`band`). Otherwise it is `band`.
  int start_fallback_rows = 0;
  models::BandParams start_fallback_band;
  /// CalibrateOptions::start_rounds: the joint rounds this fold's fit completed, and, when it stopped short
  /// or a start kept the shared host in a round (its refit degenerate, or too few sizes), why.
  int joint_rounds = 0;
  std::string joint_note;
};

struct CrossValidation {
  std::vector<Fold> folds;
  std::vector<std::string> skipped;  ///< families not cross-validated, with why (a single value)
  std::vector<std::string> parameters;
  std::string loss =
      "squared";  ///< what each fold's fit minimised (fit_loss_name), with its scale if soft-l1
  int rows = 0;
  /// The probed-start family's probe configurations and the parameters refitted on them (empty without it).
  std::vector<std::string> probe, probe_parameters;
  /// The parameters refitted per machine start (CalibrateOptions::start_parameters; empty without).
  std::vector<std::string> start_parameters;
  /// Times each fold refitted its shared parameters under every start's own refit (CalibrateOptions::
  /// start_rounds; 0: none).
  int start_rounds = 0;
  /// Per cross-validated family, in order: spread_width (percent) of run_spread over the rows its folds
  /// predicted, below 1 MiB ([0]) and from it ([1]): what its held-out bands are set beside.
  struct FamilySpread {
    Family family;
    double width[2] = {0, 0};
  };
  std::vector<FamilySpread> spreads;
  /// The spread_width of `f`'s held-out rows in bound `b` (0 when `f` was not cross-validated).
  double spread_width(Family f, Bound b) const;
};

/// The parameters cross_validate fits when CalibrateOptions::parameters is empty: the twenty-nine that
/// nccl-tests runs exercise (host launch per GPU and per launching thread; the send/recv Simple protocol's
/// base latency, per-channel latency, per-step overhead, channel rate and first-chunk copy rate; LL's base
/// latency and channel rate; NVLink efficiency; the collectives' LL, LL128 and Simple base latencies, LL's
/// and Simple's per-step latencies, the Simple and LL ring channel rates, a Simple ring's reducing step where
/// the channels bind, the ring's receive-only step and each operation's efficiency but all_gather's; SHM's
/// rate per GPU and per channel; the rate of a work that shares its channel with the copy to self; the peer
/// loss and the port ramp). Not all_gather's efficiency: it is the reference the others are relative to (1,
/// the pure copy ring). On link-bound rows an operation's efficiency and the NVLink efficiency only act as a
/// product, so with all five free a fold could trade every operation's efficiency against the link's
/// (models/README.md, "Twenty-six parameters a fold: all_gather as the reference"). Not the receive-only
/// steps' counts where the channels bind (Simple's and LL's): with the channel rate they trade off wherever a
/// fold holds out a ring size or a launch mode, so they keep the datasheet's (models/README.md, "Where the
/// channels bind"). Not Tree's efficiency nor LL128's per-step latency: only the NCCL_ALGO=Tree runs see the
/// first and only the 4-GPU LL128 runs the second (held out, a fold fits them to nothing or trades them off).
/// A fold whose rows do not depend on one keeps its start value (Fold::kept). The per-thread launch cost
/// (host.launch_base, since session 37) is told from the per-GPU one by the one-thread runs on 2-4 GPUs; a
/// fold of thread-per-GPU rows alone cannot tell them apart and keeps the per-GPU cost's start value
/// (Fold::unpinned; models/README.md, "The host per thread and per GPU, both fitted").
const std::vector<std::string>& default_cross_validation_parameters();

/// The host parameters a probed-start fold refits on the probe when CalibrateOptions::probe_parameters is
/// empty: host.launch_per_gpu (the host enqueue per GPU, what moves most between machine starts).
const std::vector<std::string>& default_probe_parameters();

/// Leave-one-family-out cross-validation: for each family in `families` and each of its values, fits the
/// parameters `options.parameters` names (default: default_cross_validation_parameters();
/// Levenberg-Marquardt, as calibrate) on the rows of every other value from `start` and predicts the rows of
/// that value. A family with a single value is skipped (and named in `skipped`); when it was the only family
/// asked for, throws UsageError naming it. A fold whose fit is degenerate or has fewer sizes than parameters
/// is refused with the reason. Family::ProbedStart needs `options.probe` selecting at least one row, and
/// known `options.probe_parameters` (UsageError otherwise); its fold for a start with no probe row, with only
/// probe rows, or whose probe fit is degenerate is refused with the reason.
CrossValidation cross_validate(const ManifestData& data, const topo::Topology& topology,
                               const models::ModelParams& start, const std::vector<Family>& families,
                               const CalibrateOptions& options);

/// Every held-out row of a family (each row predicted by the fold that left it out).
std::vector<Comparison> held_out_rows(const CrossValidation& cv, Family f);

/// Reports: text (stdout), Markdown and JSON. `command` is the command line that reproduces them.
std::string cross_validation_text(const CrossValidation& cv);
std::string cross_validation_markdown(const CrossValidation& cv, const std::string& command);
nlohmann::json cross_validation_json(const CrossValidation& cv, const std::string& command);
/// Every held-out prediction, one CSV row each: the fold's family and held-out value, the configuration, size
/// (B), measured and predicted times and band (us), signed error (%), runs, measured spread (%), and bound
/// ("latency" below 1 MiB, else "bandwidth").
std::string cross_validation_csv(const CrossValidation& cv);

/// The measured runs' spread over `rows`, per bound: each run's deviation below and above its configuration's
/// median (1 - t / median, t / median - 1, 0 on the other side), every run of a configuration and size pooled
/// over the machine starts that measured it (run-to-run and machine-to-machine); configurations and sizes run
/// once say nothing about spread and are left out. The spread a band adds to the model error
/// (band_from_held_out, band_from_rows).
RunSpread run_spread(const ManifestData& data, const std::vector<std::size_t>& rows);
/// The width, in percent of the median, of the interval the 90th percentiles of `s` below and above make in
/// bound `b`: the band a fold would carry with no model error (0 when `b` has no run). A run on one side
/// counts 0 on the other, so it is the 10th to 90th percentile of the runs over their medians: 80% of runs.
double spread_width(const RunSpread& s, Bound b);

/// A band from errors made out of sample, per bound: h = the 90th percentile of |log(measured / predicted)|
/// over `held_out` (rows predicted by fits that never saw them), symmetric in log space since the direction
/// in which an unmeasured configuration misses is not known; combined in quadrature (in log space) with the
/// runs' spread below and above (90th percentiles over `rows`, as band_from_rows). No standard errors: the
/// held-out errors already carry the spread of the fits that made them. A bound with no held-out row keeps
/// `fallback`'s values.
models::BandParams band_from_held_out(const ManifestData& data, const std::vector<std::size_t>& rows,
                                      const std::vector<Comparison>& held_out,
                                      const models::BandParams& fallback);

/// The band that cross-validation measured: band_from_held_out over every fold's held-out rows (but the
/// probed-start family's, whose starts had their host measured), with every row of `data` for the spread.
models::BandParams cross_validated_band(const CrossValidation& cv, const ManifestData& data,
                                        const models::BandParams& fallback);

/// `start` unchanged but for its band: band_from_rows over every row of `data` predicted with `start` (no
/// fit, so no standard errors). The result's fitted_rows are those predictions, band attached. Throws
/// UsageError when a size regime with rows has no repeated run (no spread to measure).
CalibrateResult manifest_band(const ManifestData& data, const topo::Topology& topology,
                              const models::ModelParams& start);

/// The [band] section calibrate computes from `rows` of `data` (before keep_start_band floors a fitted start
/// set's refit at that set's band), a prediction interval per bound: the fit's
/// residuals (5th and 95th percentile of measured / predicted - 1 over `fitted`, the rows' predictions), the
/// measured spread (90th percentile of each run's deviation from its configuration's median over every repeat
/// and machine start; configurations with one run are left out) and 1.645 x the root-mean-square relative
/// standard error of the fitted predictions (`rel_se`, parallel to `fitted`), added in quadrature
/// (band_from_fit). A bound with no fitted row, or no repeated run (named in `kept`), keeps `fallback`'s
/// values.
models::BandParams band_from_rows(const ManifestData& data, const std::vector<std::size_t>& rows,
                                  const std::vector<Comparison>& fitted, const std::vector<double>& rel_se,
                                  const models::BandParams& fallback, std::string* kept = nullptr);

}  // namespace commsim::validation
