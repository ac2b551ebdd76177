// The committed H200 parameter set against the committed measurements (nccl-tests, commsim-measure, PyTorch):
// the accuracy bar and the held-out (cross-validated) figures, checked in CI.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/core/text.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/crossval.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

const std::string kDir = std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x4/";

/// The lent 4x H200 machine with its fitted parameter set and the 2026-11-21 start's own host costs (the
/// start these logs come from; host-2026-11-21.toml), and optional NCCL knobs, ready to simulate.
struct H200 {
  topo::Topology topology;
  std::unique_ptr<models::TransferModel> model;
  std::unique_ptr<sim::Runtime> runtime;
  explicit H200(const std::vector<std::string>& env = {}) {
    topo::Diagnostics diag;
    topology = topo::load_topology(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/real/h200x4.topo",
                                   {}, diag);
    model = models::make_transfer_model("nccl", models::ModelParams::load(kDir + "host-2026-11-21.toml"),
                                        models::NcclEnv::parse(env));
    runtime = std::make_unique<sim::Runtime>(topology, *model);
  }
};

std::vector<Comparison> run(const std::vector<std::string>& logs, const std::vector<std::string>& env = {}) {
  H200 h(env);
  sim::Runtime& rt = *h.runtime;
  std::vector<NcclTestsRun> runs;
  for (const auto& name : logs) {
    for (auto& r : parse_nccl_tests(read_file(kDir + "nccl-tests/" + name), name))
      runs.push_back(std::move(r));
  }
  return compare(runs, rt, GpuMap::from_csv(kDir + "meta/gpus.csv"));
}

}  // namespace

TEST_CASE("accuracy: sendrecv on 2 and 4 H200s is within 10% MAPE and 25% at every size") {
  const auto g2 = run({"sendrecv_g2_d01_r1.log", "sendrecv_g2_d01_r2.log", "sendrecv_g2_d01_r3.log"});
  const auto g4 = run({"sendrecv_g4_r1.log", "sendrecv_g4_r2.log", "sendrecv_g4_r3.log"});
  REQUIRE(g2.size() == 28);
  REQUIRE(g4.size() == 28);
  CHECK(g2[0].runs == 3);
  CHECK(g4[0].gpus == std::vector<int>{0, 1, 2, 3});
  const ErrorStats s2 = stats(g2), s4 = stats(g4);
  MESSAGE("sendrecv 2 GPUs: MAPE " << s2.mape << "%, worst " << s2.worst << "% at " << s2.worst_bytes
                                   << " B");
  MESSAGE("sendrecv 4 GPUs: MAPE " << s4.mape << "%, worst " << s4.worst << "% at " << s4.worst_bytes
                                   << " B");
  CHECK(s2.mape <= 10.0);
  CHECK(s4.mape <= 10.0);
  CHECK(s2.worst <= 25.0);
  CHECK(s4.worst <= 25.0);

  // No silent regression: every headline figure stays within 1 percentage point of the committed baseline.
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"));
  CHECK(s2.mape <= baseline["sendrecv_g2_mape"].get<double>() + 1.0);
  CHECK(s4.mape <= baseline["sendrecv_g4_mape"].get<double>() + 1.0);
}

TEST_CASE("accuracy: held-out pairs (not used in the fit) stay within the bar") {
  const auto other = run({"sendrecv_g2_d02.log", "sendrecv_g2_d03.log", "sendrecv_g2_d12.log",
                          "sendrecv_g2_d13.log", "sendrecv_g2_d23.log"});
  REQUIRE(other.size() == 5 * 28);
  CHECK(other[0].gpus == std::vector<int>{0, 2});  // mapped by PCI bus id, not by CUDA device index
  const ErrorStats s = stats(other);
  MESSAGE("sendrecv, 5 held-out pairs: MAPE " << s.mape << "%, worst " << s.worst << "%");
  CHECK(s.mape <= 10.0);
  // These are single runs: below 1 MiB one run can jitter by up to 40% (an 18 us outlier at 128 KiB on GPUs
  // 0,3 where the other runs read 11 us), so the per-size bound applies where runs repeat within 2%.
  std::vector<Comparison> large;
  for (const auto& c : other) {
    if (c.bytes >= (1u << 20)) large.push_back(c);
  }
  MESSAGE("  sizes >= 1 MiB: MAPE " << stats(large).mape << "%, worst " << stats(large).worst << "%");
  CHECK(stats(large).worst <= 15.0);
}

