// Fits transfer-model parameters to commsim-measure data: weighted least squares on relative error (Eigen).
#include "commsim/validation/calibrate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include <Eigen/Dense>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/toml_fields.hpp"
#include "commsim/core/units.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/validation/nccl_tests.hpp"

namespace commsim::validation {
namespace {

struct Accessor {
  FitParameter parameter;
  std::function<double(const models::ModelParams&)> get;  ///< in the parameter's unit
  bool default_fit = false;  ///< fitted when --param is not given (identifiable from a p2p sweep)
};

double us(Picoseconds ps) {
  return static_cast<double>(ps) / 1e6;
}
double gbps(double bytes_per_second) {
  return bytes_per_second / 1e9;
}

const std::vector<Accessor>& accessors() {
  using P = models::ModelParams;
  static const std::vector<Accessor> list = {
      {{"host.launch_base", "us", 0, 10}, [](const P& p) { return us(p.launch_base); }, false},
      {{"host.launch_per_gpu", "us", 0, 20}, [](const P& p) { return us(p.launch_per_gpu); }, false},
      {{"host.launch_scale", "", 0.2, 5}, [](const P& p) { return p.launch_scale; }, false},
      {{"host.launch_per_op", "us", 0, 4}, [](const P& p) { return us(p.launch_per_op); }, false},
      {{"kernel.gap", "us", 0, 12}, [](const P& p) { return us(p.kernel_gap); }, false},
      {{"kernel.graph_gap", "us", 0, 12}, [](const P& p) { return us(p.graph_gap); }, false},
      {{"kernel.graph_join", "us", 0, 20}, [](const P& p) { return us(p.graph_join); }, false},
      {{"simple.base_latency", "us", 0, 15}, [](const P& p) { return us(p.simple.base_latency); }, true},
      {{"simple.step_overhead", "us", 0, 3}, [](const P& p) { return us(p.simple.step_overhead); }, false},
      {{"simple.channel_latency", "us", 0, 2},
       [](const P& p) { return us(p.simple.channel_latency); },
       false},
      {{"simple.channel_bandwidth", "GBps", 10, 40},
       [](const P& p) { return gbps(p.simple.channel_bandwidth); },
       false},
      {{"simple.fill_bandwidth", "GBps", 5, 200},
       [](const P& p) { return gbps(p.simple.fill_bandwidth); },
       true},
      {{"ll.base_latency", "us", 0, 15}, [](const P& p) { return us(p.ll.base_latency); }, true},
      {{"ll.channel_latency", "us", 0, 2}, [](const P& p) { return us(p.ll.channel_latency); }, false},
      {{"ll.channel_bandwidth", "GBps", 0.5, 40},
       [](const P& p) { return gbps(p.ll.channel_bandwidth); },
       true},
      {{"p2p.nvlink_efficiency", "", 0.6, 1.0}, [](const P& p) { return p.nvlink_efficiency; }, true},
      {{"p2p.nvlink_saturation", "", 1.5, 40}, [](const P& p) { return p.nvlink_saturation; }, false},
      {{"p2p.solo_speedup", "", 0.8, 2.0}, [](const P& p) { return p.solo_speedup; }, true},
      {{"p2p.split_rate", "", 0.2, 1.5}, [](const P& p) { return p.split_rate; }, false},
      {{"p2p.split3_rate", "", 0.1, 1.0}, [](const P& p) { return p.split3_rate; }, false},
      {{"p2p.channel_budget", "", 0.5, 4.0}, [](const P& p) { return p.channel_budget; }, false},
      {{"p2p.peer_ramp", "", 0, 1}, [](const P& p) { return p.peer_ramp; }, false},
      {{"p2p.peer_ramp_time", "us", 1, 1000}, [](const P& p) { return us(p.peer_ramp_time); }, false},
      {{"p2p.peer_rate_loss", "", 0, 0.5}, [](const P& p) { return p.peer_rate_loss; }, false},
      {{"p2p.port_ramp", "", 0, 1}, [](const P& p) { return p.port_ramp; }, false},
      {{"p2p.port_ramp_time", "us", 1, 1000}, [](const P& p) { return us(p.port_ramp_time); }, false},
  };
  static const std::vector<Accessor> all = [] {
    std::vector<Accessor> out = list;
    const char* protos[3] = {"ll", "ll128", "simple"};
    for (int i = 0; i < 3; ++i) {
      const std::string pr = protos[i];
      out.push_back({{"collective." + pr + "_base_latency", "us", 0, 20},
                     [i](const P& p) { return us(p.coll.base_latency[i]); },
                     false});
      out.push_back({{"collective." + pr + "_hop_latency", "us", 0, 10},
                     [i](const P& p) { return us(p.coll.hop_latency[i]); },
                     false});
      out.push_back({{"collective." + pr + "_channel_bandwidth", "GBps", 0.5, 60},
                     [i](const P& p) { return gbps(p.coll.channel_bandwidth[i]); },
                     false});
    }
    for (int i = 0; i < models::kCollOpCount; ++i) {
      const char* op = models::coll_op_name(static_cast<models::CollOp>(i));
      out.push_back({{std::string("collective.") + op + "_efficiency", "", 0.5, 1.5},
                     [i](const P& p) { return p.coll.efficiency[i]; },
                     false});
    }
    out.push_back({{"collective.tree_efficiency", "", 0.2, 1.5},
                   [](const P& p) { return p.coll_tree_efficiency; },
                   false});
    out.push_back(
        {{"collective.ring_recv_step", "", 0, 2}, [](const P& p) { return p.coll_ring_recv_step; }, false});
    out.push_back(
        {{"collective.reduce_step", "", 0.2, 2}, [](const P& p) { return p.coll_reduce_step; }, false});
    out.push_back({{"collective.channel_recv_step", "", 0, 2},
                   [](const P& p) { return p.coll_channel_recv_step; },
                   false});
    out.push_back(
        {{"collective.ll_recv_step", "", 0, 2}, [](const P& p) { return p.coll_ll_recv_step; }, false});
    out.push_back(
        {{"host.launch_per_coll", "us", 0, 10}, [](const P& p) { return us(p.launch_per_coll); }, false});
    out.push_back({{"copy.nvlink_efficiency", "", 0.5, 1.0},
                   [](const P& p) { return p.copy_nvlink_efficiency; },
                   false});
    out.push_back({{"copy.latency", "us", 0, 20}, [](const P& p) { return us(p.copy_latency); }, false});
    out.push_back(
        {{"shm.base_latency", "us", 0, 20}, [](const P& p) { return us(p.shm_base_latency); }, false});
    out.push_back({{"shm.channel_bandwidth", "GBps", 1, 60},
                   [](const P& p) { return gbps(p.shm_channel_bandwidth); },
                   false});
    out.push_back(
        {{"shm.bandwidth", "GBps", 4, 100}, [](const P& p) { return gbps(p.shm_bandwidth); }, false});
    out.push_back({{"shm.host_memory_bandwidth", "GBps", 10, 1000},
                   [](const P& p) { return gbps(p.shm_host_memory_bandwidth); },
                   false});
    out.push_back({{"torch.call_overhead", "us", 0, 50}, [](const P& p) { return us(p.torch_call); }, false});
    return out;
  }();
  return all;
}

/// Full precision: the Jacobian's finite differences must reach the model unrounded.
std::string value_text(const FitParameter& p, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string out(buf);
  if (!p.unit.empty()) {
    out.append(p.unit);
    out.insert(out.begin(), '"');
    out.push_back('"');
  }
  return out;
}

/// The start set with `values` applied, through the same parser a parameter file goes through.
models::ModelParams with_values(const models::ModelParams& start, const std::vector<FitParameter>& ps,
                                const std::vector<double>& values) {
  // One table per section: a TOML file may not open the same table twice.
  std::map<std::string, std::string> by_section;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto dot = ps[i].name.find('.');
    by_section[ps[i].name.substr(0, dot)] +=
        ps[i].name.substr(dot + 1) + " = " + value_text(ps[i], values[i]) + "\n";
  }
  std::string text;
  for (const auto& [s, body] : by_section) text += "[" + s + "]\n" + body;
  models::ModelParams p = models::ModelParams::parse(text, "<calibrate>", start);
  p.name = start.name;
  p.source = start.source;
  return p;
}

}  // namespace

