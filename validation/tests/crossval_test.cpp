// Manifests, prediction bands and leave-one-family-out cross-validation: parsing, refusals, closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/params.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/crossval.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

const std::string kSrc = COMMSIM_SOURCE_DIR;
const std::string kData = kSrc + "/validation/data/h200x4/nccl-tests/";

topo::Topology load(const std::string& file, const std::string& gpu = "") {
  topo::Diagnostics diag;
  return topo::load_topology(kSrc + "/topologies/library/real/" + file, {gpu, ""}, diag);
}

/// A manifest in the temporary folder with `body` under the header; returns its path.
std::string manifest(const std::string& name, const std::string& body) {
  const auto path = (std::filesystem::temp_directory_path() / ("commsim-" + name + ".csv")).string();
  write_file_atomic(path, "file,start,workload,gpus,launch,nccl_env,repeat\n" + body);
  return path;
}

/// A manifest of one nccl-tests sendrecv run on GPUs 0,1 and one on GPUs 0,2 (start s1).
std::string two_pairs(const std::string& name) {
  return manifest(name, kData + "sendrecv_g2_d01_r1.json,s1,sendrecv,\"0,1\",single-thread,,1\n" + kData +
                            "sendrecv_g2_d02.json,s1,sendrecv,\"0,2\",single-thread,,1\n");
}

/// h200.toml with the host costs of the start the data comes from (2026-11-21), the 4x H200 topology and the
/// two_pairs manifest's data.
struct TwoPairData {
  models::ModelParams h200 = models::ModelParams::load(kSrc + "/validation/data/h200x4/host-2026-11-21.toml");
  topo::Topology topology = load("h200x4.topo");
  ManifestData data;
  explicit TwoPairData(const std::string& name)
      : data(load_manifest_data({two_pairs(name)}, topology, h200)) {}
};

/// A joined row of `bytes` with its measured and predicted times (us).
Comparison comparison(std::uint64_t bytes, double measured, double predicted) {
  Comparison c;
  c.bytes = bytes;
  c.measured_us = measured;
  c.predicted_us = predicted;
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("manifest: quoted GPU lists, launch, knobs and repeats are read, paths resolve against the file") {
  const auto m = manifest("read",
                          "a.json,s1,sendrecv,\"0,2\",single-thread,,2\n"
                          "/abs/b.json,s2,all_reduce,0-3,thread-per-gpu,NCCL_PROTO=LL NCCL_ALGO=Ring,1\n");
  const auto e = load_manifest(m);
  REQUIRE(e.size() == 2);
  CHECK(e[0].file == std::filesystem::path(m).parent_path().string() + "/a.json");
  CHECK(e[0].gpus == std::vector<int>{0, 2});
  CHECK(!e[0].thread_per_gpu);
  CHECK(e[0].repeat == 2);
  CHECK(e[0].nccl_env.empty());
  CHECK(e[1].file == "/abs/b.json");
  CHECK(e[1].gpus == std::vector<int>{0, 1, 2, 3});
  CHECK(e[1].thread_per_gpu);
  CHECK(e[1].nccl_env == std::vector<std::string>{"NCCL_PROTO=LL", "NCCL_ALGO=Ring"});
}

TEST_CASE("manifest: bad cells name file, line and column") {
  const auto launch = manifest("launch", "a.json,s1,sendrecv,0-1,mpi,,1\n");
  CHECK(error_of([&] { load_manifest(launch); }).find(launch + ":2:24: error: launch must be") !=
        std::string::npos);
  const auto knob = manifest("knob", "a.json,s1,sendrecv,0-1,single-thread,NCCL_FOO=1,1\n");
  CHECK(error_of([&] { load_manifest(knob); }).find(":2:38: error: --nccl-env: unknown knob") !=
        std::string::npos);
  const auto op = manifest("op", "a.json,s1,allreduce,0-1,single-thread,,1\n");
  CHECK(error_of([&] { load_manifest(op); }).find("cannot simulate nccl-tests 'allreduce'") !=
        std::string::npos);
  const auto repeat = manifest("repeat", "a.json,s1,sendrecv,0-1,single-thread,,0\n");
  CHECK(error_of([&] { load_manifest(repeat); }).find("repeat must be a positive integer") !=
        std::string::npos);
  const auto unquoted = manifest("unquoted", "a.json,s1,sendrecv,0,2,single-thread,,1\n");
  CHECK(error_of([&] { load_manifest(unquoted); }).find("expected 7 cells, found 8") != std::string::npos);
}

TEST_CASE("manifest: data from another machine is refused naming the mismatch") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  // The H200 runs against an 8x H100 topology: another GPU model.
  const auto m = manifest("h100", kData + "sendrecv_g2_d02.json,s1,sendrecv,\"0,2\",single-thread,,1\n");
  const std::string gpu = error_of([&] { load_manifest_data({m}, load("hgx-h100.topo", "H100"), h200); });
  CHECK(gpu.find("measured on 'NVIDIA H200' but topology GPU 0 is H100") != std::string::npos);
  // GPUs the topology does not have.
  const auto big = manifest("big", kData + "sendrecv_g2_d02.json,s1,sendrecv,\"0,5\",single-thread,,1\n");
  CHECK(error_of([&] {
          load_manifest_data({big}, load("h200x4.topo"), h200);
        }).find("GPU 5 is not in the topology, which has 4 GPUs") != std::string::npos);
  // A 2-GPU run listed as 4 GPUs, and a single-thread run listed as thread-per-gpu.
  const auto count = manifest("count", kData + "sendrecv_g2_d02.json,s1,sendrecv,0-3,single-thread,,1\n");
  CHECK(error_of([&] {
          load_manifest_data({count}, load("h200x4.topo"), h200);
        }).find("ran on 2 GPUs, the manifest lists 4") != std::string::npos);
  const auto launch = manifest("tpg", kData + "sendrecv_g2_d02.json,s1,sendrecv,\"0,2\",thread-per-gpu,,1\n");
  CHECK(error_of([&] {
          load_manifest_data({launch}, load("h200x4.topo"), h200);
        }).find("not the manifest's thread-per-gpu launch") != std::string::npos);
  // Another NCCL version than the parameter set's is a warning that names both.
  models::ModelParams other = h200;
  other.nccl_version = "2.21.5";
  const auto data = load_manifest_data({m}, load("h200x4.topo"), other);
  REQUIRE(data.warnings.size() == 1);
  CHECK(data.warnings[0].find("ran NCCL 2.28.3, the parameter set h200 was fitted on NCCL 2.21.5") !=
        std::string::npos);
  // Knobs the run recorded in its environment but the manifest does not list.
  const auto knob =
      manifest("knobs", kData + "sendrecv_g2_d01_protoLL.json,s1,sendrecv,\"0,1\",single-thread,,1\n");
  const auto unlisted = load_manifest_data({knob}, load("h200x4.topo"), h200);
  REQUIRE(unlisted.warnings.size() == 1);
  CHECK(unlisted.warnings[0].find(
            "recorded the NCCL knobs 'NCCL_PROTO=LL' but the manifest's nccl_env is ''") !=
        std::string::npos);
}

