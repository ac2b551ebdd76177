// Unit tests of commsim sweep: spec checks, grid order, shards, parallel runs, merging.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/sim/sweep.hpp"

using namespace commsim;
using namespace commsim::sim;

namespace {

const std::string kSpec = std::string(R"(
name = "test sweep"
iterations = 1
warmup = 0
[grid]
topologies = [")") + COMMSIM_SOURCE_DIR +
                          R"(/topologies/library/real/h200x4.topo"]
nccl_env = [[], ["NCCL_PROTO=Simple"]]
gpus = ["0-3", "0,1"]
workloads = ["all_reduce", "p2p"]
sizes = ["1KiB", "1MiB", "64MiB"]
)";

}  // namespace

TEST_CASE("sweep: the grid is the product of the axes, sizes varying fastest") {
  const SweepSpec s = SweepSpec::parse(kSpec, "s.toml");
  CHECK(s.points() == 1 * 1 * 2 * 2 * 2 * 3);
  const SweepPoint p = sweep_point(s, 7);  // env 0, gpus 1, workload 0, size 1
  CHECK(p.nccl_env == 0);
  CHECK(p.gpus == 1);
  CHECK(p.workload == 0);
  CHECK(p.size == 1);
  CHECK(sweep_point(s, 23).nccl_env == 1);
}

TEST_CASE("sweep: bad specs name the key") {
  CHECK_THROWS_WITH_AS(
      SweepSpec::parse("[grid]\ntopologies=[\"a\"]\nworkloads=[\"allreduce\"]\nsizes=[\"1MiB\"]\n", "s.toml"),
      doctest::Contains("unknown workload 'allreduce'"), InputError);
  CHECK_THROWS_WITH_AS(
      SweepSpec::parse("[grid]\ntopologies=[\"a\"]\nworkloads=[\"p2p\"]\nsizes=[\"1024\"]\n", "s.toml"),
      doctest::Contains("s.toml:4"), InputError);
  CHECK_THROWS_WITH_AS(SweepSpec::parse("[grid]\ntopologies=[\"a\"]\nworkloads=[\"p2p\"]\nsizes=[\"1MiB\"]\n"
                                        "nccl_env=[[\"NCCL_FAST=1\"]]\n",
                                        "s.toml"),
                       doctest::Contains("NCCL_FAST"), InputError);
  CHECK_THROWS_AS(SweepSpec::parse("name = \"x\"\n", "s.toml"), InputError);
}

TEST_CASE("sweep: a grid of more points than 64 bits count is refused, not wrapped to 0 points") {
  // Six axes of 2,048 entries are 2^66 points: the unchecked product wrapped to 0 and the spec was accepted.
  auto axis = [](const std::string& entry) {
    std::string list = "[";
    for (int i = 0; i < 2048; ++i) list += (i ? "," : "") + entry;
    return list + "]";
  };
  const std::string text = "[grid]\ntopologies = " + axis("\"t\"") + "\nparams = " + axis("\"default\"") +
                           "\nnccl_env = " + axis("[]") + "\ngpus = " + axis("\"all\"") +
                           "\nworkloads = " + axis("\"p2p\"") + "\nsizes = " + axis("\"1B\"") + "\n";
  CHECK_THROWS_WITH_AS(SweepSpec::parse(text, "wrap.toml"), doctest::Contains("more than 100,000,000 points"),
                       InputError);
}

TEST_CASE("sweep: iterations and warmup are range-checked before narrowing") {
  const std::string grid = "[grid]\ntopologies=[\"a\"]\nworkloads=[\"p2p\"]\nsizes=[\"1MiB\"]\n";
  CHECK_THROWS_WITH_AS(SweepSpec::parse("iterations = 4294967297\n" + grid, "s.toml"),
                       doctest::Contains("must be between 1 and 1000"), InputError);
  CHECK_THROWS_WITH_AS(SweepSpec::parse("warmup = 4294967296\n" + grid, "s.toml"),
                       doctest::Contains("must be between 0 and 1000"), InputError);
}