models::ModelParams with_fitted_values(const models::ModelParams& start,
                                       const std::vector<FittedValue>& values) {
  if (values.empty()) return start;
  std::vector<FitParameter> ps;
  std::vector<double> vs;
  for (const FittedValue& v : values) {
    ps.push_back(v.parameter);
    vs.push_back(v.value);
  }
  return with_values(start, ps, vs);
}

const std::vector<FitParameter>& fit_parameters() {
  static const std::vector<FitParameter> list = [] {
    std::vector<FitParameter> out;
    for (const auto& a : accessors()) out.push_back(a.parameter);
    return out;
  }();
  return list;
}

FitSelection::FitSelection(const std::vector<std::string>& entries) {
  for (const std::string& e : entries) {
    Rule r;
    const auto at = e.find(">=");
    r.name = e.substr(0, at);
    while (!r.name.empty() && r.name.back() == ' ') r.name.pop_back();
    if (at != std::string::npos) {
      const std::string size = e.substr(at + 2);
      try {
        r.min_bytes = parse_size(size);
      } catch (const ValueError& err) {
        throw UsageError("--fit '" + e + "': " + err.what());
      }
    }
    rules_.push_back(std::move(r));
  }
}

bool FitSelection::selects(const Comparison& c) const {
  for (const Rule& r : rules_) {
    if (c.bytes >= r.min_bytes && (r.name == c.workload || r.name == c.label())) return true;
  }
  return false;
}