TEST_CASE("accuracy: joining a 4-GPU log against a 2-GPU topology is refused") {
  topo::Diagnostics diag;
  const topo::Topology t =
      topo::load_topology(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/real/a6000-workstation.topo",
                          {"A6000", ""}, diag);
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  sim::Runtime rt(t, *model);
  const auto runs = parse_nccl_tests(read_file(kDir + "nccl-tests/sendrecv_g4_r1.log"), "g4.log");
  CHECK_THROWS_WITH_AS(compare(runs, rt, GpuMap{}), doctest::Contains("mismatched topology"), InputError);
}

TEST_CASE("accuracy: commsim-measure p2p (all 12 pairs) and exchange modes on 2 H200s") {
  H200 h;
  sim::Runtime& rt = *h.runtime;
  const auto p2p = compare_measured(kDir + "measure/p2p_all", rt);
  REQUIRE(p2p.size() == 12 * 31);
  const ErrorStats sp = stats(p2p);
  MESSAGE("p2p, 12 pairs (11 held out): MAPE " << sp.mape << "%, worst " << sp.worst << "% at "
                                               << sp.worst_bytes << " B");
  CHECK(sp.mape <= 10.0);
  CHECK(sp.worst <= 30.0);
  for (const char* mode : {"sequential", "batched"}) {
    const ErrorStats s = stats(compare_measured(kDir + "measure/exchange_" + mode, rt));
    MESSAGE("exchange " << std::string(mode) << ": MAPE " << s.mape << "%, worst " << s.worst << "%");
    CHECK(s.mape <= 10.0);
  }
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"));
  CHECK(sp.mape <= baseline["p2p_mape"].get<double>() + 1.0);
}

TEST_CASE("accuracy: a rank per process (mpirun) is simulated with a thread per GPU") {
  // The same 4-GPU all_reduce sweep measured with one MPI rank per GPU and with one thread per GPU
  // (validation/data/h200x4/measure/mpi): both are a host thread per GPU, and both are predicted as such; one
  // thread driving every GPU (how mpi runs were simulated until session 27) puts the mpi run's 32 B at 25 us
  // for a measured 11.
  H200 h;
  const auto mpi = compare_measured(kDir + "measure/mpi/mpi_all_reduce_g4", *h.runtime);
  const auto threads = compare_measured(kDir + "measure/mpi/thread_all_reduce_g4", *h.runtime);
  REQUIRE(!mpi.empty());
  REQUIRE(mpi.size() == threads.size());
  for (std::size_t i = 0; i < mpi.size(); ++i) {
    CAPTURE(mpi[i].bytes);
    CHECK(mpi[i].mode == "thread-per-gpu");
    CHECK(mpi[i].bytes == threads[i].bytes);
    CHECK(mpi[i].predicted_us == threads[i].predicted_us);
  }
  const ErrorStats s = stats(mpi);
  MESSAGE("all_reduce, 4 GPUs, a rank per process: MAPE " << s.mape << "%, worst " << s.worst << "%");
  CHECK(s.mape <= 15.0);
}

