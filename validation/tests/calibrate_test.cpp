// calibrate: brings perturbed parameters back to the data, reports held-out rows, flags degenerate fits.
#include <doctest/doctest.h>
#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/models/params.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/calibrate.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

const std::string kSrc = COMMSIM_SOURCE_DIR;

topo::Topology h200x4() {
  topo::Diagnostics diag;
  return topo::load_topology(kSrc + "/topologies/library/real/h200x4.topo", {}, diag);
}

CalibrateOptions exchange_batched() {
  CalibrateOptions o;
  o.measured = {kSrc + "/validation/data/h200x4/measure/exchange_batched",
                kSrc + "/validation/data/h200x4/measure/sendrecv_g2"};
  o.workloads = {"exchange"};
  o.max_iterations = 25;
  return o;
}

double value_of(const CalibrateResult& r, const std::string& name) {
  for (const auto& v : r.values)
    if (v.parameter.name == name) return v.value;
  FAIL("no fitted value " << name);
  return 0;
}

}  // namespace

TEST_CASE("calibrate: a fit from a perturbed start lowers the cost and holds other workloads out") {
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  // Move two well-determined parameters away from the fitted set; the fit must bring the error back down.
  models::ModelParams perturbed = models::ModelParams::parse(
      "[simple]\nchannel_bandwidth = \"14GBps\"\nbase_latency = \"3us\"\n", "<test>", start);
  CalibrateOptions o = exchange_batched();
  o.parameters = {"simple.channel_bandwidth", "simple.base_latency"};
  const auto r = calibrate(h200x4(), perturbed, {}, o);
  CHECK(r.cost < 0.2 * r.start_cost);
  CHECK(!r.degenerate);
  CHECK(r.fitted_rows.size() == 31);
  CHECK(!r.held_out_rows.empty());
  for (const auto& c : r.held_out_rows) CHECK(c.workload == "sendrecv");
  // Close to the committed fit (which used more data), and with a finite, small standard error.
  CHECK(value_of(r, "simple.channel_bandwidth") == doctest::Approx(20.8).epsilon(0.15));
  for (const auto& v : r.values) CHECK(v.std_error < 0.5 * v.value);
  const std::string toml = fitted_params_toml(r, kSrc + "/models/params/h200.toml", "refit", o);
  const auto reread = models::ModelParams::parse(toml, "<written>", models::ModelParams::defaults());
  CHECK(reread.name == "refit");
  CHECK(reread.simple.channel_bandwidth / 1e9 ==
        doctest::Approx(value_of(r, "simple.channel_bandwidth")).epsilon(1e-3));
  CHECK(reread.launch_per_op ==
        start.launch_per_op);  // keys calibrate did not fit are kept from the start file
  // A start written over a base keeps its base, rewritten to name the same file from where it is written.
  const std::string over = kSrc + "/validation/data/h200x4/host-2026-11-21.toml";
  const auto dir = std::filesystem::temp_directory_path() / "commsim_calibrate_test";
  std::filesystem::create_directories(dir);
  const auto out = dir / "over.toml";
  const std::string written = fitted_params_toml(r, over, "refit", o, out.string());
  std::ofstream(out) << written;
  const auto loaded = models::ModelParams::load(out.string());
  CHECK(loaded.launch_per_gpu == models::ModelParams::load(over).launch_per_gpu);
  CHECK(loaded.simple.channel_bandwidth / 1e9 ==
        doctest::Approx(value_of(r, "simple.channel_bandwidth")).epsilon(1e-3));
  // Without an output file it is absolute.
  const std::string absolute = fitted_params_toml(r, over, "refit", o);
  CHECK(absolute.find("base = '" +
                      (std::filesystem::path(kSrc) / "models/params/h200.toml").generic_string()) !=
        std::string::npos);
}