namespace {

/// The accessors `o.parameters` names (default: those a p2p sweep pins down). Throws UsageError naming the
/// valid ones for an unknown name.
std::vector<const Accessor*> chosen_accessors(const CalibrateOptions& o) {
  std::vector<const Accessor*> chosen;
  if (o.parameters.empty()) {
    for (const auto& a : accessors())
      if (a.default_fit) chosen.push_back(&a);
    return chosen;
  }
  for (const auto& name : o.parameters) {
    auto it = std::find_if(accessors().begin(), accessors().end(),
                           [&](const Accessor& a) { return a.parameter.name == name; });
    if (it == accessors().end()) {
      std::string valid;
      for (const auto& a : accessors()) valid += (valid.empty() ? "" : ", ") + a.parameter.name;
      throw UsageError("unknown parameter '" + name + "'; calibrate can fit: " + valid);
    }
    chosen.push_back(&*it);
  }
  return chosen;
}

}  // namespace

std::vector<std::string> fitted_parameter_names(const CalibrateOptions& o) {
  std::vector<std::string> out;
  for (const Accessor* a : chosen_accessors(o)) out.push_back(a->parameter.name);
  return out;
}

FitLoss parse_fit_loss(const std::string& name) {
  if (name == "squared") return FitLoss::Squared;
  if (name == "soft-l1") return FitLoss::SoftL1;
  throw UsageError("unknown loss '" + name + "'; valid: squared, soft-l1");
}

const char* fit_loss_name(FitLoss loss) {
  return loss == FitLoss::SoftL1 ? "soft-l1" : "squared";
}

