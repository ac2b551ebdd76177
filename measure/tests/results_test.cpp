// Unit tests of measurement output: flushed lines, resume after a crash, final files, NCCL log parsing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/measure/results.hpp"
#include "commsim/workloads/registry.hpp"

using namespace commsim;
using namespace commsim::measure;
namespace fs = std::filesystem;

namespace {
std::string fresh_dir(const char* name) {
  const auto d = fs::temp_directory_path() / (std::string("commsim-measure-test-") + name);
  fs::remove_all(d);
  return d.string();
}
Config cfg(int id, std::uint64_t bytes) {
  return {id, "p2p", 0, 1, {0, 1}, bytes, "", 0};
}
Sample sample(int id, int rep, std::vector<double> t) {
  Sample s;
  s.config = id;
  s.rep = rep;
  s.iteration_us = std::move(t);
  return s;
}
}  // namespace

TEST_CASE("results: lines are on disk at once, resume skips them, final files summarise every repetition") {
  const std::string dir = fresh_dir("resume");
  const std::vector<Config> configs{cfg(0, 1024), cfg(1, 1 << 20)};
  {
    ResultStore store(dir, false);
    store.append(configs[0], sample(0, 0, {10, 12}));
    store.append(configs[1], sample(1, 0, {20, 22}));
    // No finalize: as if the process died here.
  }
  CHECK(split_lines(read_file(dir + "/results.jsonl")).size() == 2);
  CHECK_THROWS_WITH_AS(ResultStore(dir, false), doctest::Contains("--resume"), UsageError);
  {
    // A crash in the middle of writing leaves a partial last line: it is dropped, the rest kept.
    std::ofstream(dir + "/results.jsonl", std::ios::app) << "{\"config_id\": 0, \"re";
  }
  ResultStore store(dir, true);
  CHECK(store.done(0, 0));
  CHECK(store.done(1, 0));
  CHECK_FALSE(store.done(0, 1));
  store.append(configs[0], sample(0, 1, {14, 14}));
  store.finalize(configs, {{"tool", "test"}});
  const std::string jsonl = read_file(dir + "/results.jsonl");
  for (const Line& l : split_lines(jsonl))
    CHECK(nlohmann::json::accept(l.text));  // the torn line was dropped
  const std::string csv = read_file(dir + "/results.csv");
  CHECK(csv.find("p2p,0,1,0 1,,1024,12.5,") != std::string::npos);  // median of the rep means 11 and 14
  const auto j = nlohmann::json::parse(read_file(dir + "/results.json"));
  CHECK(j["schema"] == "commsim.results/2");
  CHECK(j["tool"] == "test");  // the metadata's, copied
  CHECK(j["rows"][0]["reps"] == 2);
  CHECK(j["rows"][0]["median_us"].get<double>() == doctest::Approx(12.5));
  CHECK(j["rows"][1]["algbw_gbps"].get<double>() == doctest::Approx((1 << 20) / 21.0 / 1e3));
  CHECK(split_lines(read_file(dir + "/samples.csv")).size() == 1 + 6);
  CHECK(split_lines(read_file(dir + "/exec_log.csv")).size() == 1 + 3);
}

TEST_CASE("results: bus-bandwidth factors are nccl-tests' (the registry's)") {
  using workloads::find_workload;
  CHECK(find_workload("all_reduce").busbw_factor(4) == doctest::Approx(1.5));
  CHECK(find_workload("all_gather").busbw_factor(4) == doctest::Approx(0.75));
  CHECK(find_workload("p2p").busbw_factor(2) == 1.0);
}