TEST_CASE("sweep: shards split the points and are parsed strictly") {
  const Shard s = Shard::parse("2/5");
  CHECK(s.owns(7));
  CHECK(!s.owns(8));
  CHECK_THROWS_AS(Shard::parse("5/5"), UsageError);
  CHECK_THROWS_AS(Shard::parse("2"), UsageError);
  CHECK_THROWS_AS(Shard::parse("1/2x"), UsageError);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  const Shard a = Shard::parse("auto");
  CHECK(a.k == 3);
  CHECK(a.n == 4);
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
}

TEST_CASE("sweep: shards run on several threads merge into the single run's rows") {
  const SweepSpec s = SweepSpec::parse(kSpec, "s.toml");
  const auto whole = run_sweep(s, Shard{0, 1}, 1);
  REQUIRE(whole.size() == s.points());
  for (const auto& r : whole) {
    CAPTURE(r.index);
    CHECK(r.error.empty());
    CHECK(r.time_us > 0);
  }
  // Simple-only differs from the tuner's LL choice at small sizes, or the knob axis would be pointless.
  bool differs = false;
  for (std::size_t i = 0; i < 12; ++i) differs = differs || whole[i].time_us != whole[i + 12].time_us;
  CHECK(differs);
  std::vector<SweepFile> files;
  for (int k = 0; k < 3; ++k) {
    const Shard sh{k, 3};
    const auto rows = run_sweep(s, sh, 2);
    const std::string name = "shard" + std::to_string(k) + ".csv";
    files.push_back({name, sweep_csv(rows), sweep_meta_path(name), sweep_meta(s, sh, rows)});
  }
  std::vector<SweepRow> merged;
  const SweepMerged m = merge_sweep_files({files[2], files[0], files[1]}, merged);
  REQUIRE(merged.size() == whole.size());
  for (std::size_t i = 0; i < merged.size(); ++i) {
    CHECK(merged[i].index == i);
    CHECK(merged[i].time_us == whole[i].time_us);  // the CSV keeps every digit (round-trip)
  }
  CHECK(m.csv.rfind("point,topology,", 0) == 0);  // no comment line
  CHECK(m.meta.find("\"shard\": \"0/1\"") != std::string::npos);
  CHECK(m.csv == [&] {
    std::vector<SweepRow> again;
    return merge_sweep_files(files, again).csv;
  }());
  CHECK(sweep_html("t", merged).find("<svg") != std::string::npos);

  SUBCASE("a missing shard, a repeated one or another spec's shard is refused") {
    CHECK_THROWS_WITH_AS(merge_sweep_files({files[0], files[1]}, merged),
                         doctest::Contains("shard(s) 2 of 3 missing"), UsageError);
    CHECK_THROWS_WITH_AS(merge_sweep_files({files[0], files[0], files[1]}, merged),
                         doctest::Contains("given twice"), InputError);
    const SweepSpec other = SweepSpec::parse(kSpec + "\n# changed\n", "s.toml");
    auto foreign = files;
    foreign[1].meta = sweep_meta(other, Shard{1, 3}, {});
    CHECK_THROWS_WITH_AS(merge_sweep_files(foreign, merged), doctest::Contains("different sweep spec"),
                         InputError);
  }
}

TEST_CASE("sweep: a failed point is marked failed with empty times, and merges back as failed") {
  const SweepSpec s = SweepSpec::parse(kSpec, "s.toml");
  std::vector<SweepRow> rows = run_sweep(s, Shard{0, 1}, 1);
  REQUIRE(rows.size() >= 2);
  rows[1].error = "no route, for example";
  const std::string csv = sweep_csv(rows);
  CHECK(csv.find(",,,") != std::string::npos);  // time_us, algbw_gbps, busbw_gbps empty
  CHECK(csv.find(",failed,\"no route, for example\"") != std::string::npos);
  CHECK(csv.find("\n0,") != std::string::npos);
  CHECK(sweep_meta(s, Shard{0, 1}, rows).find("\"failed\": 1") != std::string::npos);
  std::vector<SweepRow> back;
  merge_sweep_files({{"r.csv", csv, "r.meta.json", sweep_meta(s, Shard{0, 1}, rows)}}, back);
  REQUIRE(back.size() == rows.size());
  CHECK(back[1].error == "no route, for example");
  CHECK(back[0].error.empty());
  CHECK(back[0].time_us == rows[0].time_us);
}