CalibrateResult fit_rows(const models::ModelParams& start, const RowPredictor& predict_rows,
                         const CalibrateOptions& o) {
  if (o.loss == FitLoss::SoftL1 && !(o.loss_scale > 0 && std::isfinite(o.loss_scale)))
    throw UsageError("--loss-scale must be a positive number of sigmas, not " + std::to_string(o.loss_scale));
  const std::vector<const Accessor*> chosen = chosen_accessors(o);
  std::vector<FitParameter> ps;
  std::vector<double> x0;
  for (const Accessor* a : chosen) {
    ps.push_back(a->parameter);
    x0.push_back(std::clamp(a->get(start), a->parameter.lower, a->parameter.upper));
  }
  const auto n = static_cast<Eigen::Index>(ps.size());
  auto from_unit = [&](const Eigen::VectorXd& u) {
    std::vector<double> v(ps.size());
    for (std::size_t i = 0; i < ps.size(); ++i)
      v[i] =
          ps[i].lower + std::clamp(u(static_cast<Eigen::Index>(i)), 0.0, 1.0) * (ps[i].upper - ps[i].lower);
    return v;
  };
  CalibrateResult result;
  // Weighted residuals; with `robust`, mapped so that their squares sum to the soft-L1 loss (the same sign,
  // smooth at zero), which Levenberg-Marquardt then minimises as it does squares.
  auto residuals_of = [&](const std::vector<Comparison>& rows, bool robust) {
    Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size()));
    const double c = o.loss_scale;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double sigma = rows[i].bytes >= (1u << 20) ? o.sigma_large : o.sigma_small;
      const double x = rows[i].error() / sigma;
      r(static_cast<Eigen::Index>(i)) =
          robust ? c * std::copysign(std::sqrt(2 * (std::sqrt(1 + (x / c) * (x / c)) - 1)), x) : x;
    }
    return r;
  };
  const bool robust = o.loss == FitLoss::SoftL1;
  // The residuals at `u`; safe on several threads (the Jacobian's columns), so it counts nothing.
  auto residuals_at = [&](const Eigen::VectorXd& u, bool robust_now) {
    return residuals_of(predict_rows(with_values(start, ps, from_unit(u))), robust_now);
  };
  auto residuals_as = [&](const Eigen::VectorXd& u, bool robust_now) {
    ++result.evaluations;
    return residuals_at(u, robust_now);
  };
  auto residuals = [&](const Eigen::VectorXd& u) { return residuals_as(u, robust); };

  Eigen::VectorXd u(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = ps[static_cast<std::size_t>(i)];
    u(i) = (x0[static_cast<std::size_t>(i)] - p.lower) / (p.upper - p.lower);
  }
  Eigen::VectorXd r = residuals(u);
  if (r.size() == 0) {
    throw UsageError("no measured rows to fit (fitted workloads: " + join(o.workloads, ", ") + ")");
  }
  if (r.size() <= n) {
    throw UsageError("only " + std::to_string(r.size()) + " measured sizes to fit " + std::to_string(n) +
                     " parameters: the fit would be degenerate");
  }
  // Columns on up to `jobs` threads: each is its own prediction (predict_rows builds its own models and
  // runtimes), written to its own column, so the matrix does not depend on the thread count.
  const int jobs = std::max(
      1, std::min(static_cast<int>(n),
                  o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))));
  const auto jacobian_as = [&](const Eigen::VectorXd& at, const Eigen::VectorXd& r_at, bool robust_now) {
    Eigen::MatrixXd j(r_at.size(), n);
    constexpr double h = 1e-3;
    const auto column = [&](Eigen::Index k) {
      Eigen::VectorXd step = at;
      const double dir = at(k) + h <= 1.0 ? h : -h;  // stay inside the bounds
      step(k) += dir;
      j.col(k) = (residuals_at(step, robust_now) - r_at) / dir;
    };
    result.evaluations += static_cast<int>(n);
    if (jobs == 1) {
      for (Eigen::Index k = 0; k < n; ++k) column(k);
      return j;
    }
    std::atomic<Eigen::Index> next{0};
    std::vector<std::exception_ptr> failed(static_cast<std::size_t>(n));  // per column: the first one wins
    const auto worker = [&] {
      for (Eigen::Index k; (k = next++) < n;) {
        try {
          column(k);
        } catch (...) {
          failed[static_cast<std::size_t>(k)] = std::current_exception();
        }
      }
    };
    {
      // jthreads join when the pool goes, also if starting one throws: none outlives what it reads.
      std::vector<std::jthread> pool;
      pool.reserve(static_cast<std::size_t>(jobs - 1));
      for (int t = 1; t < jobs; ++t) pool.emplace_back(worker);
      worker();
    }
    for (const std::exception_ptr& e : failed) {
      if (e) std::rethrow_exception(e);
    }
    return j;
  };
  const auto jacobian = [&](const Eigen::VectorXd& at, const Eigen::VectorXd& r_at) {
    return jacobian_as(at, r_at, robust);
  };
  result.start_cost = r.squaredNorm();
  double cost = result.start_cost;
  double lambda = 1e-2;
  Eigen::MatrixXd j = jacobian(u, r);
  for (result.iterations = 0; result.iterations < o.max_iterations; ++result.iterations) {
    const Eigen::MatrixXd jtj = j.transpose() * j;
    const Eigen::VectorXd g = j.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 8 && !improved; ++tries) {
      Eigen::MatrixXd a = jtj;
      a.diagonal() += lambda * (jtj.diagonal().array() + 1e-9).matrix();
      Eigen::VectorXd next = u - a.ldlt().solve(g);
      next = next.cwiseMax(0.0).cwiseMin(1.0);
      const Eigen::VectorXd rn = residuals(next);
      const double cn = rn.squaredNorm();
      if (cn < cost) {
        const double gain = (cost - cn) / cost;
        u = next, r = rn, cost = cn;
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        if (gain < 1e-5) tries = 99;  // converged: the last step bought almost nothing
      } else {
        lambda *= 4;
      }
    }
    if (!improved || lambda > 1e6) break;
    j = jacobian(u, r);
  }
  result.cost = cost;
  if (robust) {
    // The confidence below is least squares' at the robust optimum: the plain weighted residuals and their
    // Jacobian, so standard errors and bands mean what they mean for a squared fit.
    r = residuals_as(u, false);
    j = jacobian_as(u, r, false);
  }
  const double raw_cost = r.squaredNorm();

  // Confidence: covariance of u from the Jacobian at the optimum, scaled by the residual variance.
  const Eigen::Index m = r.size();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(j, Eigen::ComputeThinV);
  const auto& sv = svd.singularValues();
  result.condition = sv(n - 1) > 0 ? sv(0) / sv(n - 1) : INFINITY;
  const double s2 = raw_cost / static_cast<double>(m - n);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Constant(n, n, INFINITY);
  if (sv(n - 1) > 1e-12 * sv(0)) cov = (j.transpose() * j).inverse() * s2;
  const std::vector<double> values = from_unit(u);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    FittedValue f{ps[k], x0[k], values[k], std::sqrt(cov(i, i)) * (ps[k].upper - ps[k].lower),
                  u(i) <= 1e-6 || u(i) >= 1 - 1e-6};
    if (!f.at_bound && !(f.std_error <= o.max_relative_std_error * std::max(std::fabs(f.value), 1e-12))) {
      result.degenerate = true;
      result.unpinned.push_back(f.parameter.name);
      result.why_degenerate += (result.why_degenerate.empty() ? "" : "; ") + f.parameter.name +
                               " is not pinned down by the data (standard error " +
                               std::to_string(f.std_error) + " " + f.parameter.unit + " on " +
                               std::to_string(f.value) + ")";
    }
    result.values.push_back(f);
  }
  if (!std::isfinite(result.condition) || result.condition > kMaxCondition) {
    result.degenerate = true;
    // Name what is missing: parameters no fitted row depends on; otherwise the trade-off itself.
    const double largest = j.colwise().norm().maxCoeff();
    for (Eigen::Index k = 0; k < n; ++k) {
      if (j.col(k).norm() <= 1e-9 * largest) result.unused.push_back(ps[static_cast<std::size_t>(k)].name);
    }
    const std::string unused = join(result.unused, ", ");
    char cond[32];
    std::snprintf(cond, sizeof cond, "%.3g", result.condition);
    // The direction the data cannot see: the right singular vector of the smallest singular value.
    const Eigen::VectorXd v = svd.matrixV().col(n - 1).cwiseAbs();
    std::string traded;
    for (Eigen::Index k = 0; k < n; ++k) {
      if (v(k) >= 0.3 * v.maxCoeff())
        traded += (traded.empty() ? "" : ", ") + ps[static_cast<std::size_t>(k)].name;
    }
    const std::string rank =
        "the Jacobian is (nearly) rank-deficient (condition number " + std::string(cond) + "): ";
    if (!unused.empty()) {
      result.why_degenerate =
          "no fitted row depends on " + unused + " (add data that exercises it, or fit without it)";
    } else if (traded.find(',') == std::string::npos) {
      result.barely.push_back(traded);
      result.why_degenerate =
          rank + "the data barely depends on " + traded + " (add data that exercises it, or fit without it)";
    } else {
      result.why_degenerate =
          rank + traded +
          " trade off against each other in this data (add data that separates them, or fit fewer)";
    }
  }
  // Each fitted row's relative prediction uncertainty from the parameters' covariance: the residual's
  // gradient times sigma is the relative prediction's gradient.
  result.params = with_values(start, ps, values);
  result.fitted_rows = predict_rows(result.params);
  result.prediction_rel_se.assign(result.fitted_rows.size(), 0.0);
  if (std::isfinite(cov(0, 0))) {
    for (Eigen::Index i = 0; i < m && i < static_cast<Eigen::Index>(result.fitted_rows.size()); ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double sigma = result.fitted_rows[k].bytes >= (1u << 20) ? o.sigma_large : o.sigma_small;
      const Eigen::RowVectorXd gi = j.row(i) * sigma;
      result.prediction_rel_se[k] = std::sqrt(std::max(0.0, (gi * cov * gi.transpose())(0, 0)));
    }
  }
  return result;
}

