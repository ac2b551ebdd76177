// Parameter sets: provenance, the default fitted set per GPU model, and the prediction band.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/models/params.hpp"

using namespace commsim;
using namespace commsim::models;

TEST_CASE("params: the H200 set is the fitted default for H200 and says where it was fitted") {
  const ModelParams* h200 = ModelParams::fitted_for_gpu("H200");
  REQUIRE(h200 != nullptr);
  CHECK(h200->name == "h200");
  CHECK(h200->gpu == "H200");
  CHECK(h200->nccl_version == "2.28.3");
  CHECK(h200->provenance().find("fitted: validation/data/h200x4") != std::string::npos);
  CHECK(ModelParams::fitted_for_gpu("H100") == nullptr);
  CHECK(ModelParams::fitted_for_gpu("") == nullptr);
  CHECK(ModelParams::defaults().fitted.empty());
  CHECK(ModelParams::defaults().provenance().find("not fitted") != std::string::npos);
}

TEST_CASE("params: the band is relative to the prediction, per size regime") {
  ModelParams p = ModelParams::defaults();
  p.band = {0.1, 0.2, 0.03, 0.04};
  const Band small = band_of(p, kBandRegimeBytes - 1, 100);
  CHECK(small.lo_us == doctest::Approx(90));
  CHECK(small.hi_us == doctest::Approx(120));
  const Band large = band_of(p, kBandRegimeBytes, 1000);
  CHECK(large.lo_us == doctest::Approx(970));
  CHECK(large.hi_us == doctest::Approx(1040));
  // The unfitted defaults carry the wider datasheet band.
  CHECK(ModelParams::defaults().band.latency_above == doctest::Approx(1.1));
  CHECK(ModelParams::defaults().band.bandwidth_below == doctest::Approx(0.2));
}

TEST_CASE("params: across a network a fit inside one machine gets the datasheet band where that is wider") {
  const ModelParams& d = ModelParams::defaults();
  ModelParams fitted = d;
  fitted.fitted = "one machine";
  fitted.band = {0.3, 0.5, 0.07, 0.9};
  const BandParams b = network_band(fitted);
  CHECK(b.latency_below == doctest::Approx(0.3));  // wider than the datasheet's 0.25: kept
  CHECK(b.latency_above == doctest::Approx(d.band.latency_above));
  CHECK(b.bandwidth_below == doctest::Approx(d.band.bandwidth_below));
  CHECK(b.bandwidth_above == doctest::Approx(0.9));
  // A fit that crossed a network, and the unfitted set, keep their own band.
  fitted.fitted_network = true;
  CHECK(network_band(fitted).bandwidth_below == doctest::Approx(0.07));
  ModelParams unfitted = d;  // not fitted, with a band narrower than the datasheet's: kept as it is
  unfitted.band = {0.1, 0.1, 0.05, 0.05};
  CHECK(network_band(unfitted).latency_above == doctest::Approx(0.1));
  CHECK(network_band(unfitted).bandwidth_below == doctest::Approx(0.05));
  const ModelParams read = ModelParams::parse("fitted_network = true\n", "<test>", d);
  CHECK(read.fitted_network);
  CHECK_THROWS_AS(ModelParams::parse("fitted_network = \"yes\"\n", "<test>", d), InputError);
}

TEST_CASE("params: a [band] must be plain ratios below 1 on the lower side") {
  CHECK_THROWS_WITH_AS(ModelParams::parse("[band]\nlatency_below = 1.2\n", "b.toml", ModelParams::defaults()),
                       doctest::Contains("latency_below and bandwidth_below must be below 1"), InputError);
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[band]\nlatency_above = \"5us\"\n", "b.toml", ModelParams::defaults()),
      doctest::Contains("b.toml:2"), InputError);
}

TEST_CASE("params: the ring's receive-only step is a ratio of 0 or more, located when it is not") {
  CHECK(ModelParams::parse("[collective]\nring_recv_step = 0\n", "r.toml", ModelParams::defaults())
            .coll_ring_recv_step == 0);
  CHECK(ModelParams::parse("[collective]\nring_recv_step = 0.25\n", "r.toml", ModelParams::defaults())
            .coll_ring_recv_step == doctest::Approx(0.25));
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[collective]\nring_recv_step = -0.1\n", "r.toml", ModelParams::defaults()),
      doctest::Contains("r.toml:2:18: error: [collective]: 'ring_recv_step': must be a ratio of 0 or more"),
      InputError);
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[collective]\nring_recv_step = \"0.2us\"\n", "r.toml", ModelParams::defaults()),
      doctest::Contains("expected a plain number"), InputError);
  // The fitted H200 set measures it; the datasheet defaults leave the links never waiting.
  CHECK(ModelParams::fitted_for_gpu("H200")->coll_ring_recv_step > 0.1);
  CHECK(ModelParams::defaults().coll_ring_recv_step == 0);
  // The channel-bound step counts: a reducing step's cost is a positive ratio, the receive-only ones 0 or
  // more.
  const ModelParams steps =
      ModelParams::parse("[collective]\nreduce_step = 0.75\nchannel_recv_step = 0.5\nll_recv_step = 0\n",
                         "s.toml", ModelParams::defaults());
  CHECK(steps.coll_reduce_step == doctest::Approx(0.75));
  CHECK(steps.coll_channel_recv_step == doctest::Approx(0.5));
  CHECK(steps.coll_ll_recv_step == 0);
  CHECK_THROWS_WITH(
      ModelParams::parse("[collective]\nreduce_step = 0\n", "s.toml", ModelParams::defaults()),
      doctest::Contains("s.toml:2:15: error: [collective]: 'reduce_step': must be a positive ratio"));
  CHECK_THROWS_WITH(
      ModelParams::parse("[collective]\nll_recv_step = -1\n", "s.toml", ModelParams::defaults()),
      doctest::Contains("'ll_recv_step': must be a ratio of 0 or more"));
  // The datasheet: a reducing step costs a forwarding one; Simple's receive-only step half of one, LL's one.
  CHECK(ModelParams::defaults().coll_reduce_step == 1);
  CHECK(ModelParams::defaults().coll_channel_recv_step == 0.5);
  CHECK(ModelParams::defaults().coll_ll_recv_step == 1);
  CHECK(ModelParams::fitted_for_gpu("H200")->coll_reduce_step < 1);
}