TEST_CASE("calibrate: a fit on commsim-measure runs writes its band, GPU model and NCCL version") {
  // Until session 28 only manifest fits computed a band: a set fitted from --measured or --nccl-tests data
  // was labelled fitted yet carried its start set's band, and kept the start set's GPU model.
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  CalibrateOptions o = exchange_batched();
  o.parameters = {"simple.channel_bandwidth", "simple.base_latency"};
  const auto r = calibrate(h200x4(), start, {}, o);
  CHECK(r.band_fitted);
  CHECK(r.band_kept.empty());
  CHECK(r.gpu == "H200");
  CHECK(r.nccl_versions == std::set<std::string>{"2.28.3"});
  // The band is this fit's (its residuals, its rows' spread and standard errors) where that is wider than
  // h200.toml's, and h200.toml's where it is not: an exchange on one pair cannot show the set's error on the
  // rest (session 41, keep_start_band). Here every side of the fit's own is narrower.
  const models::BandParams own =
      band_from_fit(r.fitted_rows, r.prediction_rel_se, extreme_spread(r.fitted_rows), start.band);
  CHECK(own.latency_below < start.band.latency_below);
  CHECK(own.bandwidth_above < start.band.bandwidth_above);
  CHECK(r.params.band.latency_below == std::max(own.latency_below, start.band.latency_below));
  CHECK(r.params.band.latency_above == std::max(own.latency_above, start.band.latency_above));
  CHECK(r.params.band.bandwidth_below == std::max(own.bandwidth_below, start.band.bandwidth_below));
  CHECK(r.params.band.bandwidth_above == std::max(own.bandwidth_above, start.band.bandwidth_above));
  CHECK(r.band_widened.find("below 1 MiB, lower side") != std::string::npos);
  for (const auto& c : r.fitted_rows) CHECK(c.predicted_lo_us < c.predicted_hi_us);
  const std::string toml = fitted_params_toml(r, kSrc + "/models/params/h200.toml", "refit", o);
  const auto reread = models::ModelParams::parse(toml, "<written>", models::ModelParams::defaults());
  CHECK(reread.band.latency_above == doctest::Approx(r.params.band.latency_above).epsilon(1e-3));
  CHECK(reread.band.latency_below == doctest::Approx(start.band.latency_below).epsilon(1e-3));
  CHECK(toml.find("# [band] " + r.band_widened + ": the start set's, wider than this fit's own") !=
        std::string::npos);
  CHECK(reread.gpu == "H200");
  CHECK(reread.nccl_version == "2.28.3");
  CHECK(!r.fitted_network);  // one machine: its band says nothing about a network
  CHECK(!reread.fitted_network);
  CHECK(toml.find("fitted_network = false") != std::string::npos);
  // A fit on another GPU model's data names that model, not the start set's; data from several NCCL
  // versions names none.
  CalibrateResult other = r;
  other.gpu = "H100";
  other.nccl_versions = {"2.27.7", "2.28.3"};
  const std::string h100 = fitted_params_toml(other, kSrc + "/models/params/h200.toml", "h100-refit", o);
  const auto h100_set = models::ModelParams::parse(h100, "<written>", models::ModelParams::defaults());
  CHECK(h100_set.gpu == "H100");
  CHECK(h100_set.nccl_version.empty());
  CHECK(h100.find("# The data ran NCCL 2.27.7 2.28.3") != std::string::npos);
  // --band-only keeps the start set's values, and so what they were fitted on.
  CalibrateResult band_only;
  band_only.params = start;
  band_only.band_fitted = true;
  band_only.gpu = "H100";
  band_only.nccl_versions = {"2.27.7"};
  const auto kept = models::ModelParams::parse(
      fitted_params_toml(band_only, kSrc + "/models/params/h200.toml", "h200-band", o), "<written>",
      models::ModelParams::defaults());
  CHECK(kept.gpu == "H200");
  CHECK(kept.nccl_version == "2.28.3");
  other.gpu.clear();
  CHECK(models::ModelParams::parse(fitted_params_toml(other, kSrc + "/models/params/h200.toml", "mixed", o),
                                   "<written>", models::ModelParams::defaults())
            .gpu.empty());
}

