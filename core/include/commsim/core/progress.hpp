// Progress lines on standard error with a work-weighted, smoothed ETA: the one progress reporter of `commsim
// simulate` and `commsim sweep`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace commsim {

/// --progress: auto (a line when standard error is a terminal), always, never.
enum class ProgressMode { Auto, Always, Never };
/// Parses "auto", "always" or "never"; throws UsageError naming the valid values otherwise.
ProgressMode parse_progress_mode(std::string_view text);

/// Time left from work done rather than items done. Items differ in cost (an alltoall on 256 GPUs costs a
/// hundred times a sendrecv on them), so each item carries an estimate of its work (any unit: only ratios
/// count); the rate is the elapsed time over the work finished, and the ETA is the work left at that rate.
/// The predicted total (elapsed + ETA) is smoothed exponentially so that one item far off its estimate moves
/// the ETA by a fraction of its error, not all of it.
class EtaEstimator {
 public:
  /// `work`: per item, > 0 (0 or less is taken as the smallest positive estimate given).
  explicit EtaEstimator(std::vector<double> work, double smoothing = 0.3);
  /// Item `i` finished, `elapsed_s` after the start. Each item counts once.
  void done(std::size_t i, double elapsed_s);
  /// Seconds left (0 before the first item or after the last).
  double eta_s() const { return eta_; }
  std::size_t done_count() const { return done_count_; }
  std::size_t total() const { return work_.size(); }
  /// The fraction of the estimated work done, in [0, 1].
  double fraction() const { return total_work_ > 0 ? done_work_ / total_work_ : 0; }

 private:
  std::vector<double> work_;
  std::vector<bool> finished_;
  double total_work_ = 0, done_work_ = 0, smoothing_, predicted_total_ = 0, eta_ = 0;
  std::size_t done_count_ = 0;
};

/// A simulation's estimated work for the ETA: its fixed cost (about that of 1,000 transfers: loading the
/// point, building and routing its program) plus the transfers it simulates as flows, over `runs` runs
/// (iterations + warmup). The simulator's time follows its flows, not the bytes moved. Measured
/// (sim/sweep/tests/ point-times.tsv): about 2 us per transfer and run for an alltoall on 64 to 256 GPUs, and
/// 1 to 8 ms for a point with few transfers.
double point_work(double transfers, int runs);

/// One progress line on a stream: on a terminal rewritten in place ("\r", cleared), elsewhere (--progress
/// always) a line each time it is shown. Nothing is shown in the first `delay_s` (work that ends sooner stays
/// silent), and at most every `interval_s` after that.
class ProgressLine {
 public:
  using Clock = std::function<double()>;  ///< seconds since some fixed time
  ProgressLine(ProgressMode mode, std::FILE* out = stderr);
  /// For tests: whether `out` is a terminal, the clock and the timings are given.
  ProgressLine(ProgressMode mode, std::FILE* out, bool terminal, Clock clock, double delay_s = 2.0,
               double interval_s = 0.25);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Whether anything can be shown: always, or auto on a terminal.
  bool enabled() const { return enabled_; }
  /// Seconds since construction.
  double elapsed() const;
  /// Shows `text` when enabled, past the delay and the interval since the last (or `force`, past the delay).
  /// Returns whether it was shown.
  bool show(const std::string& text, bool force = false);
  /// Ends the line: on a terminal clears it, so that what follows starts clean.
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  bool enabled_;
  Clock clock_;
  double start_, delay_, interval_, last_ = -1e300;
  bool shown_ = false;
};

/// "[=====     ] 12/40 points, 1m05s elapsed, ETA 2m10s": a bar over the work fraction, counts and times.
std::string progress_text(const EtaEstimator& eta, const std::string& items, double elapsed_s);
/// "2m10s", "45s", "1h02m".
std::string format_duration(double seconds);

}  // namespace commsim