TEST_CASE("band: measured spread, fit residuals and standard errors add in quadrature per bound") {
  ManifestData d;
  d.configs.push_back({"sendrecv", {0, 1}, false, {}, "defaults"});
  ManifestRow small;
  small.c.bytes = 1024;
  small.times = {9, 10, 12};  // median 10: below {0.1, 0, 0}, above {0, 0, 0.2}
  ManifestRow large;
  large.c.bytes = 64ULL << 20;
  large.times = {100, 100, 104};  // median 100: above {0, 0, 0.04}
  ManifestRow single;             // one run: no spread to learn from
  single.c.bytes = 2048;
  single.times = {50};
  d.rows = {small, large, single};
  const auto fitted = comparison;
  // Predictions on the measurements: the spread alone (90th percentiles, interpolated).
  const std::vector<Comparison> exact = {fitted(1024, 10, 10), fitted(64ULL << 20, 100, 100)};
  const models::BandParams fallback{0.5, 0.5, 0.25, 0.25};
  const auto b = band_from_rows(d, {0, 1, 2}, exact, {0, 0}, fallback);
  CHECK(b.latency_below == doctest::Approx(0.08));  // 0.8 of the way from 0 to 0.1
  CHECK(b.latency_above == doctest::Approx(0.16));
  CHECK(b.bandwidth_above == doctest::Approx(0.032));
  CHECK(b.bandwidth_below == doctest::Approx(0.001));  // no spread below: the smallest band written
  // A prediction 10% under the measurement widens the upper side; a standard error of 0.06 widens both.
  const std::vector<Comparison> under = {fitted(1024, 11, 10)};
  const auto w = band_from_rows(d, {0, 1, 2}, under, {0.06}, fallback);
  const double fit = 1.645 * 0.06;
  CHECK(w.latency_above == doctest::Approx(std::sqrt(0.1 * 0.1 + 0.16 * 0.16 + fit * fit)));
  CHECK(w.latency_below == doctest::Approx(std::sqrt(0.08 * 0.08 + fit * fit)));
  CHECK(w.bandwidth_below == doctest::Approx(0.25));  // nothing fitted from 1 MiB: the fallback stays
  models::ModelParams p;
  p.band = b;
  const auto band = models::band_of(p, 1024, 20);
  CHECK(band.lo_us == doctest::Approx(18.4));
  CHECK(band.hi_us == doctest::Approx(23.2));
}

TEST_CASE("band: the runs' spread pools a configuration's runs over every start that measured it") {
  ManifestData d;
  d.configs.push_back({"sendrecv", {0, 1}, false, {}, "defaults"});
  d.configs.push_back({"sendrecv", {0, 2}, false, {}, "defaults"});
  const auto row = [](std::string start, std::size_t config, std::uint64_t bytes, std::vector<double> times) {
    ManifestRow r;
    r.start = std::move(start);
    r.config = config;
    r.c.bytes = bytes;
    r.times = std::move(times);
    return r;
  };
  // 1 KiB of sendrecv 0,1: {9, 10, 12} on s1 and {14} on s2, median 11 over both: below 2/11, 1/11, 0, 0;
  // above 0, 0, 1/11, 3/11. One start's runs alone (median 10) would give other deviations. sendrecv 0,2
  // ran once: left out. 64 MiB: {100, 100} and {104}.
  d.rows = {row("s1", 0, 1024, {9, 10, 12}), row("s2", 0, 1024, {14}), row("s1", 1, 1024, {30}),
            row("s1", 0, 64ULL << 20, {100, 100}), row("s2", 0, 64ULL << 20, {104})};
  const RunSpread s = run_spread(d, {0, 1, 2, 3, 4});
  REQUIRE(s.below[0].size() == 4);
  REQUIRE(s.above[1].size() == 3);
  // 90th percentiles, interpolated over four sorted deviations (position 2.7).
  const double below = 1.0 / 11 + 0.7 * (2.0 / 11 - 1.0 / 11);
  const double above = 1.0 / 11 + 0.7 * (3.0 / 11 - 1.0 / 11);
  CHECK(spread_width(s, Bound::Latency) == doctest::Approx(100 * (below + above)));
  // From 1 MiB: median 100, above {0, 0, 0.04}: 90th percentile 0.8 x 0.04; nothing below.
  CHECK(spread_width(s, Bound::Bandwidth) == doctest::Approx(100 * 0.8 * 0.04));
  // The rows of s1 alone: 1 KiB's three runs around their own median 10.
  const RunSpread one = run_spread(d, {0, 2});
  CHECK(spread_width(one, Bound::Latency) == doctest::Approx(100 * (0.8 * 0.1 + 0.8 * 0.2)));
  CHECK(spread_width(one, Bound::Bandwidth) == 0);  // no run from 1 MiB
}

TEST_CASE("band: a regime whose configurations ran once keeps the fallback band, and --band-only refuses") {
  ManifestData d;
  d.configs.push_back({"sendrecv", {0, 1}, false, {}, "defaults"});
  ManifestRow small;
  small.c.bytes = 1024;
  small.times = {9, 10, 12};
  ManifestRow large;  // from 1 MiB, one run only
  large.c.bytes = 64ULL << 20;
  large.times = {100};
  d.rows = {small, large};
  const models::BandParams fallback{0.5, 0.5, 0.25, 0.25};
  std::string kept;
  const auto b = band_from_rows(d, {0, 1}, {comparison(1024, 10, 10), comparison(64ULL << 20, 110, 100)}, {},
                                fallback, &kept);
  CHECK(kept == "from 1 MiB");
  CHECK(b.latency_below == doctest::Approx(0.08));
  CHECK(b.bandwidth_below == 0.25);
  CHECK(b.bandwidth_above == 0.25);
  // --band-only computes nothing else: on runs measured once it refuses, naming what is missing.
  const TwoPairData one_run("band-only-single");
  CHECK_THROWS_WITH_AS(
      manifest_band(one_run.data, one_run.topology, one_run.h200),
      doctest::Contains("no band can be computed below 1 MiB and from 1 MiB: no configuration "
                        "there was measured more than once"),
      UsageError);
}

TEST_CASE(
    "band: out of sample, the 90th percentile of |log error| is symmetric, with the spread in quadrature") {
  ManifestData d;
  d.configs.push_back({"sendrecv", {0, 1}, false, {}, "defaults"});
  ManifestRow small;
  small.c.bytes = 1024;
  small.times = {9, 10, 12};  // median 10: below 0.08, above 0.16 at the 90th percentile
  ManifestRow large;
  large.c.bytes = 64ULL << 20;
  large.times = {100, 100, 100};  // no spread from 1 MiB
  d.rows = {small, large};
  const auto held = comparison;
  const models::BandParams fallback{0.5, 0.5, 0.25, 0.25};
  // Ten latency-bound errors, |log| = 0.01 .. 0.10 (half of them misses below, half above): the 90th
  // percentile is 0.091; one bandwidth-bound miss of 20% above.
  std::vector<Comparison> rows;
  for (int k = 1; k <= 10; ++k) {
    const double e = 0.01 * k;
    rows.push_back(held(1024, 10 * std::exp(k % 2 ? e : -e), 10));
  }
  rows.push_back(held(64ULL << 20, 120, 100));
  const auto b = band_from_held_out(d, {0, 1}, rows, fallback);
  const double model = 0.091;
  CHECK(b.latency_below == doctest::Approx(1 - std::exp(-std::hypot(model, -std::log(1 - 0.08)))));
  CHECK(b.latency_above == doctest::Approx(std::expm1(std::hypot(model, std::log(1.16)))));
  // No spread: the band is the error alone, the same factor either way.
  CHECK(b.bandwidth_above == doctest::Approx(0.2));
  CHECK(b.bandwidth_below == doctest::Approx(1 - 1 / 1.2));
  // Nothing held out in a bound: the fallback stays.
  const auto only_small = band_from_held_out(d, {0, 1}, {rows.front()}, fallback);
  CHECK(only_small.bandwidth_below == 0.25);
  CHECK(only_small.bandwidth_above == 0.25);
}