TEST_CASE(
    "calibrate: a refit of a fitted set never narrows its band, a refit of the datasheet set writes its "
    "own") {
  CalibrateResult r;
  r.band_fitted = true;
  r.params.band = {0.10, 0.20, 0.05, 0.30};  // latency below/above, bandwidth below/above
  models::ModelParams fitted_start;
  fitted_start.fitted = "somewhere";
  fitted_start.band = {0.30, 0.10, 0.07, 0.11};
  keep_start_band(r, fitted_start);
  CHECK(r.params.band.latency_below == 0.30);  // the start's, wider
  CHECK(r.params.band.latency_above == 0.20);  // the fit's, wider
  CHECK(r.params.band.bandwidth_below == 0.07);
  CHECK(r.params.band.bandwidth_above == 0.30);
  CHECK(r.band_widened == "below 1 MiB, lower side; from 1 MiB, lower side");

  CalibrateResult d;
  d.band_fitted = true;
  d.params.band = {0.10, 0.20, 0.05, 0.30};
  models::ModelParams datasheet = fitted_start;
  datasheet.fitted.clear();
  keep_start_band(d, datasheet);
  CHECK(d.params.band.latency_below == 0.10);
  CHECK(d.params.band.bandwidth_below == 0.05);
  CHECK(d.band_widened.empty());

  CalibrateResult none;  // no band computed (band_fitted false): nothing to keep
  none.params.band = {0.10, 0.20, 0.05, 0.30};
  keep_start_band(none, fitted_start);
  CHECK(none.params.band.latency_below == 0.10);
}

TEST_CASE("calibrate: a fit on single runs keeps the start set's band and says so") {
  // One nccl-tests log: every size measured once, so the runs' spread is unknown.
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  CalibrateOptions o;
  o.nccl_tests = {kSrc + "/validation/data/h200x4/nccl-tests/sendrecv_g2_d01_r1.json"};
  o.workloads = {"sendrecv"};
  o.parameters = {"simple.channel_bandwidth"};
  const auto r = calibrate(h200x4(), start, {}, o);
  CHECK(r.band_kept == "below 1 MiB and from 1 MiB");
  CHECK(r.params.band.latency_below == start.band.latency_below);
  CHECK(r.params.band.bandwidth_above == start.band.bandwidth_above);
  CHECK(fitted_params_toml(r, kSrc + "/models/params/h200.toml", "one", o)
            .find("below 1 MiB and from 1 MiB kept from the start set") != std::string::npos);
}

TEST_CASE("calibrate: parameters that trade off exactly are reported as degenerate") {
  // A unidirectional p2p sweep is timed on the GPU: the host's launch cost does not move it at all.
  CalibrateOptions o;
  o.measured = {kSrc + "/validation/data/h200x4/measure/p2p_all"};
  o.parameters = {"host.launch_base", "simple.base_latency"};
  o.max_iterations = 2;
  const auto r = calibrate(h200x4(), models::ModelParams::load(kSrc + "/models/params/h200.toml"), {}, o);
  CHECK(r.degenerate);
  CHECK(r.why_degenerate.find("host.launch_base") != std::string::npos);
}

TEST_CASE("calibrate: a parameter the rows barely depend on is named in `barely`, not in `unused`") {
  // Synthetic rows: simple.base_latency moves every prediction; collective.ll128_base_latency moves them a
  // few billionths as much (as LL128's latency moves the few thread-per-GPU rows that run LL128 next to its
  // per-step latency): the Jacobian is rank-deficient along it alone (condition over 1e8), but its column is
  // not zero.
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const double a0 = static_cast<double>(start.simple.base_latency) / 1e6;
  const double b0 = static_cast<double>(start.coll.base_latency[1]) / 1e6;
  const RowPredictor predict = [&](const models::ModelParams& p) {
    std::vector<Comparison> rows;
    const double a = static_cast<double>(p.simple.base_latency) / 1e6;
    const double b = static_cast<double>(p.coll.base_latency[1]) / 1e6;
    for (int k = 0; k < 8; ++k) {
      Comparison c;
      c.workload = "sendrecv";
      c.bytes = (1ULL << 20) << k;
      c.measured_us = 100.0 * (k + 1);
      c.predicted_us = c.measured_us * (1 + 0.1 * (a - a0 - 0.5) * (1 + 0.01 * k) + 2e-10 * (b - b0));
      rows.push_back(c);
    }
    return rows;
  };
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "collective.ll128_base_latency"};
  const auto r = fit_rows(start, predict, o);
  CHECK(r.degenerate);
  CHECK(r.unused.empty());
  CHECK(r.barely == std::vector<std::string>{"collective.ll128_base_latency"});
  CHECK(r.why_degenerate.find("barely depends on collective.ll128_base_latency") != std::string::npos);
  // Without it the same rows pin the other one down.
  o.parameters = {"simple.base_latency"};
  const auto pinned = fit_rows(start, predict, o);
  CHECK(!pinned.degenerate);
  CHECK(pinned.barely.empty());
  CHECK(value_of(pinned, "simple.base_latency") == doctest::Approx(a0 + 0.5).epsilon(1e-3));
}