TEST_CASE("accuracy: an nccl-tests log with a rank per process (mpirun) is simulated with a thread per GPU") {
  // nccl-tests under mpirun prints nThread 1 nGpus 1 and one Rank line per process: every GPU has a host
  // thread of its own, as with -t N. The same log as a -t 2 run and as two processes must be predicted alike;
  // until session 28 the mpirun log was simulated as one thread driving both GPUs.
  H200 h;
  const std::string name = "validation/data/h200x4/coverage/h200x4-2026-11-22a/all_gather_g01_tpg_r3.log";
  const std::string threads = read_file(std::string(COMMSIM_SOURCE_DIR) + "/" + name);
  std::string procs = threads;
  const auto at = procs.find("nThread 2 nGpus 1");
  REQUIRE(at != std::string::npos);
  procs.replace(at, 17, "nThread 1 nGpus 1");
  const auto by_thread = compare(parse_nccl_tests(threads, "t2.log"), *h.runtime, GpuMap{});
  const auto by_process = compare(parse_nccl_tests(procs, "mpi.log"), *h.runtime, GpuMap{});
  REQUIRE(!by_thread.empty());
  REQUIRE(by_process.size() == by_thread.size());
  for (std::size_t i = 0; i < by_thread.size(); ++i) {
    CAPTURE(by_thread[i].bytes);
    CHECK(by_process[i].mode == "thread-per-gpu");
    CHECK(by_process[i].predicted_us == by_thread[i].predicted_us);
  }
  // A single thread driving both GPUs (-g 2) is predicted slower below 1 MiB: the check above can fail.
  std::string one_thread = threads;
  one_thread.replace(at, 17, "nThread 1 nGpus 2");
  const auto by_one = compare(parse_nccl_tests(one_thread, "g2.log"), *h.runtime, GpuMap{});
  REQUIRE(by_one.size() == by_thread.size());
  CHECK(by_one.front().mode.empty());
  CHECK(by_one.front().predicted_us > by_thread.front().predicted_us);
}

TEST_CASE("accuracy: an nccl-tests run mixing threads and several GPUs a thread is refused") {
  // -t 2 -g 2 (four GPUs, two a thread) is neither launch mode commsim models.
  H200 h;
  std::string log = read_file(kDir + "nccl-tests/all_reduce_g4.log");
  const auto at = log.find("nThread 1 nGpus 4");
  REQUIRE(at != std::string::npos);
  log.replace(at, 17, "nThread 2 nGpus 2");
  CHECK_THROWS_WITH_AS(compare(parse_nccl_tests(log, "t2g2.log"), *h.runtime, GpuMap{}),
                       doctest::Contains("the run drove 4 GPUs with 2 GPUs a thread"), InputError);
}

TEST_CASE("accuracy: a commsim-measure run from another GPU model is refused, naming both") {
  // validation/data/h100x4/peers2: measured on 4x H100; against the H200 topology it is another machine.
  H200 h;
  const std::string dir =
      std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h100x4/peers2/vm-20261127T191616Z/one_ch8";
  CHECK_THROWS_WITH_AS(compare_measured(dir, *h.runtime),
                       doctest::Contains("measured on 'NVIDIA H100 80GB HBM3' but topology GPU 0 is H200"),
                       InputError);
}

TEST_CASE("accuracy: GPU models are matched through the hardware catalogue, not by substring") {
  const SourceLocation at{"run.json", 1, 1};
  CHECK_NOTHROW(check_device_model("NVIDIA H200", "H200", 0, at, "run.json"));
  CHECK_NOTHROW(check_device_model("NVIDIA H100 80GB HBM3", "H100", 0, at, "run.json"));
  CHECK_NOTHROW(check_device_model("NVIDIA H100 NVL", "H100-NVL", 0, at, "run.json"));
  // "H100" is a substring of "NVIDIA H100 NVL", but the two are different GPUs (PCIe, NVLink bridges).
  CHECK_THROWS_WITH_AS(check_device_model("NVIDIA H100 NVL", "H100", 2, at, "run.json"),
                       doctest::Contains("measured on 'NVIDIA H100 NVL' but topology GPU 2 is H100"),
                       InputError);
  CHECK_THROWS_AS(check_device_model("NVIDIA H100 80GB HBM3", "H100-NVL", 0, at, "run.json"), InputError);
  // The catalogue takes the longest name a device's starts with: a form factor the name adds is another GPU.
  CHECK_THROWS_AS(check_device_model("NVIDIA H200 NVL", "H200", 0, at, "run.json"), InputError);
  CHECK_THROWS_AS(check_device_model("NVIDIA H100 PCIe", "H100", 0, at, "run.json"), InputError);
  CHECK_NOTHROW(check_device_model("NVIDIA A100-SXM4-80GB", "A100", 0, at, "run.json"));
  // Names the catalogue does not know: the model as a word of its own.
  CHECK_NOTHROW(check_device_model("AMD Instinct MI300X", "MI300X", 0, at, "run.json"));
  CHECK_THROWS_AS(check_device_model("AMD Instinct MI300XA", "MI300X", 0, at, "run.json"), InputError);
  CHECK_NOTHROW(check_device_model("", "H200", 0, at, "run.json"));
}