TEST_CASE(
    "crossval: the default parameters leave all_gather's efficiency out, the reference the others are "
    "relative to") {
  // On link-bound sizes an operation's efficiency (its wire bytes) and the NVLink efficiency (the links'
  // rate) act only as a product: fitted together on the 4-GPU all_gather from 64 MiB, neither is pinned down.
  const topo::Topology topology = load("h200x4.topo");
  const auto start = models::ModelParams::load(kSrc + "/models/params/nccl-default.toml");
  CalibrateOptions o;
  o.nccl_tests = {kData + "all_gather_g4.json"};
  o.workloads = {"all_gather >=64MiB"};
  o.parameters = {"p2p.nvlink_efficiency", "collective.all_gather_efficiency"};
  const auto both = calibrate(topology, start, {}, o);
  CHECK(both.degenerate);
  CHECK(both.why_degenerate.find("collective.all_gather_efficiency") != std::string::npos);
  // The link's efficiency alone is pinned.
  o.parameters = {"p2p.nvlink_efficiency"};
  const auto link = calibrate(topology, start, {}, o);
  CHECK_FALSE(link.degenerate);
  // So a fold fits every other operation's efficiency against all_gather's 1 and the link's rate.
  const auto& list = default_cross_validation_parameters();
  const auto has = [&](const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  CHECK(list.size() == 29);
  // Since session 37 the host's per-thread cost too, told from its per-GPU cost by the one-thread runs.
  CHECK(has("host.launch_base"));
  CHECK(has("host.launch_per_gpu"));
  // Since session 34 a fold also fits where the channels bind: a Simple ring's reducing step and LL's channel
  // rate. The receive-only steps' counts stay at the datasheet's: with the channel rate they trade off.
  for (const char* name : {"collective.reduce_step", "collective.ll_channel_bandwidth"}) CHECK(has(name));
  for (const char* name : {"collective.channel_recv_step", "collective.ll_recv_step"}) CHECK_FALSE(has(name));
  CHECK_FALSE(has("collective.all_gather_efficiency"));
  CHECK(start.coll.efficiency[static_cast<int>(models::CollOp::AllGather)] == 1.0);
  for (const char* name :
       {"p2p.nvlink_efficiency", "collective.all_reduce_efficiency", "collective.reduce_scatter_efficiency",
        "collective.broadcast_efficiency", "collective.reduce_efficiency"})
    CHECK(has(name));
}

TEST_CASE("crossval: a family with a single value, or parameters the data cannot pin, are refused") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto m =
      manifest("two-pairs", kData + "sendrecv_g2_d01_r1.json,s1,sendrecv,\"0,1\",single-thread,,1\n" + kData +
                                "sendrecv_g2_d01_r2.json,s1,sendrecv,\"0,1\",single-thread,,2\n" + kData +
                                "sendrecv_g2_d02.json,s1,sendrecv,\"0,2\",single-thread,,1\n");
  const auto topology = load("h200x4.topo");
  const auto data = load_manifest_data({m}, topology, h200);
  CHECK(data.rows.size() == 56);  // 28 sizes on each pair; the two repeats of 0,1 share a row
  CalibrateOptions o;
  o.parameters = {"simple.base_latency"};
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::Start}, o);
        }).find("family 'start' has a single value (s1): nothing to hold out") != std::string::npos);
  // sendrecv never runs a collective: the collective latency is not pinned by the other pair's rows.
  o.parameters = {"collective.ll_base_latency"};
  const auto cv = cross_validate(data, topology, h200, {Family::Pair}, o);
  REQUIRE(cv.folds.size() == 2);
  for (const auto& f : cv.folds) {
    CHECK(f.held_out.empty());
    CHECK(f.refused.find("degenerate fit") != std::string::npos);
  }
}

TEST_CASE("crossval: a parameter no fitted row depends on keeps its start value, and the fold still fits") {
  // As a user predicting an unmeasured knob would: here sendrecv rows cannot see the collective latency, so
  // each fold fits simple.base_latency alone and keeps collective.ll_base_latency at h200.toml's value.
  const TwoPairData t("kept");
  const auto& [h200, topology, data] = t;
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "collective.ll_base_latency"};
  const auto cv = cross_validate(data, topology, h200, {Family::Pair}, o);
  REQUIRE(cv.folds.size() == 2);
  for (const auto& f : cv.folds) {
    CHECK(f.refused.empty());
    CHECK(f.kept == std::vector<std::string>{"collective.ll_base_latency"});
    REQUIRE(f.values.size() == 1);
    CHECK(f.values[0].parameter.name == "simple.base_latency");
    CHECK(f.held_out.size() == 28);
  }
  const auto json = cross_validation_json(cv, "cmd");
  CHECK(json["families"][0]["folds"][0]["kept"][0] == "collective.ll_base_latency");
  CHECK(cross_validation_text(cv).find("(kept at the start value: collective.ll_base_latency)") !=
        std::string::npos);
}

TEST_CASE(
    "crossval: a parameter the other rows see but cannot pin keeps its start value, and the fold fits") {
  // On sendrecv, LL's per-channel latency moves only the few LL sizes by a fraction of a microsecond: the
  // rows of GPUs 0,2 cannot pin it (its standard error is over half its value), so the fold that holds out
  // 0,1 fits simple.base_latency alone instead of being refused; the rows of 0,1 pin both.
  const TwoPairData t("unpinned");
  const auto& [h200, topology, data] = t;
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "ll.channel_latency"};
  const auto cv = cross_validate(data, topology, h200, {Family::Pair}, o);
  REQUIRE(cv.folds.size() == 2);
  const Fold& loose = cv.folds[0];
  CHECK(loose.value == "gpus 0,1");
  CHECK(loose.refused.empty());
  CHECK(loose.kept.empty());
  CHECK(loose.unpinned == std::vector<std::string>{"ll.channel_latency"});
  REQUIRE(loose.values.size() == 1);
  CHECK(loose.values[0].parameter.name == "simple.base_latency");
  CHECK(loose.held_out.size() == 28);
  const Fold& pinned = cv.folds[1];
  CHECK(pinned.refused.empty());
  CHECK(pinned.unpinned.empty());
  CHECK(pinned.values.size() == 2);
  CHECK(cross_validation_text(cv).find("not pinned down by the other rows: ll.channel_latency") !=
        std::string::npos);
  CHECK(cross_validation_json(cv, "cmd")["families"][0]["folds"][0]["unpinned"][0] == "ll.channel_latency");
}

TEST_CASE("crossval: a fold fits on the other pair and predicts the held-out one with a band") {
  const TwoPairData t("pairs");
  const auto& [h200, topology, data] = t;
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "p2p.nvlink_efficiency"};
  const auto cv = cross_validate(data, topology, h200, {Family::Pair}, o);
  REQUIRE(cv.folds.size() == 2);
  for (const auto& f : cv.folds) {
    CHECK(f.refused.empty());
    CHECK(f.fitted_rows == 28);
    REQUIRE(f.held_out.size() == 28);
    for (const auto& c : f.held_out) {
      CHECK(c.gpus == (f.value == "gpus 0,1" ? std::vector<int>{0, 1} : std::vector<int>{0, 2}));
      CHECK(c.has_band());
      CHECK(c.predicted_lo_us < c.predicted_us);
      CHECK(c.predicted_hi_us > c.predicted_us);
    }
    // NVSwitch pairs are alike: a fit on one pair predicts the other.
    CHECK(stats(f.held_out).mape < 10);
  }
  const auto json = cross_validation_json(cv, "cmd");
  CHECK(json["families"][0]["family"] == "pair");
  CHECK(json["families"][0]["held_out"]["all"]["sizes"] == 56);
  CHECK(cross_validation_markdown(cv, "cmd").find("| pair | gpus 0,1 | 28 | 28 |") != std::string::npos);
  // The CSV: a header and one row per held-out prediction, naming the fold that made it.
  const std::string csv = cross_validation_csv(cv);
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = csv.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(csv.substr(at, nl - at));
  REQUIRE(lines.size() == 57);
  CHECK(lines[0].rfind("family,held_out,workload,mode,gpus,bytes,measured_us,predicted_us,", 0) == 0);
  CHECK(lines[1].rfind("pair,\"gpus 0,1\",sendrecv,,0 1,", 0) == 0);
  CHECK(lines[56].rfind("pair,\"gpus 0,2\",sendrecv,,0 2,", 0) == 0);
  CHECK(lines[56].find(",bandwidth,") != std::string::npos);
  CHECK(lines[1].find(",latency,") != std::string::npos);
}