TEST_CASE("calibrate: a soft-L1 loss lets a size's slow mode pull the fit by its distance, not its square") {
  // Synthetic floors (< 1 MiB, sigma 8%): seven processes measured 10 us, three 16 us (a host's slow mode),
  // and every prediction is simple.base_latency itself. Least squares on relative error lands at
  // sum(1/m) / sum(1/m^2) = 10.860 us; the soft-L1 loss with its scale at 2 sigmas at 10.402 us and at
  // 0.5 sigmas at 10.111 us (each the minimum of its loss on a 1e-4 us grid).
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const RowPredictor predict = [](const models::ModelParams& p) {
    std::vector<Comparison> rows;
    for (int k = 0; k < 10; ++k) {
      Comparison c;
      c.workload = "sendrecv";
      c.bytes = 8ULL << k;
      c.measured_us = k < 7 ? 10.0 : 16.0;
      c.predicted_us = static_cast<double>(p.simple.base_latency) / 1e6;
      rows.push_back(c);
    }
    return rows;
  };
  CalibrateOptions o;
  o.parameters = {"simple.base_latency"};
  const auto squared = fit_rows(start, predict, o);
  CHECK(value_of(squared, "simple.base_latency") == doctest::Approx(10.860).epsilon(1e-3));
  o.loss = FitLoss::SoftL1;
  const auto robust = fit_rows(start, predict, o);
  CHECK(value_of(robust, "simple.base_latency") == doctest::Approx(10.402).epsilon(1e-3));
  CHECK(robust.cost < robust.start_cost);
  // Its standard error is least squares' at that optimum: the same rows, the same Jacobian, a larger
  // residual variance than at the squared optimum.
  CHECK(robust.values[0].std_error > squared.values[0].std_error);
  o.loss_scale = 0.5;
  CHECK(value_of(fit_rows(start, predict, o), "simple.base_latency") ==
        doctest::Approx(10.111).epsilon(1e-3));
  o.loss_scale = 0;
  CHECK_THROWS_AS(fit_rows(start, predict, o), UsageError);
  CHECK(parse_fit_loss("soft-l1") == FitLoss::SoftL1);
  CHECK(parse_fit_loss("squared") == FitLoss::Squared);
  try {
    parse_fit_loss("huber");
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("valid: squared, soft-l1") != std::string::npos);
  }
}

TEST_CASE("calibrate: the Jacobian's columns on several threads give the same fit, to the bit") {
  // Three parameters, each moving its own rows (and a little of the others'): the fit on one thread, on two
  // (one takes two columns) and on three (one column each; eight asked for are capped at the three columns)
  // must agree exactly, as must the evaluations counted; a prediction that throws, on whichever thread makes
  // it, reaches the caller.
  const auto start = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const RowPredictor predict = [](const models::ModelParams& p) {
    const double a = static_cast<double>(p.simple.base_latency) / 1e6;
    const double b = static_cast<double>(p.ll.base_latency) / 1e6;
    const double c = p.simple.channel_bandwidth / 1e9;
    std::vector<Comparison> rows;
    for (int k = 0; k < 24; ++k) {
      Comparison r;
      r.workload = "sendrecv";
      r.bytes = 8ULL << k;
      r.measured_us = 10.0 + 0.5 * k + (k % 3 == 1 ? 3.0 : 0.0);
      r.predicted_us = (k % 3 == 0   ? 1.3 * a
                        : k % 3 == 1 ? 1.1 * b + 0.1 * a
                                     : 0.2 * a + 0.2 * b) +
                       static_cast<double>(r.bytes) / (c * 1e3) + 0.5 * k;
      rows.push_back(r);
    }
    return rows;
  };
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "ll.base_latency", "simple.channel_bandwidth"};
  o.jobs = 1;
  const auto one = fit_rows(start, predict, o);
  for (int jobs : {2, 3, 8}) {
    CAPTURE(jobs);
    o.jobs = jobs;
    const auto many = fit_rows(start, predict, o);
    REQUIRE(many.values.size() == one.values.size());
    for (std::size_t i = 0; i < one.values.size(); ++i) {
      CHECK(many.values[i].value == one.values[i].value);
      CHECK(many.values[i].std_error == one.values[i].std_error);
    }
    CHECK(many.cost == one.cost);
    CHECK(many.iterations == one.iterations);
    CHECK(many.evaluations == one.evaluations);
  }
  CHECK(one.cost < one.start_cost);
  // The first prediction (the start) succeeds; every later one (the Jacobian's columns) throws.
  int calls = 0;
  std::mutex m;
  const RowPredictor failing = [&](const models::ModelParams& p) {
    {
      const std::lock_guard<std::mutex> lock(m);
      if (calls++ > 0) throw UsageError("row 7: no such configuration");
    }
    return predict(p);
  };
  o.jobs = 3;
  CHECK_THROWS_WITH_AS(fit_rows(start, failing, o), "row 7: no such configuration", UsageError);
}