CalibrateResult calibrate(const topo::Topology& topology, const models::ModelParams& start,
                          const models::NcclEnv& env, const CalibrateOptions& o) {
  if (o.measured.empty() && o.nccl_tests.empty())
    throw UsageError("calibrate needs --measured DIR... or --nccl-tests FILE...");
  chosen_accessors(o);  // unknown names fail before any data is read
  std::vector<MeasuredRun> runs;
  for (const auto& dir : o.measured) runs.push_back(load_measured(dir));
  std::vector<NcclTestsRun> logs;
  for (const auto& f : o.nccl_tests) {
    for (auto& r : parse_nccl_tests(read_file(f), f)) logs.push_back(std::move(r));
  }
  const GpuMap map = o.gpu_map.empty() ? GpuMap{} : GpuMap::from_csv(o.gpu_map);
  const FitSelection selection(o.workloads);
  auto is_fitted = [&](const Comparison& c) { return selection.selects(c); };
  // Predictions for every measured row under `p`, split into fitted and held-out rows.
  auto predict = [&](const models::ModelParams& p, std::vector<Comparison>& fitted,
                     std::vector<Comparison>* held_out) {
    const auto model = models::make_transfer_model("nccl", p, env);
    sim::Runtime rt(topology, *model);
    std::vector<std::vector<Comparison>> sets;
    for (const auto& run : runs) sets.push_back(compare_measured(run, rt));
    if (!logs.empty()) sets.push_back(compare(logs, rt, map));
    for (auto& set : sets) {
      for (auto& c : set) {
        if (is_fitted(c)) {
          fitted.push_back(std::move(c));
        } else if (held_out) {
          held_out->push_back(std::move(c));
        }
      }
    }
  };
  CalibrateResult result = fit_rows(
      start,
      [&](const models::ModelParams& p) {
        std::vector<Comparison> fitted;
        predict(p, fitted, nullptr);
        return fitted;
      },
      o);
  std::vector<Comparison> fitted;
  predict(result.params, fitted, &result.held_out_rows);
  set_fitted_on(result, topology);
  for (const auto& run : runs) {
    if (const auto v = run.doc.find("nccl_version"); v != run.doc.end() && v->is_number_integer())
      if (const std::string t = nccl_version_text(v->get<long>()); !t.empty()) result.nccl_versions.insert(t);
  }
  for (const auto& log : logs) {
    if (!log.nccl_version.empty()) result.nccl_versions.insert(log.nccl_version);
  }
  // The written set is fitted: its band is this fit's, never narrower than a fitted start set's.
  result.params.band = band_from_fit(result.fitted_rows, result.prediction_rel_se,
                                     extreme_spread(result.fitted_rows), start.band, &result.band_kept);
  result.band_fitted = true;
  keep_start_band(result, start);
  with_band(result.fitted_rows, result.params);
  with_band(result.held_out_rows, result.params);
  return result;
}

