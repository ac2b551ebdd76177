// Progress lines on standard error with a work-weighted, smoothed ETA: the one progress reporter of `commsim
// simulate` and `commsim sweep`.
#include "commsim/core/progress.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <unistd.h>

#include "commsim/core/error.hpp"

namespace commsim {

ProgressMode parse_progress_mode(std::string_view text) {
  if (text == "auto") return ProgressMode::Auto;
  if (text == "always") return ProgressMode::Always;
  if (text == "never") return ProgressMode::Never;
  throw UsageError("--progress '" + std::string(text) + "': expected auto, always or never");
}

EtaEstimator::EtaEstimator(std::vector<double> work, double smoothing)
    : work_(std::move(work)), finished_(work_.size(), false), smoothing_(smoothing) {
  double smallest = 0;
  for (double w : work_) {
    if (w > 0 && std::isfinite(w)) smallest = smallest > 0 ? std::min(smallest, w) : w;
  }
  for (double& w : work_) {
    if (!(w > 0) || !std::isfinite(w)) w = smallest > 0 ? smallest : 1;
    total_work_ += w;
  }
}

void EtaEstimator::done(std::size_t i, double elapsed_s) {
  if (i >= work_.size() || finished_[i]) return;
  finished_[i] = true;
  ++done_count_;
  done_work_ += work_[i];
  if (done_count_ == work_.size()) {
    eta_ = 0;
    return;
  }
  const double raw_total = elapsed_s * total_work_ / done_work_;  // elapsed + the work left at the mean rate
  predicted_total_ =
      done_count_ == 1 ? raw_total : predicted_total_ + smoothing_ * (raw_total - predicted_total_);
  eta_ = std::max(0.0, predicted_total_ - elapsed_s);
}

double point_work(double transfers, int runs) {
  return (1000.0 + std::max(transfers, 0.0)) * std::max(runs, 1);
}

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressLine::ProgressLine(ProgressMode mode, std::FILE* out)
    : ProgressLine(mode, out, ::isatty(::fileno(out)) != 0, steady_seconds) {}

ProgressLine::ProgressLine(ProgressMode mode, std::FILE* out, bool terminal, Clock clock, double delay_s,
                           double interval_s)
    : out_(out),
      terminal_(terminal),
      enabled_(mode == ProgressMode::Always || (mode == ProgressMode::Auto && terminal)),
      clock_(std::move(clock)),
      start_(clock_()),
      delay_(delay_s),
      interval_(terminal ? interval_s : std::max(interval_s, 5.0)) {}

ProgressLine::~ProgressLine() {
  finish();
}

double ProgressLine::elapsed() const {
  return clock_() - start_;
}

bool ProgressLine::show(const std::string& text, bool force) {
  if (!enabled_) return false;
  const double now = clock_();
  if (now - start_ < delay_ || (!force && now - last_ < interval_)) return false;
  last_ = now;
  shown_ = true;
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s", text.c_str());
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
  return true;
}

void ProgressLine::finish() {
  if (shown_ && terminal_) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
  }
  shown_ = false;
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const long long s = std::llround(seconds);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return buf;
}

std::string progress_text(const EtaEstimator& eta, const std::string& items, double elapsed_s) {
  const int width = 20;
  const int filled = std::clamp(static_cast<int>(eta.fraction() * width), 0, width);
  std::ostringstream o;  // (not operator+: GCC 12 warns -Wrestrict on it, a false positive)
  o << '[' << std::string(static_cast<std::size_t>(filled), '=')
    << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << eta.done_count() << '/'
    << eta.total() << ' ' << items << ", " << format_duration(elapsed_s) << " elapsed, ETA "
    << (eta.done_count() == 0 ? std::string("?") : format_duration(eta.eta_s()));
  return o.str();
}

}  // namespace commsim