TEST_CASE("accuracy: a weight-sync run from another GPU model is refused") {
  H200 h;
  MeasuredRun run = load_measured(kDir + "measure/weight_sync_qwen32b_broadcast");
  CHECK_NOTHROW(compare_measured(run, *h.runtime));
  run.doc["gpus"] = nlohmann::json::array({{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}}});
  CHECK_THROWS_WITH_AS(compare_measured(run, *h.runtime),
                       doctest::Contains("measured on 'NVIDIA H100 80GB HBM3' but topology GPU 0 is H200"),
                       InputError);
}

TEST_CASE("accuracy: a PyTorch run from another GPU model is refused") {
  H200 h;
  const std::string file = kDir + "torch/weight_sync_broadcast_qwen32b.json";
  CHECK_NOTHROW(compare_torch(file, *h.runtime));
  auto doc = nlohmann::json::parse(read_file(file));
  doc["metadata"]["gpu"] = "NVIDIA H100 80GB HBM3";
  const std::string other = "accuracy_test_torch_h100.json";
  write_file_atomic(other, doc.dump());
  CHECK_THROWS_WITH_AS(compare_torch(other, *h.runtime),
                       doctest::Contains("measured on 'NVIDIA H100 80GB HBM3' but topology GPU 0 is H200"),
                       InputError);
  std::filesystem::remove(other);
}

TEST_CASE("accuracy: a measurement directory without results is refused") {
  topo::Diagnostics diag;
  const topo::Topology t =
      topo::load_topology(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/real/h200x4.topo", {}, diag);
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  sim::Runtime rt(t, *model);
  CHECK_THROWS_WITH_AS(compare_measured(kDir + "meta", rt), doctest::Contains("results.json"), IoError);
  const std::string dir = "accuracy_test_unknown_workload";
  std::filesystem::create_directories(dir);
  write_file_atomic(
      dir + "/results.json",
      R"({"schema": "commsim.results/1", "gpus": [], "rows": [{"workload": "frobnicate", "bytes": 8,
                        "median_us": 1, "reps": 1, "max_us": 1, "min_us": 1, "config_id": 0, "gpus": [0, 1]}]})");
  CHECK_THROWS_WITH_AS(compare_measured(dir, rt), doctest::Contains("cannot simulate measured 'frobnicate'"),
                       InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("accuracy: nccl-tests collectives on 2 and 4 H200s") {
  // Fitted: models/params/h200.toml [collective] was fitted to these sweeps (and commsim-measure's), so this
  // guards the fit against regressions; the held-out checks are the pipeline and weight-sync cases below.
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"));
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"}) {
    for (const char* g : {"g2", "g4"}) {
      const ErrorStats s = stats(run({std::string(op) + "_" + g + ".log"}));
      CHECK(s.mape <= baseline[std::string(op) + "_" + g + "_mape"].get<double>() + 1.0);
      MESSAGE(std::string(op) << " " << std::string(g) << ": MAPE " << s.mape << "%, worst " << s.worst
                              << "% at " << s.worst_bytes << " B");
      CHECK(s.mape <= 12.0);
      CHECK(s.worst <= 30.0);
    }
  }
}