void set_fitted_on(CalibrateResult& r, const topo::Topology& topology) {
  r.gpu = topology.gpu_model();
  // Rows were checked against the topology when they were read: their GPUs are its GPUs.
  auto node = [&](int g) { return topology.gpus.at(static_cast<std::size_t>(g)).node; };
  r.fitted_network = std::any_of(r.fitted_rows.begin(), r.fitted_rows.end(), [&](const Comparison& c) {
    return std::any_of(c.gpus.begin(), c.gpus.end(), [&](int g) { return node(g) != node(c.gpus.front()); });
  });
}

void keep_start_band(CalibrateResult& r, const models::ModelParams& start) {
  if (!r.band_fitted || start.fitted.empty()) return;
  struct Side {
    double models::BandParams::*member;
    const char* name;
  };
  static constexpr Side kSides[] = {{&models::BandParams::latency_below, "below 1 MiB, lower side"},
                                    {&models::BandParams::latency_above, "below 1 MiB, upper side"},
                                    {&models::BandParams::bandwidth_below, "from 1 MiB, lower side"},
                                    {&models::BandParams::bandwidth_above, "from 1 MiB, upper side"}};
  r.band_widened.clear();
  for (const Side& s : kSides) {
    if (start.band.*s.member > r.params.band.*s.member) {
      r.params.band.*s.member = start.band.*s.member;
      r.band_widened += std::string(r.band_widened.empty() ? "" : "; ") + s.name;
    }
  }
}