TEST_CASE(
    "calibrate: a manifest fit writes a [band] that reads back, and holds out the workloads it does not "
    "fit") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto m =
      manifest("calibrate", kData + "sendrecv_g2_d01_r1.json,s1,sendrecv,\"0,1\",single-thread,,1\n" + kData +
                                "sendrecv_g2_d01_r2.json,s1,sendrecv,\"0,1\",single-thread,,2\n" + kData +
                                "all_reduce_g2.json,s1,all_reduce,\"0,1\",single-thread,,1\n");
  const auto topology = load("h200x4.topo");
  const auto data = load_manifest_data({m}, topology, h200);
  CalibrateOptions o;
  o.manifests = {m};
  o.workloads = {"sendrecv"};
  o.parameters = {"simple.base_latency", "p2p.nvlink_efficiency"};
  const auto r = calibrate_manifest(data, topology, h200, o);
  CHECK(!r.degenerate);
  CHECK(r.band_fitted);
  CHECK(r.fitted_rows.size() == 28);
  REQUIRE(r.held_out_rows.size() == 28);
  for (const auto& c : r.held_out_rows) {
    CHECK(c.workload == "all_reduce");
    CHECK(c.has_band());
  }
  CHECK(r.prediction_rel_se.size() == r.fitted_rows.size());
  // The band spans the fitted rows' 5th-95th percentile of residuals (widened by the spread): about 90% of
  // them, less the interpolation between 28 sizes.
  CHECK(stats(r.fitted_rows).coverage >= 85);
  const auto toml = fitted_params_toml(r, kSrc + "/models/params/h200.toml", "refit", o);
  const auto reread = models::ModelParams::parse(toml, "<written>", models::ModelParams::defaults());
  CHECK(reread.band.latency_above == doctest::Approx(r.params.band.latency_above).epsilon(1e-3));
  CHECK(reread.band.bandwidth_below == doctest::Approx(r.params.band.bandwidth_below).epsilon(1e-3));
  CHECK(toml.find("Fitted on the sendrecv rows of: " + m) != std::string::npos);
  // h200.toml is a fitted set: no side of the refit's band is narrower than its (keep_start_band), and here
  // the sendrecv rows' own band is narrower on at least one side, which the result names.
  CHECK(r.params.band.latency_below >= h200.band.latency_below);
  CHECK(r.params.band.latency_above >= h200.band.latency_above);
  CHECK(r.params.band.bandwidth_below >= h200.band.bandwidth_below);
  CHECK(r.params.band.bandwidth_above >= h200.band.bandwidth_above);
  CHECK(!r.band_widened.empty());
}

TEST_CASE("manifest: a one-GPU text log listed for several GPUs is refused") {
  // A text log lists every process's Rank line (mpirun too): one Rank line is one GPU, whatever the launch.
  const std::string log =
      kSrc + "/validation/data/h200x2/mechanism/vm-20261123T020110Z/all_reduce_g1_G0_r1.log";
  const auto m = manifest("one-gpu-text", log + ",s1,all_reduce,\"0,1\",thread-per-gpu,,1\n");
  const topo::Topology t = load("h200x4.topo");
  CHECK_THROWS_WITH_AS(load_manifest_data({m}, t, models::ModelParams::defaults()),
                       doctest::Contains("ran on 1 GPUs, the manifest lists 2"), InputError);
}