TEST_CASE("calibrate: unknown parameters and empty selections are usage errors") {
  CalibrateOptions o = exchange_batched();
  o.parameters = {"simple.warp_speed"};
  CHECK_THROWS_AS(calibrate(h200x4(), models::ModelParams::defaults(), {}, o), UsageError);
  o.parameters = {};
  o.workloads = {"all_reduce"};
  CHECK_THROWS_AS(calibrate(h200x4(), models::ModelParams::defaults(), {}, o), UsageError);
}

TEST_CASE("calibrate: --fit selects workloads, single configurations and a smallest size") {
  Comparison p01, p02, ov_small, ov_large;
  p01.workload = p02.workload = "p2p";
  p01.gpus = {0, 1};
  p02.gpus = {0, 2};
  ov_small.workload = ov_large.workload = "exchange";
  ov_small.mode = ov_large.mode = "overlapped";
  ov_small.gpus = ov_large.gpus = {0, 1};
  ov_small.bytes = 512 * 1024;
  ov_large.bytes = 1 << 20;
  const FitSelection by_workload({"p2p"});
  CHECK(by_workload.selects(p01));
  CHECK(by_workload.selects(p02));
  CHECK_FALSE(by_workload.selects(ov_large));
  const FitSelection by_label({"p2p 0->1", "exchange gpus 0,1 overlapped >=1MiB"});
  CHECK(by_label.selects(p01));
  CHECK_FALSE(by_label.selects(p02));
  CHECK_FALSE(by_label.selects(ov_small));
  CHECK(by_label.selects(ov_large));
  CHECK(FitSelection({"exchange>=1MiB"}).selects(ov_large));
  CHECK(FitSelection({}).empty());
  CHECK_THROWS_WITH_AS(FitSelection({"p2p >=lots"}), doctest::Contains("--fit 'p2p >=lots'"), UsageError);
}

TEST_CASE("calibrate: host.launch_per_op is fitted from the latency floor of a grouped alltoall") {
  // 4-GPU alltoall issues 8 ncclSend/ncclRecv calls per GPU (the copy to self included) where sendrecv issues
  // 2: its floor pins the per-call enqueue cost. Start from 1 us (the committed set says 0.25 us).
  const auto fitted = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto start = models::ModelParams::parse("[host]\nlaunch_per_op = \"1us\"\n", "<test>", fitted);
  CalibrateOptions o;
  o.nccl_tests = {kSrc + "/validation/data/h200x4/nccl-tests/alltoall_g4.log"};
  o.gpu_map = kSrc + "/validation/data/h200x4/meta/gpus.csv";
  o.workloads = {"alltoall"};
  o.parameters = {"host.launch_per_op"};
  const auto r = calibrate(h200x4(), start, {}, o);
  CHECK(!r.degenerate);
  CHECK(r.cost < 0.2 * r.start_cost);
  const double v = value_of(r, "host.launch_per_op");
  CHECK(v > 0.1);
  CHECK(v < 0.5);
  CHECK(std::abs(v - 1e-6 * static_cast<double>(fitted.launch_per_op)) <
        3 * r.values.front().std_error + 0.05);
}
