// Unit tests of commsim sweep: spec checks, grid order, shards, parallel runs, merging.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/progress.hpp"
#include "commsim/core/text.hpp"
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
workloads = ["all_reduce", "sendrecv"]  # p2p takes exactly two GPUs: "0-3" would fail its points
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
  CHECK_THROWS_WITH_AS(SweepSpec::parse(text, "wrap.toml"), doctest::Contains("(more than 2^64) points"),
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

TEST_CASE(
    "sweep: params 'default' runs the topology's fitted set, as simulate does, and every row has a band") {
  // The same grid on the 4x H200 (a fitted set: h200) and on an HGX H100 what-if (none: nccl-default), and
  // with the datasheet set named: the H200's default rows must be h200's times, not nccl-default's.
  const std::string src = COMMSIM_SOURCE_DIR;
  const std::string spec =
      "name = \"sets\"\niterations = 1\nwarmup = 0\n[grid]\ntopologies = [\"" + src +
      "/topologies/library/real/h200x4.topo\", \"" + src +
      "/topologies/library/whatif/hgx-h100-2nodes-ndr.toml\"]\nparams = [\"default\", \"" + src +
      "/models/params/nccl-default.toml\"]\ngpus = [\"0,1\"]\nworkloads = " +
      "[\"sendrecv\"]\nsizes = [\"1KiB\", \"64MiB\"]\n";
  const SweepSpec s = SweepSpec::parse(spec, "sets.toml");
  const auto rows = run_sweep(s, Shard{0, 1}, 1);
  REQUIRE(rows.size() == 8);
  // Grid order: topology, params, ..., sizes fastest.
  for (const SweepRow& r : rows) {
    CAPTURE(r.index);
    REQUIRE(r.error.empty());
    CHECK(r.time_us_lo < r.time_us);
    CHECK(r.time_us < r.time_us_hi);
  }
  CHECK(rows[0].param_set == "h200");
  CHECK(rows[2].param_set == "nccl-default");
  CHECK(rows[4].param_set == "nccl-default");  // no fitted set for H100
  CHECK(rows[6].param_set == "nccl-default");
  CHECK(rows[0].time_us != rows[2].time_us);  // h200's floor is not the datasheet's
  CHECK(rows[4].time_us == rows[6].time_us);
  // The band is the set's: h200's from 1 MiB is narrower than the datasheet band.
  CHECK((rows[1].time_us_hi - rows[1].time_us_lo) / rows[1].time_us <
        (rows[3].time_us_hi - rows[3].time_us_lo) / rows[3].time_us);
  // The CSV carries the set and the band, and reads back.
  const std::string csv = sweep_csv(rows);
  CHECK(csv.rfind("point,topology,params,param_set,nccl_env,gpus,ngpus,workload,bytes,time_us,time_us_lo,"
                  "time_us_hi,",
                  0) == 0);
  std::vector<SweepRow> back;
  merge_sweep_files({{"r.csv", csv, "r.meta.json", sweep_meta(s, Shard{0, 1}, rows)}}, back);
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(back[i].param_set == rows[i].param_set);
    CHECK(back[i].time_us_lo == rows[i].time_us_lo);
    CHECK(back[i].time_us_hi == rows[i].time_us_hi);
  }
}

TEST_CASE("sweep: a failed point is marked failed with empty times, and merges back as failed") {
  const SweepSpec s = SweepSpec::parse(kSpec, "s.toml");
  std::vector<SweepRow> rows = run_sweep(s, Shard{0, 1}, 1);
  REQUIRE(rows.size() >= 2);
  rows[1].error = "no route, for example";
  const std::string csv = sweep_csv(rows);
  CHECK(csv.find(",,,,,") != std::string::npos);  // time_us, its band, algbw_gbps, busbw_gbps empty
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

TEST_CASE("sweep: the point count never wraps, and a grid over the limit is refused at the grid") {
  SweepSpec s;
  for (auto* axis : {&s.topologies, &s.params, &s.gpus}) axis->assign(65536, "x");
  s.nccl_env.assign(1, {});
  s.workloads.assign(1, "p2p");
  s.sizes.assign(65536, 1);
  // 65,536^4 is 2^64: it used to wrap to 0 points.
  CHECK(s.points() == std::numeric_limits<std::size_t>::max());
  std::string sizes, gpus;
  for (int i = 1; i <= 1000; ++i) sizes += (i > 1 ? ", \"" : "\"") + std::to_string(i) + "KiB\"";
  for (int i = 0; i < 1001; ++i) gpus += (i > 0 ? ", \"0," : "\"0,") + std::to_string(i + 1) + "\"";
  const std::string spec = "[grid]\ntopologies = [\"" + std::string(COMMSIM_SOURCE_DIR) +
                           "/topologies/library/real/h200x4.topo\"]\nworkloads = [\"p2p\"]\nsizes = [" +
                           sizes + "]\ngpus = [" + gpus + "]\n";
  CHECK_THROWS_WITH_AS(SweepSpec::parse(spec, "big.toml"),
                       doctest::Contains("refused: 1001000 points; a sweep has at most 1000000"), InputError);
}

TEST_CASE("sweep: progress gets every point's work estimate first, then each point once") {
  const SweepSpec s = SweepSpec::parse(kSpec, "s.toml");
  std::vector<double> work;
  std::vector<int> seen;
  SweepProgress progress;
  progress.start = [&](const std::vector<double>& w) {
    CHECK(seen.empty());
    work = w;
    seen.assign(w.size(), 0);
  };
  progress.done = [&](std::size_t item) {
    REQUIRE(item < seen.size());
    ++seen[item];
  };
  const Shard shard{1, 2};
  const auto rows = run_sweep(s, shard, 2, progress);
  REQUIRE(work.size() == rows.size());
  for (int n : seen) CHECK(n == 1);
  // Shard 1 of 2 owns the odd points: index 1 is all_reduce on GPUs 0-3 at 1 MiB (4 collective kernels:
  // 1000 + 4, over 1 iteration); indices 3 and 5, p2p at 1 KiB and 64 MiB, move the same transfers: the same
  // work.
  CHECK(rows[0].index == 1);
  CHECK(work[0] == doctest::Approx(1004));
  CHECK(work[1] == work[2]);
  CHECK(work == sweep_work(s, shard));
}

/// The sweep of the progress tests: points that differ in cost, from a sendrecv on 32 GPUs to an alltoall on
/// 256 (65,280 transfers a run), 1 KiB to 256 MiB, 3 iterations after 1 warmup.
SweepSpec progress_sweep() {
  return SweepSpec::parse(std::string(R"(
name = "progress"
iterations = 3
warmup = 1
[grid]
topologies = [")") + COMMSIM_SOURCE_DIR +
                              R"(/sim/tests/hgx-h100-32nodes.toml"]
gpus = ["0-31", "0-63", "0-127", "0-255"]
workloads = ["sendrecv", "all_reduce", "alltoall"]
sizes = ["1KiB", "8KiB", "64KiB", "512KiB", "4MiB", "32MiB", "256MiB"]
)",
                          "progress.toml");
}