RunSpread extreme_spread(const std::vector<Comparison>& rows) {
  RunSpread s;
  for (const Comparison& c : rows) {
    if (c.runs < 2 || !(c.measured_us > 0)) continue;
    const int b = static_cast<int>(bound_of(c.bytes));
    s.below[b].push_back(std::max(0.0, 1 - c.min_us / c.measured_us));
    s.above[b].push_back(std::max(0.0, c.max_us / c.measured_us - 1));
  }
  return s;
}

models::BandParams band_from_fit(const std::vector<Comparison>& fitted, const std::vector<double>& rel_se,
                                 const RunSpread& spread, const models::BandParams& fallback,
                                 std::string* kept) {
  std::vector<double> residual[2], se2[2];
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    const int b = static_cast<int>(bound_of(fitted[k].bytes));
    residual[b].push_back(fitted[k].measured_us / fitted[k].predicted_us - 1);
    if (k < rel_se.size()) se2[b].push_back(rel_se[k] * rel_se[k]);
  }
  models::BandParams band = fallback;
  for (int b = 0; b < 2; ++b) {
    if (residual[b].empty()) continue;  // nothing fitted in this bound: keep the start set's band
    if (spread.below[b].empty()) {      // no repeated run: the runs' spread is unknown, keep it too
      if (kept) *kept += std::string(kept->empty() ? "" : " and ") + (b == 0 ? "below 1 MiB" : "from 1 MiB");
      continue;
    }
    double mean_se2 = 0;
    for (double v : se2[b]) mean_se2 += v;
    mean_se2 = se2[b].empty() ? 0 : mean_se2 / static_cast<double>(se2[b].size());
    const double fit2 = 1.645 * 1.645 * mean_se2;
    auto half = [&](double model, double runs) {
      // A band of zero width cannot be written (and would claim certainty no measurement has).
      return std::clamp(std::sqrt(model * model + runs * runs + fit2), 1e-3, 0.95);
    };
    const double lo = half(std::max(0.0, -quantile(residual[b], 0.05)), quantile(spread.below[b], 0.9));
    const double hi = half(std::max(0.0, quantile(residual[b], 0.95)), quantile(spread.above[b], 0.9));
    (b == 0 ? band.latency_below : band.bandwidth_below) = lo;
    (b == 0 ? band.latency_above : band.bandwidth_above) = hi;
  }
  return band;
}

namespace {

/// A [band] table, each value to 4 significant digits.
toml::table band_table(const models::BandParams& b) {
  toml::table band;
  auto put = [&](const char* key, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    band.insert_or_assign(key, std::stod(buf));
  };
  put("latency_below", b.latency_below);
  put("latency_above", b.latency_above);
  put("bandwidth_below", b.bandwidth_below);
  put("bandwidth_above", b.bandwidth_above);
  return band;
}

/// A set written from `set_file`'s keys to `out_file` keeps its base (`base = "FILE"`, relative to
/// `set_file`'s folder): rewritten relative to `out_file`'s folder, or absolute without an `out_file`.
void rebase(toml::table& root, const std::string& set_file, const std::string& out_file) {
  const auto base = root["base"].value<std::string>();
  if (!base) return;
  namespace fs = std::filesystem;
  // Resolved through the file system (symlinks included), as ModelParams::load resolves it.
  const fs::path target = fs::weakly_canonical(fs::absolute(fs::path(set_file).parent_path() / *base));
  const fs::path written =
      out_file.empty()
          ? target
          : target.lexically_proximate(fs::weakly_canonical(fs::absolute(fs::path(out_file)).parent_path()));
  root.insert_or_assign("base", written.generic_string());
}

}  // namespace

std::string params_with_band_toml(const std::string& set_file, const models::BandParams& band,
                                  const std::vector<std::string>& comment, const std::string& out_file) {
  toml::table root = parse_toml(read_file(set_file), set_file);
  rebase(root, set_file, out_file);
  root.insert_or_assign("band", band_table(band));
  std::ostringstream out;
  for (const auto& line : comment) out << "# " << line << "\n";
  out << toml::toml_formatter{root} << "\n";
  return out.str();
}

