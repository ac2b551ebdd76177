// How validate joins commsim-measure runs by their --timing: pipelined as measured, per-iteration with the
// timing event's cost added, per-op refused for everything but pipeline steps.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/accuracy.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

const std::string kRun =
    std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x2/measure-pipelined/h200x2-2026-11-22b/";

/// The 2x H200 machine the run came from (its own topo.txt), with the NCCL default parameters.
struct X2 {
  topo::Topology topology;
  std::unique_ptr<models::TransferModel> model;
  std::unique_ptr<sim::Runtime> runtime;
  X2() {
    topo::Diagnostics diag;
    topology = topo::load_topology(kRun + "exchange_batched/topo.txt", {}, diag);
    model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
    runtime = std::make_unique<sim::Runtime>(topology, *model);
  }
};

}  // namespace

TEST_CASE("timing: a pipelined run is compared as measured, and its rows say so") {
  X2 x;
  const auto rows = compare_measured(kRun + "exchange_batched", *x.runtime);
  REQUIRE(!rows.empty());
  for (const Comparison& c : rows) CHECK(c.timing == "pipelined");
}

TEST_CASE("timing: per-iteration rows get the timing event's cost added to each prediction") {
  X2 x;
  MeasuredRun run = load_measured(kRun + "exchange_batched");
  const auto pipelined = compare_measured(run, *x.runtime);
  for (auto& row : run.doc["rows"]) row["timing"] = "per-iteration";
  const auto per_iteration = compare_measured(run, *x.runtime);
  REQUIRE(per_iteration.size() == pipelined.size());
  const double event_us = static_cast<double>(models::ModelParams::defaults().timing_event) / 1e6;
  CHECK(event_us == doctest::Approx(3.4));  // nccl-default.toml: measured with nccl-tests -I 1 on 2 H200s
  for (std::size_t i = 0; i < pipelined.size(); ++i) {
    CHECK(per_iteration[i].timing == "per-iteration");
    CHECK(per_iteration[i].predicted_us - pipelined[i].predicted_us == doctest::Approx(event_us));
  }
  // Runs from before --timing existed carry no timing field: per-iteration.
  run.doc.erase("timing");
  for (auto& row : run.doc["rows"]) row.erase("timing");
  CHECK(compare_measured(run, *x.runtime).front().timing == "per-iteration");
}

TEST_CASE("timing: an exchange timed per operation is refused, naming the mode to measure with") {
  X2 x;
  MeasuredRun run = load_measured(kRun + "exchange_batched");
  for (auto& row : run.doc["rows"]) row["timing"] = "per-op";
  CHECK_THROWS_WITH_AS(compare_measured(run, *x.runtime), doctest::Contains("--timing pipelined"),
                       InputError);
}

TEST_CASE("timing: pipeline steps join per-op (their default) and refuse pipelined") {
  X2 x;
  const auto rows = compare_measured(kRun + "pipeline_per_op", *x.runtime);
  REQUIRE(!rows.empty());
  CHECK(rows.front().timing == "per-op");
  MeasuredRun run = load_measured(kRun + "pipeline_per_op");
  for (auto& row : run.doc["rows"]) row["timing"] = "pipelined";
  CHECK_THROWS_WITH_AS(compare_measured(run, *x.runtime), doctest::Contains("--timing per-op"), InputError);
}