TEST_CASE("manifest: CUDA graph runs (nccl-tests -G) are their own launch, and must say so") {
  const std::string dir = kSrc + "/validation/data/h200x2/mechanism/vm-20261123T020110Z/";
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto ok =
      manifest("graph", dir + "sendrecv_g2_G1_r1.log,s1,sendrecv,0-1,single-thread-graph,,1\n" + dir +
                            "sendrecv_t2_G1_r1.log,s1,sendrecv,0-1,thread-per-gpu-graph,,1\n" + dir +
                            "sendrecv_t2_G0_r1.log,s1,sendrecv,0-1,thread-per-gpu,,1\n");
  const auto e = load_manifest(ok);
  REQUIRE(e.size() == 3);
  CHECK(e[0].graph);
  CHECK(!e[0].thread_per_gpu);
  CHECK(e[1].graph);
  CHECK(e[1].thread_per_gpu);
  CHECK(!e[2].graph);
  const auto data = load_manifest_data({ok}, load("h200x4.topo"), h200);
  REQUIRE(data.configs.size() == 3);
  std::vector<std::size_t> all(data.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto predicted = predict_rows(data, all, load("h200x4.topo"), h200);
  // At 8 B: the graph removes the host's enqueue, a single-thread graph pays the cross-GPU join.
  double single_graph = 0, per_gpu_graph = 0, per_gpu = 0;
  for (const auto& c : predicted) {
    if (c.bytes != 8) continue;
    if (c.mode == "cuda-graph") single_graph = c.predicted_us;
    if (c.mode == "thread-per-gpu cuda-graph") per_gpu_graph = c.predicted_us;
    if (c.mode == "thread-per-gpu") per_gpu = c.predicted_us;
  }
  CHECK(per_gpu_graph > 0);
  CHECK(per_gpu_graph < per_gpu);
  CHECK(single_graph > per_gpu_graph);
  // A graph run listed without -graph, and the other way round.
  const auto missing =
      manifest("graph-missing", dir + "sendrecv_g2_G1_r1.log,s1,sendrecv,0-1,single-thread,,1\n");
  CHECK(error_of([&] {
          load_manifest_data({missing}, load("h200x4.topo"), h200);
        }).find("ran with CUDA graphs (-G 1), the manifest's launch says no -graph") != std::string::npos);
  const auto extra =
      manifest("graph-extra", dir + "sendrecv_g2_G0_r1.log,s1,sendrecv,0-1,single-thread-graph,,1\n");
  CHECK(error_of([&] {
          load_manifest_data({extra}, load("h200x4.topo"), h200);
        }).find("ran without CUDA graphs, the manifest's launch says -graph") != std::string::npos);
  const auto bad = manifest("graph-bad", "a.log,s1,sendrecv,0-1,graph,,1\n");
  CHECK(error_of([&] { load_manifest(bad); }).find("launch must be single-thread") != std::string::npos);
}

TEST_CASE("crossval: a fold's band takes its model error from the other folds' held-out errors") {
  const TwoPairData t("cvband");
  const auto& [h200, topology, data] = t;
  CalibrateOptions o;
  o.parameters = {"simple.base_latency", "p2p.nvlink_efficiency"};
  o.cross_validated_band = false;
  const auto own = cross_validate(data, topology, h200, {Family::Pair}, o);
  o.cross_validated_band = true;
  const auto cv = cross_validate(data, topology, h200, {Family::Pair}, o);
  REQUIRE(cv.folds.size() == 2);
  REQUIRE(own.folds.size() == 2);
  for (int i = 0; i < 2; ++i) {
    const Fold& f = cv.folds[i];
    const Fold& other = cv.folds[1 - i];
    CHECK(f.band_cross_validated);
    CHECK(!own.folds[i].band_cross_validated);
    // The fold's fitted rows are the other pair's; its model error is the other fold's held-out rows.
    std::vector<std::size_t> train;
    for (std::size_t r = 0; r < data.rows.size(); ++r) {
      if (data.rows[r].family_value(Family::Pair, data.configs) != f.value) train.push_back(r);
    }
    const auto want = band_from_held_out(data, train, other.held_out, own.folds[i].band);
    // Out of sample the band is symmetric in log space: (1 - below) (1 + above) = 1 where no spread differs.
    CHECK(f.band.latency_above > 0.001);
    CHECK(f.band.latency_below == doctest::Approx(want.latency_below));
    CHECK(f.band.latency_above == doctest::Approx(want.latency_above));
    CHECK(f.band.bandwidth_below == doctest::Approx(want.bandwidth_below));
    CHECK(f.band.bandwidth_above == doctest::Approx(want.bandwidth_above));
    // Same fits and predictions either way: only the bands differ.
    REQUIRE(f.held_out.size() == own.folds[i].held_out.size());
    for (std::size_t k = 0; k < f.held_out.size(); ++k) {
      CHECK(f.held_out[k].predicted_us == own.folds[i].held_out[k].predicted_us);
      models::ModelParams with;
      with.band = f.band;
      const models::Band b = models::band_of(with, f.held_out[k].bytes, f.held_out[k].predicted_us);
      CHECK(f.held_out[k].predicted_lo_us == doctest::Approx(b.lo_us));
      CHECK(f.held_out[k].predicted_hi_us == doctest::Approx(b.hi_us));
    }
  }
  CHECK(cross_validation_text(cv).find("band: the held-out errors of the family's other folds") !=
        std::string::npos);
  CHECK(cross_validation_text(own).find("band: the fold's own residuals") != std::string::npos);
  CHECK(cross_validation_json(cv, "cmd")["families"][0]["folds"][0]["band"]["source"] ==
        "other folds' held-out errors");

  // The pooled band: every held-out row as residuals, every row for the spread; written into a set.
  std::vector<Comparison> held = cv.folds[0].held_out;
  held.insert(held.end(), cv.folds[1].held_out.begin(), cv.folds[1].held_out.end());
  std::vector<std::size_t> all(data.rows.size());
  for (std::size_t r = 0; r < all.size(); ++r) all[r] = r;
  const auto pooled = cross_validated_band(cv, data, h200.band);
  const auto want = band_from_held_out(data, all, held, h200.band);
  CHECK(pooled.latency_above == doctest::Approx(want.latency_above));
  CHECK(pooled.bandwidth_below == doctest::Approx(want.bandwidth_below));
  const std::string text =
      params_with_band_toml(kSrc + "/models/params/h200.toml", pooled, {"first line", "second line"});
  CHECK(text.rfind("# first line\n# second line\n", 0) == 0);
  const auto back = models::ModelParams::parse(text, "band.toml", models::ModelParams::defaults());
  CHECK(back.band.latency_below == doctest::Approx(pooled.latency_below).epsilon(1e-3));
  CHECK(back.band.bandwidth_above == doctest::Approx(pooled.bandwidth_above).epsilon(1e-3));
  CHECK(back.simple.channel_bandwidth == h200.simple.channel_bandwidth);  // the set's values are kept
}

namespace {

/// Two 4x H200 machine starts (2026-11-22a, whose host enqueued fast, and 2026-11-26a, slow), each with a
/// sendrecv and an all_reduce run on GPUs 0,1, one thread; `with_probe_b` false drops 26a's sendrecv.
std::string two_starts(const std::string& name, bool with_probe_b = true, bool b_first = false) {
  const std::string a = kSrc + "/validation/data/h200x4/coverage/h200x4-2026-11-22a/";
  const std::string b = kSrc + "/validation/data/h200x4/coverage/h200x4-2026-11-26a/";
  std::string body_a, body_b;
  for (int r = 1; r <= 3; ++r) {
    const std::string rep = std::to_string(r);
    body_a += a + "sendrecv_g01_st_r" + rep + ".json,A,sendrecv,\"0,1\",single-thread,," + rep + "\n";
    body_a += a + "all_reduce_g01_st_r" + rep + ".json,A,all_reduce,\"0,1\",single-thread,," + rep + "\n";
    if (with_probe_b)
      body_b += b + "sendrecv_g01_st_r" + rep + ".json,B,sendrecv,\"0,1\",single-thread,," + rep + "\n";
    body_b += b + "all_reduce_g01_st_r" + rep + ".json,B,all_reduce,\"0,1\",single-thread,," + rep + "\n";
  }
  return manifest(name, b_first ? body_b + body_a : body_a + body_b);
}

}  // namespace

TEST_CASE("crossval: a probed start refits its host on its own probe rows and predicts only the others") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  const auto data = load_manifest_data({two_starts("probed")}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"collective.ll_base_latency", "collective.simple_channel_bandwidth"};
  o.probe = {"sendrecv gpus 0,1"};
  CalibrateOptions unprobed = o;
  unprobed.probe.clear();
  const auto plain = cross_validate(data, topology, h200, {Family::Start}, unprobed);
  const auto cv = cross_validate(data, topology, h200, {Family::ProbedStart}, o);
  REQUIRE(cv.folds.size() == 2);
  REQUIRE(plain.folds.size() == 2);
  CHECK(cv.probe == std::vector<std::string>{"sendrecv gpus 0,1"});
  CHECK(cv.probe_parameters == std::vector<std::string>{"host.launch_per_gpu"});
  double per_gpu[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    const Fold& f = cv.folds[i];
    REQUIRE(f.refused.empty());
    CHECK(f.family == Family::ProbedStart);
    CHECK(f.value == (i == 0 ? "A" : "B"));
    // The probe's sizes are fitted, not predicted: only the start's all_reduce is held out.
    CHECK(f.probe_rows == 28);
    CHECK(f.fitted_rows == plain.folds[i].fitted_rows + 28);
    REQUIRE(!f.held_out.empty());
    for (const auto& c : f.held_out) CHECK(c.workload == "all_reduce");
    REQUIRE(f.probe_values.size() == 1);
    CHECK(f.probe_values[0].parameter.name == "host.launch_per_gpu");
    per_gpu[i] = f.probe_values[0].value;
  }
  // 26a's host enqueued slower than 22a's (its one-thread sendrecv floor: 14.8 against 11.9 us at 8 B,
  // medians of 3 runs).
  CHECK(per_gpu[1] > per_gpu[0] + 0.5);
  // Calibrating the host on the probe brings the slow start's latency-bound all_reduce closer.
  CHECK(stats(in_bound(cv.folds[1].held_out, Bound::Latency)).mape <
        stats(in_bound(plain.folds[1].held_out, Bound::Latency)).mape);
  const std::string md = cross_validation_markdown(cv, "cmd");
  CHECK(md.find("| probed-start | B (probe: 28 sizes, host.launch_per_gpu ") != std::string::npos);
  CHECK(md.find("probed-start: each machine start's fold then refits host.launch_per_gpu") !=
        std::string::npos);
  const auto json = cross_validation_json(cv, "cmd");
  CHECK(json["probe"][0] == "sendrecv gpus 0,1");
  CHECK(json["families"][0]["folds"][1]["probe_sizes"] == 28);
  // The runs' spread the bands are set beside is over the rows predicted: not the probes, which the start
  // family's (every row) takes in.
  const FitSelection probe(o.probe);
  std::vector<std::size_t> predicted, every;
  for (std::size_t i = 0; i < data.rows.size(); ++i) {
    every.push_back(i);
    if (!probe.selects(data.rows[i].c)) predicted.push_back(i);
  }
  REQUIRE(predicted.size() < every.size());
  for (Bound b : {Bound::Latency, Bound::Bandwidth}) {
    CAPTURE(static_cast<int>(b));
    const double want = spread_width(run_spread(data, predicted), b);
    REQUIRE(want > 0);
    CHECK(cv.spread_width(Family::ProbedStart, b) == doctest::Approx(want));
    CHECK(plain.spread_width(Family::Start, b) == doctest::Approx(spread_width(run_spread(data, every), b)));
    CHECK(cv.spread_width(Family::ProbedStart, b) != doctest::Approx(plain.spread_width(Family::Start, b)));
    CHECK(
        json["families"][0]["held_out"][b == Bound::Latency ? "latency" : "bandwidth"]["runs_interval_pct"] ==
        doctest::Approx(want));
  }
  CHECK(cv.spread_width(Family::Ring, Bound::Latency) == 0);  // not cross-validated
}