const std::string kPointTimes = std::string(COMMSIM_SOURCE_DIR) + "/sim/sweep/tests/point-times.tsv";

TEST_CASE("sweep: record the progress sweep's per-point simulation times (COMMSIM_RECORD_POINT_TIMES=1)") {
  // Rewrites sim/sweep/tests/point-times.tsv: every point of progress_sweep() simulated on one thread, in
  // point order, its wall time. Off unless asked for (it takes about 20 s).
  if (!std::getenv("COMMSIM_RECORD_POINT_TIMES")) return;
  const SweepSpec s = progress_sweep();
  const std::vector<double> work = sweep_work(s, Shard{});
  std::vector<double> cost;
  auto last = std::chrono::steady_clock::now();
  SweepProgress recorder;
  recorder.done = [&](std::size_t item) {
    const auto now = std::chrono::steady_clock::now();
    CHECK(item == cost.size());  // one thread: point order
    cost.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  };
  const auto rows = run_sweep(s, Shard{}, 1, recorder);
  REQUIRE(cost.size() == rows.size());
  std::ofstream out(kPointTimes);
  out << "# Per-point simulation times of the progress sweep (sim/sweep/tests/sweep_test.cpp, "
         "progress_sweep),\n"
         "# recorded with: COMMSIM_RECORD_POINT_TIMES=1 build/default/sim/sweep/sweep_test -tc='sweep: "
         "record*'\n"
         "point\tworkload\tgpus\tbytes\twork\tseconds\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    out << rows[i].index << '\t' << rows[i].workload << '\t' << rows[i].gpus << '\t' << rows[i].bytes << '\t'
        << work[i] << '\t' << cost[i] << '\n';
}

TEST_CASE("sweep: the progress ETA from the points' work does not swing as the count-based one did") {
  // The recorded per-point times of progress_sweep() replayed through both estimators: before (elapsed /
  // points done x points left, as `commsim sweep` printed it) and after (EtaEstimator over sweep_work). The
  // swing is the predicted total's max / min from 5% of the points on.
  const SweepSpec s = progress_sweep();
  const std::vector<double> work = sweep_work(s, Shard{});
  std::vector<double> cost;
  std::istringstream in(read_file(kPointTimes));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("point", 0) == 0) continue;
    const auto f = csv_split(line, '\t');
    REQUIRE(f.size() == 6);
    REQUIRE(cost.size() < work.size());
    CHECK(std::stod(f[4]) == doctest::Approx(work[cost.size()]));  // recorded with today's estimate
    cost.push_back(std::stod(f[5]));
  }
  REQUIRE(cost.size() == work.size());
  const std::size_t n = cost.size();
  EtaEstimator eta(work);
  double elapsed = 0;
  std::vector<double> before, after;
  for (std::size_t i = 0; i < n; ++i) {
    elapsed += cost[i];
    eta.done(i, elapsed);
    if (i + 1 < n / 20 || i + 1 == n) continue;
    before.push_back(elapsed + elapsed / static_cast<double>(i + 1) * static_cast<double>(n - i - 1));
    after.push_back(elapsed + eta.eta_s());
  }
  const auto swing = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *hi / *lo;
  };
  MESSAGE("recorded " << n << " points, " << elapsed << " s; predicted total: before "
                      << *std::min_element(before.begin(), before.end()) << " .. "
                      << *std::max_element(before.begin(), before.end()) << " s (swing " << swing(before)
                      << "x), after " << *std::min_element(after.begin(), after.end()) << " .. "
                      << *std::max_element(after.begin(), after.end()) << " s (swing " << swing(after)
                      << "x)");
  CHECK(swing(before) > 10);
  CHECK(swing(after) < 4);
  CHECK(swing(after) * 3 < swing(before));
}