TEST_CASE("accuracy: pipeline 1F1B and weight sync on 4 H200s (held out)") {
  H200 h;
  sim::Runtime& rt = *h.runtime;
  auto rows = compare_measured(kDir + "measure/pipeline_1f1b_nccl", rt);
  const auto torch = compare_torch(kDir + "torch/pipeline_1f1b_torch.json", rt);
  rows.insert(rows.end(), torch.begin(), torch.end());
  REQUIRE(rows.size() == 24);
  const ErrorStats sp = stats(rows);
  MESSAGE("pipeline 1F1B, 4 stages, 24 configurations: MAPE " << sp.mape << "%, worst " << sp.worst << "%");
  CHECK(sp.mape <= 10.0);
  CHECK(sp.worst <= 25.0);
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"));
  CHECK(sp.mape <= baseline["pipeline_1f1b_mape"].get<double>() + 1.0);
  // PyTorch serializes unbatched P2P on a 4-rank group: overlapped is as slow as sequential there, and the
  // simulator must say so.
  double overlapped = 0, sequential = 0;
  for (const auto& c : torch) {
    if (c.bytes != 64ULL << 20 || c.mode.find("mb 16") == std::string::npos) continue;
    if (c.mode.rfind("overlapped", 0) == 0) overlapped = c.predicted_us;
    if (c.mode.rfind("sequential", 0) == 0) sequential = c.predicted_us;
  }
  CHECK(overlapped == doctest::Approx(sequential).epsilon(0.01));
  // Megatron's interleaved schedule (V = 2, 4), measured after the simulator was written.
  std::vector<Comparison> inter;
  for (const char* d : {"pipeline_interleaved_v2_seq_batched", "pipeline_interleaved_v2_overlapped_4MiB",
                        "pipeline_interleaved_v4_seq_batched", "pipeline_interleaved_v4_overlapped_4MiB"}) {
    const auto more = compare_measured(kDir + "measure/" + d, rt);
    inter.insert(inter.end(), more.begin(), more.end());
  }
  REQUIRE(inter.size() == 20);
  const ErrorStats si = stats(inter);
  MESSAGE("interleaved pipeline, 20 configurations: MAPE " << si.mape << "%, worst " << si.worst << "%");
  CHECK(si.mape <= 10.0);
  CHECK(si.worst <= 25.0);
  CHECK(si.mape <= baseline["pipeline_interleaved_mape"].get<double>() + 1.0);
  // The per-kernel timeline of one measured step against the simulated one: same kernels per stage.
  const auto pair = pipeline_timeline(load_measured(kDir + "measure/pipeline_1f1b_timeline"), rt);
  REQUIRE(pair.has_value());
  REQUIRE(pair->measured.size() == 4);
  REQUIRE(pair->simulated.size() == 4);
  for (std::size_t st = 0; st < 4; ++st) {
    CHECK(pair->measured[st].size() == 16);  // 8 forwards and 8 backwards per stage
    CHECK(pair->simulated[st].size() == 16);
  }
  MESSAGE("timeline pair " << pair->label << ": step measured " << pair->measured_step_us << " us, simulated "
                           << pair->simulated_step_us << " us");
  CHECK(pair->simulated_step_us == doctest::Approx(pair->measured_step_us).epsilon(0.10));
  const auto ws = compare_torch(kDir + "torch/weight_sync_broadcast_qwen32b.json", rt);
  REQUIRE(ws.size() == 1);
  MESSAGE("qwen2.5-32b per-tensor broadcast, 1 -> 3 GPUs: error " << 100 * ws[0].error() << "%");
  CHECK(std::fabs(ws[0].error()) <= 0.10);
  CHECK(100 * std::fabs(ws[0].error()) <= baseline["weight_sync_broadcast_torch_error"].get<double>() + 1.0);
}

TEST_CASE("accuracy: nccl-tests alltoall on 2 and 4 H200s (grouped send/recv)") {
  const auto g2 = run({"alltoall_g2.log"});
  const auto g4 = run({"alltoall_g4.log"});
  const ErrorStats s2 = stats(g2), s4 = stats(g4);
  MESSAGE("alltoall 2 GPUs (held out): MAPE " << s2.mape << "%, worst " << s2.worst << "%");
  MESSAGE("alltoall 4 GPUs: MAPE " << s4.mape << "%, worst " << s4.worst << "%");
  CHECK(s2.mape <= 10.0);
  CHECK(s4.mape <= 6.0);  // 8.5% until the peer loss (session 25): see models/README.md
  CHECK(s4.worst <= 15.0);
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"));
  CHECK(s4.mape <= baseline["alltoall_g4_mape"].get<double>() + 1.0);
}