TEST_CASE(
    "crossval: a joint fit refits the shared parameters under each start's own host, no worse on its rows") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  // Two 4x H200 starts whose hosts differ (26a's enqueues slower), one thread on 2 and on 4 GPUs: sendrecv
  // trains, all_reduce on GPUs 0,1 is held out (the collective family).
  std::string body;
  for (const auto& [dir, start] : {std::pair<std::string, std::string>{"h200x4-2026-11-22a", "A"},
                                   std::pair<std::string, std::string>{"h200x4-2026-11-26a", "B"}}) {
    const std::string d = kSrc + "/validation/data/h200x4/coverage/" + dir + "/";
    for (int r = 1; r <= 3; ++r) {
      const std::string rep = std::to_string(r);
      body +=
          d + "sendrecv_g01_st_r" + rep + ".json," + start + ",sendrecv,\"0,1\",single-thread,," + rep + "\n";
      body +=
          d + "sendrecv_g03_st_r" + rep + ".json," + start + ",sendrecv,\"0-3\",single-thread,," + rep + "\n";
      body += d + "all_reduce_g01_st_r" + rep + ".json," + start + ",all_reduce,\"0,1\",single-thread,," +
              rep + "\n";
    }
  }
  const auto data = load_manifest_data({manifest("joint", body)}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"host.launch_per_gpu", "simple.channel_bandwidth"};
  o.start_parameters = {"host.launch_scale"};
  CalibrateOptions joint = o;
  joint.start_rounds = 2;
  const auto plain = cross_validate(data, topology, h200, {Family::Collective}, o);
  const auto cv = cross_validate(data, topology, h200, {Family::Collective}, joint);
  CHECK(plain.start_rounds == 0);
  CHECK(cv.start_rounds == 2);
  const auto fold_of = [](const CrossValidation& c) -> const Fold& {
    for (const Fold& fold : c.folds)
      if (fold.value == "all_reduce") return fold;
    throw std::runtime_error("no all_reduce fold");
  };
  const Fold& f = fold_of(cv);
  const Fold& p = fold_of(plain);
  REQUIRE(f.refused.empty());
  REQUIRE(p.refused.empty());
  // The training rows' loss (squared, weighted as the fit weighs them) with the shared values and each
  // start's own host: block by block, a joint round can only lower it.
  const auto loss = [&](const Fold& fold) {
    REQUIRE(fold.start_fits.size() == 2);
    double sum = 0;
    for (const Fold::StartFit& sf : fold.start_fits) {
      REQUIRE(sf.refused.empty());
      REQUIRE(sf.values.size() == 1);
      CHECK(sf.values[0].parameter.name == "host.launch_scale");
      const auto q = with_fitted_values(with_fitted_values(h200, fold.values), sf.values);
      std::vector<std::size_t> rows;
      for (std::size_t i = 0; i < data.rows.size(); ++i)
        if (data.rows[i].c.workload == "sendrecv" &&
            data.rows[i].family_value(Family::Start, data.configs) == sf.start)
          rows.push_back(i);
      REQUIRE(rows.size() == 56);  // 28 sizes on 2 and on 4 GPUs, each a row over its 3 runs
      for (const Comparison& c : predict_rows(data, rows, topology, q)) {
        const double x = c.error() / (c.bytes >= (1u << 20) ? o.sigma_large : o.sigma_small);
        sum += x * x;
      }
    }
    return sum;
  };
  // The shared values (launch_scale is each start's alone: never among them).
  for (const Fold* fold : {&f, &p}) {
    CHECK(fold->unpinned.empty());
    REQUIRE(fold->values.size() == 2);
    for (const FittedValue& v : fold->values) CHECK(v.parameter.name != "host.launch_scale");
  }
  const double joint_loss = loss(f), plain_loss = loss(p);
  CAPTURE(joint_loss);
  CAPTURE(plain_loss);
  CHECK(joint_loss < plain_loss);
  CHECK(f.values[0].value != doctest::Approx(p.values[0].value));  // the shared host moved
  // Said in every output.
  CHECK(cross_validation_text(cv).find(
            "joint: every fold, start's and probed-start's too, first fits its shared parameters again 2 "
            "times") != std::string::npos);
  CHECK(cross_validation_markdown(cv, "cmd").find("Joint: every fold, start's and probed-start's too, first "
                                                  "fits its shared parameters again 2 times") !=
        std::string::npos);
  CHECK(cross_validation_json(cv, "cmd")["start_rounds"] == 2);
  // Both rounds ran, and every start's refit held in each (no note).
  CHECK(f.joint_rounds == 2);
  CHECK(f.joint_note.empty());
  CHECK(p.joint_rounds == 0);
  CHECK(cross_validation_json(cv, "cmd")["families"][0]["folds"][0]["joint_rounds"] == 2);
  CHECK(cross_validation_text(cv).find("(joint: ") == std::string::npos);  // said only when short
  // A round with nothing shared to refit does not run, and the output says so rather than claim it.
  CalibrateOptions nothing_shared = joint;
  nothing_shared.parameters = {"host.launch_scale"};
  const auto none = cross_validate(data, topology, h200, {Family::Collective}, nothing_shared);
  const Fold& n = fold_of(none);
  REQUIRE(n.refused.empty());
  CHECK(n.joint_rounds == 0);
  CHECK(n.joint_note == "no shared parameter left to refit");
  CHECK(cross_validation_text(none).find("(joint: 0 of 2 rounds; no shared parameter left to refit)") !=
        std::string::npos);
  CHECK_FALSE(cross_validation_json(plain, "cmd").contains("start_rounds"));
}

TEST_CASE("crossval: a per-start refit calibrates each start's host on its own training rows") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  // B's runs listed first: the held-out rows come back in their own order, not grouped by start.
  const auto data = load_manifest_data({two_starts("per-start", true, true)}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"collective.simple_channel_bandwidth", "simple.channel_bandwidth"};
  CalibrateOptions per_start = o;
  per_start.start_parameters = {"host.launch_per_gpu"};
  const auto plain = cross_validate(data, topology, h200, {Family::Collective, Family::Start}, o);
  const auto cv = cross_validate(data, topology, h200, {Family::Collective, Family::Start}, per_start);
  CHECK(cv.start_parameters == std::vector<std::string>{"host.launch_per_gpu"});
  CHECK(plain.start_parameters.empty());
  REQUIRE(cv.folds.size() == plain.folds.size());
  const auto fold_of = [](const CrossValidation& c, Family f, const std::string& v) -> const Fold& {
    for (const Fold& fold : c.folds)
      if (fold.family == f && fold.value == v) return fold;
    throw std::runtime_error("no fold " + v);
  };
  // Holding out all_reduce: each start's host is refitted on that start's sendrecv (28 sizes), never on a
  // held-out row, and 26a's (B) enqueues slower than 22a's (A), as its probe says.
  const Fold& f = fold_of(cv, Family::Collective, "all_reduce");
  const Fold& p = fold_of(plain, Family::Collective, "all_reduce");
  REQUIRE(f.refused.empty());
  REQUIRE(f.start_fits.size() == 2);
  CHECK(f.start_fits[0].start == "A");
  CHECK(f.start_fits[1].start == "B");
  double per_gpu[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const Fold::StartFit& s = f.start_fits[static_cast<std::size_t>(i)];
    CHECK(s.refused.empty());
    CHECK(s.rows == 28);
    REQUIRE(s.values.size() == 1);
    CHECK(s.values[0].parameter.name == "host.launch_per_gpu");
    per_gpu[i] = s.values[0].value;
  }
  CHECK(per_gpu[1] > per_gpu[0] + 0.5);
  // The same rows in the same order, predicted closer below 1 MiB; the fold's own fit is unchanged.
  REQUIRE(f.held_out.size() == p.held_out.size());
  for (std::size_t i = 0; i < f.held_out.size(); ++i) {
    CHECK(f.held_out[i].source == p.held_out[i].source);
    CHECK(f.held_out[i].bytes == p.held_out[i].bytes);
  }
  CHECK(f.fitted_rows == p.fitted_rows);
  // The slow start's latency-bound all_reduce comes closer (the fold's one host fits neither start).
  const auto of_b = [](const std::vector<Comparison>& rows) {
    std::vector<Comparison> b;
    for (const auto& c : rows)
      if (c.source.find("h200x4-2026-11-26a") != std::string::npos) b.push_back(c);
    return b;
  };
  REQUIRE(!of_b(f.held_out).empty());
  CHECK(stats(in_bound(of_b(f.held_out), Bound::Latency)).mape <
        stats(in_bound(of_b(p.held_out), Bound::Latency)).mape);
  // A held-out start has no training row: the start family is predicted as before.
  for (const Fold& s : cv.folds) {
    if (s.family != Family::Start) continue;
    CHECK(s.start_fits.empty());
    const Fold& q = fold_of(plain, Family::Start, s.value);
    REQUIRE(s.held_out.size() == q.held_out.size());
    for (std::size_t i = 0; i < s.held_out.size(); ++i)
      CHECK(s.held_out[i].predicted_us == q.held_out[i].predicted_us);
  }
  const std::string text = cross_validation_text(cv);
  CHECK(text.find("(per start: 2 starts refitted, host.launch_per_gpu ") != std::string::npos);
  const auto json = cross_validation_json(cv, "cmd");
  CHECK(json["start_parameters"][0] == "host.launch_per_gpu");
  CHECK(json["families"][0]["folds"][0]["start_fits"].size() == 2);
  // A start with nothing else measured keeps the fold's own fit and says so.
  const auto lone = load_manifest_data({two_starts("per-start-lone", false)}, topology, h200);
  const auto cl = cross_validate(lone, topology, h200, {Family::Collective}, per_start);
  const Fold& lf = fold_of(cl, Family::Collective, "all_reduce");
  REQUIRE(lf.start_fits.size() == 2);
  CHECK(lf.start_fits[0].refused.empty());
  CHECK(lf.start_fits[1].refused == "no training row on this start");
  // ... predicted exactly as the fold's own fit predicts it.
  const auto lone_plain = cross_validate(lone, topology, h200, {Family::Collective}, o);
  const Fold& lp = fold_of(lone_plain, Family::Collective, "all_reduce");
  REQUIRE(lf.held_out.size() == lp.held_out.size());
  int b_rows = 0;
  for (std::size_t i = 0; i < lf.held_out.size(); ++i) {
    if (lf.held_out[i].source.find("h200x4-2026-11-26a") == std::string::npos) continue;
    ++b_rows;
    CHECK(lf.held_out[i].predicted_us == lp.held_out[i].predicted_us);
  }
  CHECK(b_rows > 0);
  CHECK(cross_validation_text(cl).find("with the fold's own fit: B: no training row on this start") !=
        std::string::npos);
  CalibrateOptions unknown = per_start;
  unknown.start_parameters = {"host.no_such"};
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::Collective}, unknown);
        }).find("unknown parameter 'host.no_such'") != std::string::npos);
  CalibrateOptions twice = per_start;
  twice.start_parameters = {"host.launch_per_gpu", "host.launch_per_gpu"};
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::Collective}, twice);
        }).find("host.launch_per_gpu is given twice") != std::string::npos);
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::Start}, per_start);
        }).find("add a family that keeps every start in the fit") != std::string::npos);
  const std::string md = cross_validation_markdown(cv, "cmd");
  CHECK(md.find("Per start: every fold but start's and probed-start's then refits host.launch_per_gpu") !=
        std::string::npos);
  CHECK(md.find("(per start: 2 starts refitted, host.launch_per_gpu ") != std::string::npos);
}