TEST_CASE("params: a start-up loss needs the time it fades over, and a ramp is a ratio of 0 or more") {
  // The port ramp and the peer loss's ramp each need their time (> 0) once set; with 0 none is needed.
  const ModelParams base = ModelParams::defaults();
  const auto with = [&](const std::string& text) { return ModelParams::parse(text, "r.toml", base); };
  CHECK(with("[p2p]\nport_ramp = 0.2\nport_ramp_time = \"80us\"\n").port_ramp == doctest::Approx(0.2));
  CHECK(with("[p2p]\nport_ramp = 0.2\nport_ramp_time = \"80us\"\n").port_ramp_time == 80'000'000);
  CHECK(with("[p2p]\nport_ramp = 0\nport_ramp_time = \"0us\"\n").port_ramp == 0);
  CHECK_THROWS_WITH_AS(with("[p2p]\nport_ramp = 0.2\nport_ramp_time = \"0us\"\n"),
                       doctest::Contains("p2p.port_ramp needs p2p.port_ramp_time > 0"), InputError);
  CHECK_THROWS_WITH_AS(with("[p2p]\npeer_ramp = 0.2\npeer_ramp_time = \"0us\"\n"),
                       doctest::Contains("p2p.peer_ramp needs p2p.peer_ramp_time > 0"), InputError);
  CHECK_THROWS_WITH_AS(with("[p2p]\nport_ramp = -0.1\n"), doctest::Contains("must be a ratio of 0 or more"),
                       InputError);
  CHECK_THROWS_AS(with("[p2p]\nport_ramp_time = 80\n"), InputError);  // no unit
  // Shipped: the datasheet set has none; the fitted H200 set a small one, over the peer loss's 50 us.
  CHECK(base.port_ramp == 0);
  CHECK(ModelParams::fitted_for_gpu("H200")->port_ramp > 0);
  CHECK(ModelParams::fitted_for_gpu("H200")->port_ramp_time == 50'000'000);
}

namespace {

/// Writes `text` to a fresh file under the system temp folder and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "commsim_params_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string load_error(const std::string& path) {
  try {
    (void)ModelParams::load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("params: a set over a base file keeps the base's values but for the keys it sets") {
  const std::string base = write_temp("base.toml",
                                      "name = \"machine\"\nfitted = \"somewhere\"\ngpu = \"H200\"\n"
                                      "[host]\nlaunch_base = \"2us\"\nlaunch_per_gpu = \"5us\"\n"
                                      "[simple]\nchannel_bandwidth = \"30GBps\"\n");
  const std::string over = write_temp("over.toml",
                                      "# one start's host\nbase = \"base.toml\"\nname = \"start\"\n"
                                      "[host]\nlaunch_per_gpu = \"7us\"\n");
  const ModelParams p = ModelParams::load(over);
  CHECK(p.name == "start");
  CHECK(p.fitted == "somewhere");
  CHECK(p.gpu == "H200");
  CHECK(p.launch_per_gpu == 7'000'000);
  CHECK(p.launch_base == 2'000'000);
  CHECK(p.simple.channel_bandwidth == doctest::Approx(30e9));
  // Keys neither file sets keep the defaults.
  CHECK(p.kernel_gap == ModelParams::defaults().kernel_gap);
  CHECK(p.source == over);
}

TEST_CASE("params: a missing base, a cycle of bases and a base in parsed text are located errors") {
  const std::string missing = write_temp("missing.toml", "name = \"x\"\n\nbase = \"nowhere.toml\"\n");
  const std::string e1 = load_error(missing);
  CHECK(e1.find("missing.toml:3:") != std::string::npos);
  CHECK(e1.find("no such parameter file") != std::string::npos);
  const std::string self = write_temp("self.toml", "base = \"self.toml\"\n");
  const std::string e2 = load_error(self);
  CHECK(e2.find("self.toml:1:") != std::string::npos);
  CHECK(e2.find("already in the chain of bases") != std::string::npos);
  write_temp("ping.toml", "base = \"pong.toml\"\n");
  const std::string pong = write_temp("pong.toml", "base = \"ping.toml\"\n");
  CHECK(load_error(pong).find("already in the chain of bases") != std::string::npos);
  const std::string empty = write_temp("empty.toml", "base = \"\"\n");
  CHECK(load_error(empty).find("is empty") != std::string::npos);
  // An error inside a base names the base's own line, and which file read it as its base.
  write_temp("bad_base.toml", "[host]\nlaunch_base = 3\n");
  const std::string over_bad = write_temp("over_bad.toml", "base = \"bad_base.toml\"\n");
  const std::string e3 = load_error(over_bad);
  CHECK(e3.find("bad_base.toml:2:") != std::string::npos);
  CHECK(e3.find("(read as the base of " + over_bad + ")") != std::string::npos);
  CHECK_THROWS_WITH_AS(ModelParams::parse("base = \"h200.toml\"\n", "<text>", ModelParams::defaults()),
                       doctest::Contains("loaded from disk"), InputError);
}