TEST_CASE("accuracy: three works a channel on 3 H200s, held out on a new machine start (split3_rate)") {
  // validation/data/h200x4/a2a3: commsim-measure alltoall on GPUs 0-2 of start a4b472e1 (never fitted to);
  // p2p.split3_rate was fitted on start h200x4-2026-11-26a. With NCCL_MAX_NCHANNELS=4 from 128 MiB (8: 256
  // MiB, 16: 512 MiB) every channel carries three works. Without the second warp law these sizes were 15-19%
  // fast.
  std::vector<double> errors;
  for (const auto& [channels, first] : std::vector<std::pair<int, std::uint64_t>>{
           {4, std::uint64_t{128} << 20}, {8, std::uint64_t{256} << 20}, {16, std::uint64_t{512} << 20}}) {
    H200 h({"NCCL_MAX_NCHANNELS=" + std::to_string(channels)});
    for (int round : {1, 2}) {
      const std::string dir =
          kDir + "a2a3/held/a2a_g012_ch" + std::to_string(channels) + "_r" + std::to_string(round);
      for (const Comparison& c : compare_measured(dir, *h.runtime)) {
        if (c.bytes >= first) errors.push_back(std::abs(c.predicted_us / c.measured_us - 1) * 100);
      }
    }
  }
  REQUIRE(errors.size() ==
          12);  // 3 + 2 + 1 sizes a round (alltoall sizes are multiples of 3 x 16 B: 128 MiB is just below)
  double mape = 0;
  for (double e : errors) mape += e / static_cast<double>(errors.size());
  MESSAGE("3-GPU alltoall, three works a channel (held out): MAPE " << mape << "% over " << errors.size()
                                                                    << " runs' sizes");
  CHECK(mape <= 3.0);
  CHECK(*std::max_element(errors.begin(), errors.end()) <= 6.0);
}