std::string fitted_params_toml(const CalibrateResult& res, const std::string& start_file,
                               const std::string& name, const CalibrateOptions& o,
                               const std::string& out_file) {
  toml::table root;
  if (!start_file.empty()) {
    root = parse_toml(read_file(start_file), start_file);
    rebase(root, start_file, out_file);
  }
  std::vector<std::string> inputs = o.measured;
  inputs.insert(inputs.end(), o.nccl_tests.begin(), o.nccl_tests.end());
  inputs.insert(inputs.end(), o.manifests.begin(), o.manifests.end());
  const std::string data = join(inputs, ", ");
  const std::string workloads = o.workloads.empty() ? "every" : join(o.workloads, ", ");
  const bool band_only = res.band_fitted && res.values.empty();  // values kept, only [band] computed
  root.insert_or_assign("name", name);
  // What a fitted set was measured on: the data's GPU model, NCCL version and whether it crossed a network,
  // not the start set's (a set fitted on H100 data from h200.toml is an H100 set). Several versions, or none
  // recorded: no version is claimed. --band-only keeps the start set's values, and so what they were fitted
  // on.
  if (!band_only) {
    if (res.gpu.empty()) {
      root.erase("gpu");
    } else {
      root.insert_or_assign("gpu", res.gpu);
    }
    root.insert_or_assign("fitted_network", res.fitted_network);
    root.insert_or_assign("fitted", "commsim calibrate on " + workloads + " rows of " + data);
    if (res.nccl_versions.size() == 1) {
      root.insert_or_assign("nccl_version", *res.nccl_versions.begin());
    } else {
      root.erase("nccl_version");
    }
  }
  for (const auto& f : res.values) {
    const auto dot = f.parameter.name.find('.');
    const std::string section = f.parameter.name.substr(0, dot), key = f.parameter.name.substr(dot + 1);
    if (!root.contains(section)) root.insert(section, toml::table{});
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", f.value);
    if (f.parameter.unit.empty()) {
      root[section].as_table()->insert_or_assign(key, std::stod(buf));
    } else {
      root[section].as_table()->insert_or_assign(key, std::string(buf) + f.parameter.unit);
    }
  }
  if (res.band_fitted) root.insert_or_assign("band", band_table(res.params.band));
  std::ostringstream out;
  out << "# Transfer-model parameters written by `commsim calibrate`"
      << (start_file.empty() ? "" : " over " + start_file) << ".\n";
  if (band_only) {
    out << "# Values unchanged; [band] computed from the predictions of every row of: " << data << "\n";
  } else {
    out << "# Fitted on the " << workloads << " rows of: " << data << "\n"
        << "# Weighted " << (o.loss == FitLoss::SoftL1 ? "soft-L1 loss" : "least squares")
        << " on relative error (sigma " << o.sigma_large * 100 << "% from 1 MiB, " << o.sigma_small * 100
        << "% below";
    if (o.loss == FitLoss::SoftL1) out << ", linear from " << o.loss_scale << " sigmas";
    out << "); cost " << res.start_cost << " -> " << res.cost << " over " << res.fitted_rows.size()
        << " sizes, " << res.iterations << " iterations.\n";
    if (res.degenerate) out << "# Degenerate fit, written anyway: " << res.why_degenerate << ".\n";
    if (res.nccl_versions.size() > 1) {
      out << "# The data ran NCCL";
      for (const auto& v : res.nccl_versions) out << " " << v;
      out << ": the set names no single version.\n";
    }
  }
  if (!res.band_kept.empty())
    out << "# [band] " << res.band_kept
        << " kept from the start set: no configuration there was measured more "
        << "than once, so the runs' spread is unknown.\n";
  if (!res.band_widened.empty())
    out << "# [band] " << res.band_widened
        << ": the start set's, wider than this fit's own (it was measured on every configuration the start "
           "set was fitted on; these rows show only their own error).\n";
  if (res.band_fitted)
    out << "# [band], per size regime (< 1 MiB, >= 1 MiB): the 5th/95th percentile of measured / predicted - "
           "1, the "
           "90th percentile of the runs' deviation from their configuration's median (every repeat and "
           "machine "
           "start) and 1.645 x the fitted predictions' standard error, in quadrature.\n";
  for (const auto& f : res.values) {
    char line[200];
    std::snprintf(line, sizeof line, "#   %-26s %10.4g %-4s +- %.2g%s\n", f.parameter.name.c_str(), f.value,
                  f.parameter.unit.c_str(), f.std_error, f.at_bound ? "  (at its bound)" : "");
    out << line;
  }
  out << toml::toml_formatter{root} << "\n";
  return out.str();
}

}  // namespace commsim::validation