TEST_CASE(
    "crossval: rows whose start keeps the fold's fit carry the band of predictions with no start refitted") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  // B (26a) has only its all_reduce: holding that out leaves B no training row, so B's rows keep the fold's
  // fit, while A's host is refitted on A's sendrecv. Holding out sendrecv (A's only), A is refitted on its
  // all_reduce.
  const auto data = load_manifest_data({two_starts("fallback-band", false)}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"collective.simple_channel_bandwidth", "simple.channel_bandwidth"};
  CalibrateOptions per_start = o;
  per_start.start_parameters = {"host.launch_per_gpu"};
  const auto plain = cross_validate(data, topology, h200, {Family::Collective}, o);
  const auto cv = cross_validate(data, topology, h200, {Family::Collective}, per_start);
  REQUIRE(cv.folds.size() == 2);
  REQUIRE(plain.folds.size() == 2);
  const Fold& ar = cv.folds[0];
  const Fold& sr = cv.folds[1];
  REQUIRE(ar.value == "all_reduce");
  REQUIRE(sr.value == "sendrecv");
  REQUIRE(ar.refused.empty());
  REQUIRE(sr.refused.empty());
  CHECK(ar.band_cross_validated);
  const auto of_b = [](const Comparison& c) {
    return c.source.find("h200x4-2026-11-26a") != std::string::npos;
  };
  const std::ptrdiff_t b_rows = std::count_if(ar.held_out.begin(), ar.held_out.end(), of_b);
  REQUIRE(b_rows > 0);
  REQUIRE(b_rows < static_cast<std::ptrdiff_t>(ar.held_out.size()));
  CHECK(ar.start_fallback_rows == b_rows);
  CHECK(sr.start_fallback_rows == 0);  // A, its only start, is refitted
  // The all_reduce fold's training rows: the sendrecv runs.
  std::vector<std::size_t> train;
  for (std::size_t r = 0; r < data.rows.size(); ++r)
    if (data.rows[r].family_value(Family::Collective, data.configs) != "all_reduce") train.push_back(r);
  // In-sample bands (no cross-validated band): every row carries the fold's own band, which is also what a
  // cross-validated band falls back to in a size regime the other folds have no row of.
  CalibrateOptions own = per_start;
  own.cross_validated_band = false;
  const auto in_sample = cross_validate(data, topology, h200, {Family::Collective}, own);
  REQUIRE(in_sample.folds.size() == 2);
  const Fold& ia = in_sample.folds[0];
  CHECK(ia.start_fallback_rows == b_rows);
  CHECK(ia.start_fallback_band.latency_above == doctest::Approx(ia.band.latency_above));
  CHECK(ia.start_fallback_band.bandwidth_below == doctest::Approx(ia.band.bandwidth_below));
  CHECK(cross_validation_text(in_sample).find("sizes' band") == std::string::npos);
  // Refitted rows: the model error of the other fold's rows as predicted (A refitted); rows that kept the
  // fold's fit: of the other fold's rows as its own fit predicted them (the plain cross-validation's).
  const auto refit_band = band_from_held_out(data, train, sr.held_out, ia.band);
  const auto plain_band = band_from_held_out(data, train, plain.folds[1].held_out, ia.band);
  CHECK(ar.band.latency_below == doctest::Approx(refit_band.latency_below));
  CHECK(ar.band.latency_above == doctest::Approx(refit_band.latency_above));
  CHECK(ar.band.bandwidth_below == doctest::Approx(refit_band.bandwidth_below));
  CHECK(ar.band.bandwidth_above == doctest::Approx(refit_band.bandwidth_above));
  CHECK(ar.start_fallback_band.latency_below == doctest::Approx(plain_band.latency_below));
  CHECK(ar.start_fallback_band.latency_above == doctest::Approx(plain_band.latency_above));
  CHECK(ar.start_fallback_band.bandwidth_below == doctest::Approx(plain_band.bandwidth_below));
  CHECK(ar.start_fallback_band.bandwidth_above == doctest::Approx(plain_band.bandwidth_above));
  // Refitting A's host moved the sendrecv fold's predictions, so the two bands differ.
  CHECK(ar.start_fallback_band.latency_above != doctest::Approx(ar.band.latency_above));
  // Each row carries its own band; predictions are those of the per-start fold.
  const Fold& pa = plain.folds[0];
  REQUIRE(ar.held_out.size() == pa.held_out.size());
  for (std::size_t k = 0; k < ar.held_out.size(); ++k) {
    const Comparison& c = ar.held_out[k];
    models::ModelParams with;
    with.band = of_b(c) ? ar.start_fallback_band : ar.band;
    const models::Band b = models::band_of(with, c.bytes, c.predicted_us);
    CHECK(c.predicted_lo_us == doctest::Approx(b.lo_us));
    CHECK(c.predicted_hi_us == doctest::Approx(b.hi_us));
    if (of_b(c)) CHECK(c.predicted_us == pa.held_out[k].predicted_us);  // B kept the fold's fit
  }
  const std::string said =
      std::to_string(b_rows) + " sizes' band, from the other folds' predictions with no start refitted: ";
  CHECK(cross_validation_text(cv).find(said) != std::string::npos);
  CHECK(cross_validation_markdown(cv, "cmd").find(said) != std::string::npos);
  const auto json = cross_validation_json(cv, "cmd");
  REQUIRE(json["families"][0]["folds"][0].contains("start_fallback"));
  CHECK(json["families"][0]["folds"][0]["start_fallback"]["sizes"] == b_rows);
  CHECK(json["families"][0]["folds"][0]["start_fallback"]["band"]["source"] ==
        "other folds' held-out errors with no start refitted");
  CHECK(!json["families"][0]["folds"][1].contains("start_fallback"));
  const auto json_own = cross_validation_json(in_sample, "cmd");
  REQUIRE(json_own["families"][0]["folds"][0].contains("start_fallback"));
  CHECK(json_own["families"][0]["folds"][0]["start_fallback"]["band"]["source"] == "own fit");
}