TEST_CASE("results: transports are read from NCCL's INFO log") {
  const std::string log =
      read_file(std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x4/meta/nccl_debug_sendrecv4.log") +
      read_file(std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x4/meta/nccl_debug_p2pdisable2.log");
  const auto t = parse_nccl_transports(log);
  bool p2p = false, shm = false;
  for (const auto& [a, b, how] : t) {
    p2p = p2p || (a == 0 && b == 1 && how == "P2P/direct pointer");
    shm = shm || (how.rfind("SHM", 0) == 0);
  }
  CHECK(p2p);
  CHECK(shm);
}

TEST_CASE("results: a pipeline repetition's timeline reaches the jsonl line and the final row") {
  const std::string dir = fresh_dir("timeline");
  Config c{0, "pipeline", -1, -1, {0, 1}, 4 << 20, "batched", 0, 4, 500, 1000, 1};
  Sample s = sample(0, 0, {3000, 3010});
  s.timeline = nlohmann::json::array(
      {nlohmann::json::array({{{"kind", "forward"}, {"start_us", 1.0}, {"end_us", 501.0}}}),
       nlohmann::json::array()});
  ResultStore store(dir, false);
  store.append(c, s);
  store.finalize({c}, {{"tool", "test"}});
  const auto line = nlohmann::json::parse(split_lines(read_file(dir + "/results.jsonl")).front().text);
  CHECK(line["timeline"][0][0]["kind"] == "forward");
  const auto j = nlohmann::json::parse(read_file(dir + "/results.json"));
  CHECK(j["rows"][0]["timeline"][0][0]["end_us"].get<double>() == doctest::Approx(501.0));
  CHECK(j["rows"][0]["chunks"] == 1);
}

TEST_CASE("combine_rank_records: mean per iteration, slowest rank's total, ranks in order") {
  // Two processes (as under MPI): the second reports rank 0, the first rank 1.
  RankRecord r1{1, {10.0, 30.0}, nullptr, 0, 0};
  RankRecord r0{0, {20.0, 20.0}, nullptr, 0, 0};
  Sample s;
  combine_rank_records({encode_rank_records({r1}), encode_rank_records({r0})}, 2, s);
  REQUIRE(s.iteration_us.size() == 2);
  CHECK(s.iteration_us[0] == doctest::Approx(15.0));
  CHECK(s.iteration_us[1] == doctest::Approx(25.0));
  CHECK(s.rep_time_us == doctest::Approx(20.0));  // both totals are 40 us over 2 iterations
  CHECK(s.timeline.is_null());

  RankRecord slow{1, {10.0, 50.0}, nullptr, 0, 0};
  combine_rank_records({encode_rank_records({r0, slow})}, 2, s);  // one process drives both (thread launch)
  CHECK(s.rep_time_us == doctest::Approx(30.0));
}

TEST_CASE("combine_rank_records: pipeline timelines are listed by rank") {
  RankRecord a{
      0, {5.0}, nlohmann::json::array({{{"kind", "forward"}, {"start_us", 0.0}, {"end_us", 1.0}}}), 0, 0};
  RankRecord b{
      1, {5.0}, nlohmann::json::array({{{"kind", "backward"}, {"start_us", 2.0}, {"end_us", 3.0}}}), 0, 0};
  Sample s;
  combine_rank_records({encode_rank_records({b}), "", encode_rank_records({a})}, 2, s);
  REQUIRE(s.timeline.size() == 2);
  CHECK(s.timeline[0][0]["kind"] == "forward");
  CHECK(s.timeline[1][0]["kind"] == "backward");
}

TEST_CASE("combine_rank_records: a missing, repeated or inconsistent rank is an error") {
  RankRecord r0{0, {1.0, 2.0}, nullptr, 0, 0};
  RankRecord r1{1, {1.0}, nullptr, 0, 0};
  Sample s;
  CHECK_THROWS_WITH_AS(combine_rank_records({encode_rank_records({r0})}, 2, s),
                       "no timing reported for rank 1", Error);
  CHECK_THROWS_AS(combine_rank_records({encode_rank_records({r0}), encode_rank_records({r0})}, 2, s), Error);
  CHECK_THROWS_WITH_AS(combine_rank_records({encode_rank_records({r0, r1})}, 2, s),
                       "ranks timed different numbers of iterations", Error);
}

TEST_CASE("combine_rank_records: pipelined timing averages the ranks' host times, as nccl-tests -a 1") {
  // Host time per operation 8 and 10 us; GPU event spans 6 and 7 us.
  RankRecord r0{0, {}, nullptr, 8.0, 6.0};
  RankRecord r1{1, {}, nullptr, 10.0, 7.0};
  Sample s;
  combine_rank_records({encode_rank_records({r0, r1})}, 2, s);
  CHECK(s.rep_time_us == doctest::Approx(9.0));
  CHECK(s.gpu_time_us == doctest::Approx(7.0));  // the slowest GPU's own view
  REQUIRE(s.iteration_us.size() == 1);
  CHECK(s.time_us() == doctest::Approx(9.0));
  // A pipelined rank beside a per-iteration one is inconsistent.
  RankRecord per_iteration{1, {1.0}, nullptr, 0, 0};
  CHECK_THROWS_AS(combine_rank_records({encode_rank_records({r0, per_iteration})}, 2, s), Error);
}

TEST_CASE("timing: names round-trip, defaults per workload, unknown names list the valid ones") {
  for (Timing t : {Timing::Pipelined, Timing::PerOp, Timing::PerIteration})
    CHECK(parse_timing(timing_name(t)) == t);
  CHECK(default_timing("sendrecv") == Timing::Pipelined);
  CHECK(default_timing("all_reduce") == Timing::Pipelined);
  CHECK(default_timing("pipeline") == Timing::PerOp);
  CHECK_THROWS_WITH_AS(parse_timing("events"), doctest::Contains("pipelined, per-op, per-iteration"),
                       UsageError);
}

TEST_CASE("results: a weight-sync run becomes rows in microseconds, as the simulator writes them") {
  const nlohmann::json raw = {{"workload", "weight-sync"},
                              {"model", "qwen2.5-32b"},
                              {"method", "broadcast"},
                              {"from", 0},
                              {"to", {1, 2, 3}},
                              {"tensors", 771},
                              {"bytes", 65527752704ULL},
                              {"once", {{"init_process_group_time", 0.75}}},
                              {"metrics",
                               {{{"rep", 0}, {"warmup", true}, {"total_transfer_time", 0.26}},
                                {{"rep", 1}, {"warmup", false}, {"total_transfer_time", 0.125}}}}};
  const nlohmann::json doc = weight_sync_document(raw);
  CHECK(doc["schema"] == "commsim.results/2");
  CHECK(doc["tool"] == "commsim-measure");
  CHECK_FALSE(doc.contains("metrics"));
  CHECK(doc["to"] == raw["to"]);
  REQUIRE(doc["rows"].size() == 3);
  CHECK(doc["rows"][0]["timing"] == "init_process_group_time");
  CHECK(doc["rows"][0]["time_us"].get<double>() == doctest::Approx(750000));
  CHECK_FALSE(doc["rows"][0].contains("rep"));
  CHECK(doc["rows"][2]["rep"] == 1);
  CHECK(doc["rows"][2]["warmup"] == false);
  CHECK(doc["rows"][2]["time_us"].get<double>() == doctest::Approx(125000));
  CHECK(doc["rows"][2]["bytes"] == 65527752704ULL);
  const std::string csv = weight_sync_csv(doc);
  CHECK(csv.rfind("workload,model,method,bytes,rep,warmup,timing,time_us\n", 0) == 0);
  CHECK(csv.find("\nweight-sync,qwen2.5-32b,broadcast,65527752704,,,init_process_group_time,750000\n") !=
        std::string::npos);
  CHECK(csv.find(",1,0,total_transfer_time,125000") != std::string::npos);
  nlohmann::json bad = raw;
  bad["once"]["init_process_group_time"] = "fast";
  CHECK_THROWS_AS(weight_sync_document(bad), Error);
}