TEST_CASE(
    "accuracy: another machine, a 4x H100 host never fitted, keeps the H200 set's and the datasheet's "
    "figures") {
  // validation/data/h100x4/coverage/h100x4-2026-11-27c: 99 nccl-tests runs on a third H100 host, measured
  // after h200.toml's five-start host costs and the two-machine datasheet band were committed
  // (models/README.md, "Another machine"): both are held out here. Bars: the measured figures plus one point.
  const std::string src = COMMSIM_SOURCE_DIR;
  topo::Diagnostics diag;
  const auto topology = topo::load_topology(src + "/topologies/library/real/h200x4.topo", {"H100", ""}, diag);
  const std::vector<std::string> manifest = {
      src + "/validation/data/h100x4/coverage/h100x4-2026-11-27c/manifest.csv"};
  const auto score = [&](const models::ModelParams& params) {
    const auto data = load_manifest_data(manifest, topology, params);
    std::vector<std::size_t> all(data.rows.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    auto rows = predict_rows(data, all, topology, params);
    with_band(rows, params);
    return rows;
  };
  const auto fitted = score(models::ModelParams::load(src + "/models/params/h200.toml"));
  REQUIRE(fitted.size() == 884);  // 33 configurations (3 repeats each), their sizes
  const auto lat = stats(in_bound(fitted, Bound::Latency));
  const auto bw = stats(in_bound(fitted, Bound::Bandwidth));
  MESSAGE("h200.toml on the H100: MAPE " << lat.mape << "% below 1 MiB, " << bw.mape << "% from 1 MiB");
  CHECK(lat.mape <= 24.3);
  CHECK(bw.mape <= 7.9);  // 7.86% before the peer loss (session 25), 6.85% with it
  std::vector<Comparison> large;
  for (const auto& c : fitted) {
    if (c.bytes >= (32ULL << 20)) large.push_back(c);
  }
  CHECK(stats(large).mape <= 3.2);  // 3.1% before the peer loss (session 25), 2.2% with it
  // The datasheet set's wider band holds the measured medians it was not derived from.
  const auto datasheet = score(models::ModelParams::defaults());
  const auto dlat = stats(in_bound(datasheet, Bound::Latency));
  const auto dbw = stats(in_bound(datasheet, Bound::Bandwidth));
  MESSAGE("datasheet band coverage " << dlat.coverage << "% / " << dbw.coverage << "%");
  CHECK(dlat.coverage >= 96.7);
  CHECK(dbw.coverage >= 89.5);
}

TEST_CASE(
    "accuracy: NCCL_ALGO=Tree on two H200 starts never fitted, by protocol and on 3 GPUs, keeps its "
    "figures") {
  // validation/data/h200x4/tree: Tree under LL, LL128 and Simple on 2 and 4 GPUs, on 3 GPUs, with channel
  // limits (434 sizes, two machine starts). No parameter of h200.toml was fitted to them; session 29's tree
  // model was written while reading them (models/README.md, "Tree from NCCL's tree graph"). Bars: the figures
  // then plus one point (17.5% from 1 MiB before that model).
  const std::string src = COMMSIM_SOURCE_DIR;
  topo::Diagnostics diag;
  const auto topology = topo::load_topology(src + "/topologies/library/real/h200x4.topo", {}, diag);
  const std::vector<std::string> manifests = {
      src + "/validation/data/h200x4/tree/h200x4-2026-11-28d/manifest.csv",
      src + "/validation/data/h200x4/tree/h200x4-2026-11-28e/manifest.csv"};
  const auto params = models::ModelParams::load(src + "/models/params/h200.toml");
  const auto data = load_manifest_data(manifests, topology, params);
  std::vector<std::size_t> all(data.rows.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  auto rows = predict_rows(data, all, topology, params);
  REQUIRE(rows.size() == 434);
  const auto lat = stats(in_bound(rows, Bound::Latency));
  const auto bw = stats(in_bound(rows, Bound::Bandwidth));
  MESSAGE("Tree, never fitted: MAPE " << lat.mape << "% below 1 MiB, " << bw.mape << "% from 1 MiB");
  CHECK(lat.mape <= 23.0);
  CHECK(bw.mape <= 10.0);
  // 3 GPUs run three chains (NCCL's tree search): one chain in ring order was 19.8% off from 1 MiB.
  std::vector<Comparison> three;
  for (const auto& c : rows) {
    if (c.gpus.size() == 3 && c.bytes >= (1ULL << 20)) three.push_back(c);
  }
  REQUIRE(three.size() == 27);
  CHECK(stats(three).mape <= 14.1);
}

#ifdef COMMSIM_SANITIZED
constexpr bool kSanitized =
    true;  // held-out guard: checked in the optimised pass (validation/CMakeLists.txt)
#else
constexpr bool kSanitized = false;
#endif

TEST_CASE("accuracy: held-out figures (leave one family out) do not regress" * doctest::skip(kSanitized)) {
  // The manifests, start set and parameters come from the baseline, so the guard runs exactly the command
  // that produced its figures (held_out.command).
  const auto baseline = nlohmann::json::parse(read_file(kDir + "accuracy-baseline.json"))["held_out"];
  const std::string src = COMMSIM_SOURCE_DIR;
  topo::Diagnostics diag;
  const auto topology = topo::load_topology(src + "/topologies/library/real/h200x4.topo", {}, diag);
  const auto start = models::ModelParams::load(src + "/" + baseline["start"].get<std::string>());
  std::vector<std::string> manifests;
  for (const auto& m : baseline["manifests"]) manifests.push_back(src + "/" + m.get<std::string>());
  CalibrateOptions o;
  o.parameters = baseline["parameters"].get<std::vector<std::string>>();
  // The fit's loss (soft-l1 since session 26, the headline's; squared when the baseline names none).
  if (baseline.contains("loss")) o.loss = parse_fit_loss(baseline["loss"].get<std::string>());
  // The probed-start family's probe configurations (each held-out start's host calibrated on them).
  if (baseline.contains("probe")) o.probe = baseline["probe"].get<std::vector<std::string>>();
  // Each machine start's host refitted on that start's own training rows (session 36).
  if (baseline.contains("start_parameters"))
    o.start_parameters = baseline["start_parameters"].get<std::vector<std::string>>();
  // And the shared parameters refitted under those per-start refits (session 39's joint fit).
  if (baseline.contains("start_rounds")) o.start_rounds = baseline["start_rounds"].get<int>();
  const auto data = load_manifest_data(manifests, topology, start);
  std::vector<Family> families;
  for (const auto& [family, want] : baseline["families"].items()) families.push_back(parse_family(family));
  const auto cv = cross_validate(data, topology, start, families, o);
  for (const auto& [family, want] : baseline["families"].items()) {
    CAPTURE(family);
    const auto rows = held_out_rows(cv, parse_family(family));
    // Fewer held-out sizes would mean a fold is newly refused, which could hide a regression.
    CHECK(static_cast<int>(rows.size()) >= want["sizes"].get<int>());
    const auto lat = stats(in_bound(rows, Bound::Latency));
    const auto bw = stats(in_bound(rows, Bound::Bandwidth));
    CHECK(lat.mape <= want["latency_mape"].get<double>() + 1.0);
    CHECK(bw.mape <= want["bandwidth_mape"].get<double>() + 1.0);
    CHECK(lat.coverage >= want["latency_coverage"].get<double>() - 1.0);
    CHECK(bw.coverage >= want["bandwidth_coverage"].get<double>() - 1.0);
    // Below 1 MiB the band against the runs' spread it adds to the model error (the 10th-90th percentile
    // interval of every run pooled over the starts that measured a configuration and size): no wider than
    // the baseline's ratio + 0.05 (issue 13 asks for at most 1.5x; three of the four guarded are above it).
    if (want.contains("latency_band_over_spread")) {
      const double spread = cv.spread_width(parse_family(family), Bound::Latency);
      REQUIRE(spread > 0);
      MESSAGE(family << ": band " << lat.band_width << "%, runs' 80% interval " << spread << "%");
      CHECK(lat.band_width / spread <= want["latency_band_over_spread"].get<double>() + 0.05);
    }
  }
}

TEST_CASE(
    "accuracy: a weight-sync run reads the same as commsim.weight_sync/1 (s) and commsim.results/2 (us)") {
  H200 h;
  const std::string v1 = kDir + "measure/weight_sync_qwen32b_broadcast";
  const auto old_doc = nlohmann::json::parse(read_file(v1 + "/results.json"));
  REQUIRE(old_doc["schema"] == "commsim.weight_sync/1");
  // The same run as commsim-measure now writes it: one row per timing and repetition, in microseconds.
  nlohmann::json doc = old_doc;
  doc.erase("metrics");
  doc.erase("once");
  doc["schema"] = "commsim.results/2";
  doc["tool"] = "commsim-measure";
  doc["rows"] = nlohmann::json::array();
  for (const auto& m : old_doc["metrics"]) {
    for (const auto& [k, v] : m.items()) {
      if (k == "rep" || k == "warmup") continue;
      doc["rows"].push_back({{"workload", "weight-sync"},
                             {"timing", k},
                             {"time_us", v.get<double>() * 1e6},
                             {"rep", m["rep"]},
                             {"warmup", m["warmup"]},
                             {"bytes", old_doc["bytes"]}});
    }
  }
  const std::string dir = "accuracy_test_weight_sync_v2";
  std::filesystem::create_directories(dir);
  write_file_atomic(dir + "/results.json", doc.dump(2));
  const auto a = compare_measured(v1, *h.runtime);
  const auto b = compare_measured(dir, *h.runtime);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(b[0].measured_us == doctest::Approx(a[0].measured_us));
  CHECK(b[0].predicted_us == doctest::Approx(a[0].predicted_us));
  CHECK(b[0].mode == a[0].mode);
  doc["rows"][5]["time_us"] = -5;  // rep 1, total_transfer_time: a negative time names its JSON path
  write_file_atomic(dir + "/results.json", doc.dump(2));
  CHECK_THROWS_WITH_AS(compare_measured(dir, *h.runtime), doctest::Contains("rows[5].time_us"), InputError);
  std::filesystem::remove_all(dir);
}