TEST_CASE(
    "crossval: a fold that cannot tell a thread's host cost from a GPU's keeps the per-GPU one's start "
    "value") {
  const auto datasheet = models::ModelParams::load(kSrc + "/models/params/nccl-default.toml");
  const auto topology = load("h200x4.topo");
  // One 4x H200 start, the launch family: a thread per GPU on 2, 3 and 4 GPUs (a thread drives one GPU and
  // pays host.launch_base + host.launch_per_gpu), and one thread driving 2 and 4 GPUs (base + N per-GPU).
  const std::string d = kSrc + "/validation/data/h200x4/coverage/h200x4-2026-11-26a/";
  using Set = std::pair<std::string, std::string>;  // file infix, manifest GPU list
  std::string body;
  for (int r = 1; r <= 3; ++r) {
    const std::string rep = std::to_string(r);
    for (const std::string wl : {"sendrecv", "all_reduce", "alltoall"}) {
      for (const auto& [g, gpus] : {Set{"01", "0,1"}, Set{"02", "0-2"}, Set{"03", "0-3"}})
        body += d + wl + "_g" + g + "_tpg_r" + rep + ".json,A," + wl + ",\"" + gpus + "\",thread-per-gpu,," +
                rep + "\n";
    }
    for (const auto& [g, gpus] : {Set{"01", "0,1"}, Set{"03", "0-3"}})
      body += d + "sendrecv_g" + g + "_st_r" + rep + ".json,A,sendrecv,\"" + gpus + "\",single-thread,," +
              rep + "\n";
  }
  const auto data = load_manifest_data({manifest("per-gpu-kept", body)}, topology, datasheet);
  CalibrateOptions o;
  o.parameters = {"host.launch_base", "host.launch_per_gpu", "simple.channel_bandwidth"};
  const auto cv = cross_validate(data, topology, datasheet, {Family::Launch}, o);
  REQUIRE(cv.folds.size() == 2);
  const auto fitted = [](const Fold& fold, const std::string& name) {
    for (const FittedValue& v : fold.values)
      if (v.parameter.name == name) return true;
    return false;
  };
  const auto unpinned = [](const Fold& fold, const std::string& name) {
    return std::find(fold.unpinned.begin(), fold.unpinned.end(), name) != fold.unpinned.end();
  };
  for (const Fold& fold : cv.folds) {
    INFO(fold.value << ": " << fold.refused);
    REQUIRE(fold.refused.empty());
    CHECK(fitted(fold, "host.launch_base"));
    CHECK(!unpinned(fold, "host.launch_base"));
    if (fold.value == "single-thread") {
      // Trained on a thread per GPU alone, where the two costs are one sum (the fit was refused before
      // session 40): the per-GPU cost keeps the datasheet's 4 us, the per-thread one is fitted.
      CHECK(!fitted(fold, "host.launch_per_gpu"));
      CHECK(unpinned(fold, "host.launch_per_gpu"));
    } else {
      // Trained on one thread driving 2 and 4 GPUs: both are fitted.
      REQUIRE(fold.value == "thread-per-gpu");
      CHECK(fitted(fold, "host.launch_per_gpu"));
      CHECK(!unpinned(fold, "host.launch_per_gpu"));
    }
  }
  CHECK(cross_validation_text(cv).find("not pinned down by the other rows: host.launch_per_gpu") !=
        std::string::npos);
}

TEST_CASE("crossval: the start families' folds fit jointly too, each training start at its own host") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  const auto data = load_manifest_data({two_starts("joint-start")}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"host.launch_per_gpu", "simple.channel_bandwidth"};
  o.probe = {"sendrecv gpus 0,1"};
  o.start_parameters = {"host.launch_scale"};
  // Without rounds the start families have nothing to do with a per-start parameter: refused, naming both
  // ways.
  const std::string why = error_of([&] { cross_validate(data, topology, h200, {Family::ProbedStart}, o); });
  CHECK(why.find("add a family that keeps every start in the fit") != std::string::npos);
  CHECK(why.find("--start-rounds") != std::string::npos);
  CalibrateOptions joint = o;
  joint.start_rounds = 2;
  CalibrateOptions plain = o;
  plain.start_parameters.clear();
  const auto cv = cross_validate(data, topology, h200, {Family::Start, Family::ProbedStart}, joint);
  const auto one = cross_validate(data, topology, h200, {Family::Start, Family::ProbedStart}, plain);
  REQUIRE(cv.folds.size() == 4);
  REQUIRE(one.folds.size() == 4);
  for (std::size_t k = 0; k < cv.folds.size(); ++k) {
    const Fold& f = cv.folds[k];
    INFO(family_name(f.family) << " " << f.value << ": " << f.refused << f.joint_note);
    REQUIRE(f.refused.empty());
    CHECK(f.joint_rounds == 2);
    CHECK(f.start_fits.empty());  // the held-out start has no training row: nothing to refit for it
    CHECK(one.folds[k].joint_rounds == 0);
    // The training start's host at its own speed moved the shared values the held-out start is predicted
    // with.
    REQUIRE(f.values.size() == one.folds[k].values.size());
    CHECK(f.values[0].value != doctest::Approx(one.folds[k].values[0].value));
  }
  CHECK(cross_validation_text(cv).find("joint: every fold, start's and probed-start's too") !=
        std::string::npos);
}

TEST_CASE("crossval: a probed start without probe rows is refused, and probes need the probed-start family") {
  const auto h200 = models::ModelParams::load(kSrc + "/models/params/h200.toml");
  const auto topology = load("h200x4.topo");
  const auto data = load_manifest_data({two_starts("unprobed", false)}, topology, h200);
  CalibrateOptions o;
  o.parameters = {"collective.ll_base_latency", "collective.simple_channel_bandwidth"};
  o.probe = {"sendrecv gpus 0,1"};
  const auto cv = cross_validate(data, topology, h200, {Family::ProbedStart}, o);
  REQUIRE(cv.folds.size() == 2);
  CHECK(cv.folds[0].refused.empty());
  CHECK(cv.folds[1].refused.find("start B has no probe rows (sendrecv gpus 0,1)") != std::string::npos);
  CHECK(cv.folds[1].held_out.empty());
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::Start}, o);
        }).find("add --family probed-start") != std::string::npos);
  CalibrateOptions none = o;
  none.probe.clear();
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::ProbedStart}, none);
        }).find("the probed-start family needs probe configurations") != std::string::npos);
  // A probe that is every row of a start leaves nothing of it to predict.
  CalibrateOptions all_reduce_probe = o;
  all_reduce_probe.probe = {"all_reduce gpus 0,1"};
  const auto only = cross_validate(data, topology, h200, {Family::ProbedStart}, all_reduce_probe);
  REQUIRE(only.folds.size() == 2);
  CHECK(only.folds[1].refused.find("start B has only probe rows (all_reduce gpus 0,1)") != std::string::npos);
  // A probe no row matches, and an unknown probe parameter, are usage errors, not folds refused one by one.
  CalibrateOptions nowhere = o;
  nowhere.probe = {"sendrecv gpus 2,3"};
  CHECK(error_of([&] {
          cross_validate(data, topology, h200, {Family::ProbedStart}, nowhere);
        }).find("no measured row is a probe (sendrecv gpus 2,3)") != std::string::npos);
  CalibrateOptions unknown = o;
  unknown.probe_parameters = {"host.launch_per_gpus"};
  CHECK(!error_of([&] { cross_validate(data, topology, h200, {Family::ProbedStart}, unknown); }).empty());
  CHECK(parse_family("probed-start") == Family::ProbedStart);
  CHECK(std::find(all_families().begin(), all_families().end(), Family::ProbedStart) == all_families().end());
}
