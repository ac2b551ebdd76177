// Fits transfer-model parameters to commsim-measure data: weighted least squares on relative error (Eigen).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/topology.hpp"
#include "commsim/validation/accuracy.hpp"

namespace commsim::validation {

/// A parameter calibrate can fit, named "section.key" as in a parameter file. Values are in `unit`: us for
/// durations, GBps for bandwidths, none for ratios.
struct FitParameter {
  std::string name;
  std::string unit;
  double lower = 0;
  double upper = 0;
};

/// Every parameter calibrate can fit, with the bounds it searches within.
const std::vector<FitParameter>& fit_parameters();

/// Which rows a fit uses, from --fit's entries: each is a workload name (every row of it, e.g. "sendrecv") or
/// a configuration label as validate prints it (e.g. "p2p 0->1", "exchange gpus 0,1 overlapped"), optionally
/// followed by " >=SIZE" to take only its sizes from SIZE on (e.g. "exchange gpus 0,1 overlapped >=1MiB").
class FitSelection {
 public:
  /// Throws UsageError for a bad size after ">=".
  explicit FitSelection(const std::vector<std::string>& entries);
  bool empty() const { return rules_.empty(); }
  bool selects(const Comparison& c) const;

 private:
  struct Rule {
    std::string name;             ///< workload or label
    std::uint64_t min_bytes = 0;  ///< smallest size taken
  };
  std::vector<Rule> rules_;
};

/// What a fit minimises over the weighted residuals r (relative error / sigma). Squared: sum r^2 (least
/// squares). SoftL1: sum 2 c^2 (sqrt(1 + (r/c)^2) - 1), c = CalibrateOptions::loss_scale: r^2 near zero,
/// 2 c |r| beyond c, so a size measured in a host's slow mode (single-thread floors are bimodal per process)
/// pulls the fit by its distance, not its square.
enum class FitLoss { Squared, SoftL1 };

/// "squared" or "soft-l1"; throws UsageError naming both for anything else.
FitLoss parse_fit_loss(const std::string& name);
/// CalibrateOptions::loss_scale's default, in sigmas.
inline constexpr double kDefaultLossScale = 2.0;
const char* fit_loss_name(FitLoss loss);

struct CalibrateOptions {
  std::vector<std::string> measured;    ///< commsim-measure output directories
  std::vector<std::string> nccl_tests;  ///< nccl-tests logs (workload = the nccl-tests op)
  std::string gpu_map;                  ///< index,pci.bus_id CSV for the nccl-tests logs (optional)
  std::vector<std::string> manifests;   ///< manifest.csv files (calibrate_manifest)
  /// The rows fitted (FitSelection: workloads or configuration labels, with an optional smallest size); the
  /// rest are held out.
  std::vector<std::string> workloads{"p2p"};
  std::vector<std::string> parameters;  ///< "section.key" names; empty: the defaults of fit_parameters()
  double sigma_large = 0.02;            ///< relative measurement error assumed for sizes >= 1 MiB
  double sigma_small = 0.08;            ///< below 1 MiB, where run-to-run spread is larger
  FitLoss loss = FitLoss::Squared;
  double loss_scale =
      kDefaultLossScale;  ///< SoftL1: the weighted residual (in sigmas) from which the loss grows linearly
  int max_iterations = 40;
  double max_relative_std_error = 0.5;  ///< a fitted value less certain than this is degenerate
  /// cross_validate only: a fold's band takes its model error from the held-out rows of its family's other
  /// folds (true), or from its own fit's residuals (false: narrower, and it covers fewer held-out sizes).
  bool cross_validated_band = true;
  /// cross_validate's probed-start family: the configurations (FitSelection entries, e.g. "sendrecv gpus
  /// 0,1" and "sendrecv gpus 0,1 thread-per-gpu") measured on the held-out start to calibrate its host, and
  /// the parameters refitted on them (empty: default_probe_parameters()).
  std::vector<std::string> probe;
  std::vector<std::string> probe_parameters;
  /// cross_validate, every family but start and probed-start (whose held-out start has no training row):
  /// parameters refitted for each machine start, from the fold's fit, on that start's own training rows
  /// before its held-out rows are predicted: the machine's host as it was that day, calibrated from the
  /// other configurations measured on it (never from a held-out row). The rows keep the fold's band. Empty:
  /// one set for every start.
  std::vector<std::string> start_parameters;
  /// With start_parameters: times each fold fits its shared parameters again with every start's training rows
  /// predicted under that start's own refit of them (0: the shared fit once, each start refitted after it).
  int start_rounds = 0;
  /// Threads that evaluate the Jacobian's columns (each a prediction of every fitted row with one parameter
  /// moved) at once; 0: one per hardware thread. The fit is the same, to the bit, for any count.
  int jobs = 0;
};

struct FittedValue {
  FitParameter parameter;
  double start = 0;
  double value = 0;
  double std_error = 0;  ///< one standard error from the Jacobian at the optimum, in the parameter's unit
  bool at_bound = false;
};

/// A fit whose weighted Jacobian has a condition number over this is degenerate (parameters trade off).
inline constexpr double kMaxCondition = 1e8;

struct CalibrateResult {
  std::vector<FittedValue> values;
  models::ModelParams params;             ///< the start set with the fitted values
  std::vector<Comparison> fitted_rows;    ///< rows used in the fit, predicted with the fitted values
  std::vector<Comparison> held_out_rows;  ///< rows not used, predicted with the fitted values
  std::vector<double> prediction_rel_se;  ///< per fitted row: relative standard error of its prediction
                                          ///< from the parameters' covariance (0 when it is singular)
  double start_cost = 0;                  ///< the loss (CalibrateOptions::loss) at the start
  double cost = 0;                        ///< and at the optimum
  int iterations = 0;
  int evaluations = 0;
  double condition = 0;  ///< condition number of the weighted Jacobian at the optimum
  bool degenerate = false;
  std::string why_degenerate;  ///< which parameters the data cannot pin down
  /// Fitted parameters no fitted row depends on (a zero Jacobian column).
  std::vector<std::string> unused;
  /// Fitted parameters the rows depend on but do not pin down: not at a bound, standard error over
  /// CalibrateOptions::max_relative_std_error of the value (each makes the fit degenerate).
  std::vector<std::string> unpinned;
  /// With a rank-deficient Jacobian and no unused parameter: the one parameter along the direction the data
  /// cannot see, when that direction is a single parameter (the rows barely depend on it); empty otherwise.
  std::vector<std::string> barely;
  bool band_fitted = false;  ///< params.band was computed from the data (written as [band])
  /// Size regimes whose band was kept from the start set for want of repeated runs ("below 1 MiB").
  std::string band_kept;
  /// Sides of the band kept at a fitted start set's, which was wider than the fit's own (keep_start_band:
  /// "below 1 MiB, lower side; ..."); empty when the fit's band is written whole.
  std::string band_widened;
  /// The topology's GPU model the rows ran on (empty: several models); with nccl_versions and fitted_network,
  /// what a fit was measured on (--band-only, which fits nothing, leaves them unset).
  std::string gpu;
  std::set<std::string> nccl_versions;  ///< the NCCL versions the data recorded ("2.28.3"; empty: none)
  bool fitted_network = false;  ///< a fitted row's GPUs span machines (its transfers crossed a network)
};

/// The names of the parameters a fit with `o` fits: o.parameters, or the defaults. Throws UsageError for an
/// unknown name, listing the valid ones.
std::vector<std::string> fitted_parameter_names(const CalibrateOptions& o);

/// Predictions of the rows a fit runs over under one parameter set (measured side filled, same order each
/// call). fit_rows calls it from several threads at once (CalibrateOptions::jobs): it must be safe to call
/// concurrently, and a pure function of its argument for the fit not to depend on the thread count.
using RowPredictor = std::function<std::vector<Comparison>(const models::ModelParams&)>;

/// `start` with each of `values` set to its fitted value (FittedValue::value, in its parameter's unit),
/// through the same parser a parameter file goes through.
models::ModelParams with_fitted_values(const models::ModelParams& start,
                                       const std::vector<FittedValue>& values);

/// The fit itself: Levenberg-Marquardt of the parameters `o.parameters` names (default: those a p2p sweep
/// pins down) from `start`, each evaluation predicting the rows through `predict`. Fills every member but
/// held_out_rows. Throws UsageError for unknown parameter names, no rows, or no more rows than parameters.
CalibrateResult fit_rows(const models::ModelParams& start, const RowPredictor& predict,
                         const CalibrateOptions& o);

/// Levenberg-Marquardt in bounded, normalised parameter space with a forward-difference Jacobian, and the
/// fitted set's band from the fitted rows (band_from_fit over their extreme_spread; band_fitted), never
/// narrower than a fitted start set's (keep_start_band). Throws
/// UsageError for unknown parameter names (listing the valid ones) or when no measured row is selected.
CalibrateResult calibrate(const topo::Topology& topology, const models::ModelParams& start,
                          const models::NcclEnv& env, const CalibrateOptions& options);

/// How far repeated runs fall from their configuration's median, per size regime (0: < 1 MiB, 1: >= 1 MiB),
/// as fractions of the median (below: 1 - t / median, above: t / median - 1).
struct RunSpread {
  std::vector<double> below[2], above[2];
};

/// The RunSpread of rows that keep only their runs' minimum, median and maximum (commsim-measure repetitions,
/// repeated nccl-tests logs): each row's two extremes, a wider spread than every run's would give. Rows of a
/// single run say nothing about spread and are left out.
RunSpread extreme_spread(const std::vector<Comparison>& rows);

/// Sets what a fit's data was measured on: `r.gpu` (the topology's GPU model) and `r.fitted_network` (a
/// fitted row's GPUs are on more than one machine of `topology`, so its transfers crossed the network).
void set_fitted_on(CalibrateResult& r, const topo::Topology& topology);

/// A fit's prediction band, per size regime with fitted rows (the others keep `fallback`'s): in quadrature,
/// the 5th / 95th percentile of the fitted rows' measured / predicted - 1, the 90th percentile of the runs'
/// `spread`, and 1.645 x the mean relative standard error of the fitted predictions (`rel_se`, one per fitted
/// row, may be empty); each half clamped to [0.001, 0.95]. A regime with fitted rows but no repeated run has
/// no measured spread: it keeps `fallback`'s band too, and `kept` (when given) gets its name ("below 1 MiB",
/// "from 1 MiB", joined by " and ").
models::BandParams band_from_fit(const std::vector<Comparison>& fitted, const std::vector<double>& rel_se,
                                 const RunSpread& spread, const models::BandParams& fallback,
                                 std::string* kept = nullptr);

/// A refit of a fitted start set (start.fitted not empty) writes, on each side of each size regime, the wider
/// of its own band and the start set's, and names in `r.band_widened` the sides it kept. The start set's band
/// was measured on every configuration it was fitted on; the refit's rows (a host probe: one workload on one
/// pair) show only their own error, not the error on what they leave out (session 41: on h200x2-2026-11-29b a
/// probe's own band covered 68% of the other workloads' medians, h200.toml's 100%). From an unfitted start
/// (the datasheet set) the fit's band is written whole. No-op unless r.band_fitted.
void keep_start_band(CalibrateResult& r, const models::ModelParams& start);

struct ManifestData;
/// calibrate on manifest rows: fits the rows whose workload is in `o.workloads` (every row when it is empty),
/// each configuration with its own launch and NCCL knobs, holds the others out, and computes params.band from
/// the fitted rows' measured spread and the fit's standard errors (band_fitted), never narrower than a fitted
/// start set's (keep_start_band). Throws as fit_rows.
CalibrateResult calibrate_manifest(const ManifestData& data, const topo::Topology& topology,
                                   const models::ModelParams& start, const CalibrateOptions& o);

/// `set_file`'s parameter set (TOML text) with its [band] replaced by `band`, under a header of `comment`
/// lines (each written after "# "). A `base` key is rewritten to name the same file from `out_file`'s folder
/// (absolute when `out_file` is empty).
std::string params_with_band_toml(const std::string& set_file, const models::BandParams& band,
                                  const std::vector<std::string>& comment, const std::string& out_file = "");

/// The parameter file calibrate writes: `start_file`'s keys (if any) with the fitted values set, a header
/// saying what was fitted, on what, and how well (and why, for a degenerate fit written anyway). A `base`
/// key is rewritten as params_with_band_toml does.
std::string fitted_params_toml(const CalibrateResult& result, const std::string& start_file,
                               const std::string& name, const CalibrateOptions& options,
                               const std::string& out_file = "");

}  // namespace commsim::validation
