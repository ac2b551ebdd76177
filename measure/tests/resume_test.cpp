// Unit tests of --resume: plan hashes, records of other plans refused, duplicates counted once, torn lines.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/measure/results.hpp"

using namespace commsim;
using namespace commsim::measure;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const char* name) {
  const auto d = fs::temp_directory_path() / (std::string("commsim-resume-test-") + name);
  fs::remove_all(d);
  return d.string();
}

Config cfg(int id, std::uint64_t bytes) {
  return {id, "p2p", 0, 1, {0, 1}, bytes, "", 0};
}

Sample sample(int rep, double t) {
  Sample s;
  s.rep = rep;
  s.iteration_us = {t};
  return s;
}

const nlohmann::json kSettings = {{"seed", 42}, {"timing", "pipelined"}, {"warmup", 5}, {"iterations", 20}};

/// A store of plan `plan` with `reps` repetitions of configurations 0 and 1 recorded, then closed (as a
/// crash).
void record(const std::string& dir, const std::string& plan, int reps) {
  ResultStore store(dir, false, plan, 2);
  for (int rep = 0; rep < reps; ++rep) {
    store.append(cfg(0, 1024), sample(rep, 10 + rep));
    store.append(cfg(1, 2048), sample(rep, 20 + rep));
  }
}

}  // namespace

TEST_CASE("resume: the plan hash follows workload, flags, seed and GPU set, not the repetition count") {
  const std::vector<Config> configs{cfg(0, 1024), cfg(1, 2048)};
  const std::string base = plan_hash(plan_description(configs, kSettings));
  CHECK(base.size() == 16);
  CHECK(base == plan_hash(plan_description(configs, kSettings)));
  nlohmann::json seed = kSettings;
  seed["seed"] = 43;
  CHECK(plan_hash(plan_description(configs, seed)) != base);
  nlohmann::json iters = kSettings;
  iters["iterations"] = 21;
  CHECK(plan_hash(plan_description(configs, iters)) != base);
  std::vector<Config> other_gpus = configs;
  other_gpus[1].gpus = {0, 2};
  CHECK(plan_hash(plan_description(other_gpus, kSettings)) != base);
  std::vector<Config> other_workload = configs;
  other_workload[0].workload = "sendrecv";
  CHECK(plan_hash(plan_description(other_workload, kSettings)) != base);
  std::vector<Config> other_flag = configs;
  other_flag[0].args.text["--counts"] = "c.txt";
  CHECK(plan_hash(plan_description(other_flag, kSettings)) != base);
  const nlohmann::json gpus = {{{"index", 0}, {"name", "H200"}, {"pci_bus_id", "00:01"}}};
  CHECK(machine_hash(gpus, "GPU0 X") != machine_hash(gpus, "GPU0 X NV18"));
}

TEST_CASE("resume: records of another plan are refused, naming the file and line") {
  const std::string dir = fresh_dir("other-plan");
  record(dir, "aaaaaaaaaaaaaaaa", 1);
  CHECK_THROWS_WITH_AS(ResultStore(dir, true, "bbbbbbbbbbbbbbbb", 2), doctest::Contains("results.jsonl:1"),
                       UsageError);
  CHECK_THROWS_WITH_AS(ResultStore(dir, true, "bbbbbbbbbbbbbbbb", 2), doctest::Contains("another plan"),
                       UsageError);
  CHECK(split_lines(read_file(dir + "/results.jsonl")).size() == 2);  // nothing changed
  ResultStore same(dir, true, "aaaaaaaaaaaaaaaa", 2);
  CHECK(same.completed() == 2);
}

TEST_CASE("resume: a record without a plan (an older run) is refused") {
  const std::string dir = fresh_dir("no-plan");
  fs::create_directories(dir);
  std::ofstream(dir + "/results.jsonl")
      << R"({"config_id":0,"rep":0,"failed":false,"time_us":1,"iteration_us":[1]})"
      << "\n";
  CHECK_THROWS_WITH_AS(ResultStore(dir, true, "aaaaaaaaaaaaaaaa", 2),
                       doctest::Contains("did not record its plan"), UsageError);
}

TEST_CASE("resume: a repetition recorded twice counts once") {
  const std::string dir = fresh_dir("duplicates");
  record(dir, "aaaaaaaaaaaaaaaa", 1);
  const std::string text = read_file(dir + "/results.jsonl");
  std::ofstream(dir + "/results.jsonl", std::ios::app) << text;  // every record again
  ResultStore store(dir, true, "aaaaaaaaaaaaaaaa", 2);
  CHECK(store.resumed().records == 2);
  CHECK(store.resumed().duplicates == 2);
  CHECK(store.resumed().first_duplicate_line == 3);
  const std::vector<Config> configs{cfg(0, 1024), cfg(1, 2048)};
  store.finalize(configs, {{"tool", "test"}});
  const auto j = nlohmann::json::parse(read_file(dir + "/results.json"));
  CHECK(j["rows"][0]["reps"] == 1);
  CHECK(j["rows"][1]["reps"] == 1);
}

TEST_CASE("resume: a torn last line is cut off the file and reported, and cannot break the next resume") {
  const std::string dir = fresh_dir("torn");
  record(dir, "aaaaaaaaaaaaaaaa", 1);
  const auto whole = fs::file_size(dir + "/results.jsonl");
  std::ofstream(dir + "/results.jsonl", std::ios::app) << R"({"config_id": 0, "rep": 1, "pla)";
  {
    const ResumeScan scan = scan_results(dir, "aaaaaaaaaaaaaaaa", 2);
    CHECK(scan.torn_line == 3);
    CHECK(scan.keep_bytes == whole);
    CHECK(fs::file_size(dir + "/results.jsonl") > whole);  // scanning changes nothing
  }
  {
    ResultStore store(dir, true, "aaaaaaaaaaaaaaaa", 2);
    CHECK(store.resumed().torn_line == 3);
    CHECK(fs::file_size(dir + "/results.jsonl") == whole);
    CHECK_FALSE(store.done(0, 1));
    store.append(cfg(0, 1024), sample(1, 11));
  }
  ResultStore again(dir, true, "aaaaaaaaaaaaaaaa", 2);  // the second resume reads a clean file
  CHECK(again.resumed().torn_line == 0);
  CHECK(again.completed() == 3);
}

TEST_CASE("resume: a readable last line that is not a record is torn too, one before the last is an error") {
  const std::string dir = fresh_dir("bad-last");
  record(dir, "aaaaaaaaaaaaaaaa", 1);
  std::ofstream(dir + "/results.jsonl", std::ios::app) << R"({"config_id": "x"})"
                                                       << "\n";
  CHECK(scan_results(dir, "aaaaaaaaaaaaaaaa", 2).torn_line == 3);
  {
    ResultStore store(dir, true, "aaaaaaaaaaaaaaaa", 2);
    store.append(cfg(0, 1024), sample(1, 11));
  }
  CHECK(split_lines(read_file(dir + "/results.jsonl")).size() == 3);

  const std::string mid = fresh_dir("bad-middle");
  fs::create_directories(mid);
  const std::string good = read_file(dir + "/results.jsonl");
  std::ofstream(mid + "/results.jsonl") << "{\"config_id\": 0, \"re\n" << good;
  CHECK_THROWS_WITH_AS(ResultStore(mid, true, "aaaaaaaaaaaaaaaa", 2), doctest::Contains("results.jsonl:1:1"),
                       InputError);
  std::ofstream(mid + "/results.jsonl") << good << R"({"config_id": 7, "rep": 0, "plan": "aaaaaaaaaaaaaaaa",)"
                                        << R"( "failed": false, "time_us": 1, "iteration_us": [1]})"
                                        << "\n"
                                        << good;
  CHECK_THROWS_WITH_AS(ResultStore(mid, true, "aaaaaaaaaaaaaaaa", 2),
                       doctest::Contains("not one of this plan's 2 configurations"), InputError);
}

TEST_CASE("resume: a whole last record without its newline is kept and its line ended") {
  const std::string dir = fresh_dir("no-newline");
  record(dir, "aaaaaaaaaaaaaaaa", 1);
  std::string text = read_file(dir + "/results.jsonl");
  text.pop_back();
  std::ofstream(dir + "/results.jsonl", std::ios::trunc) << text;
  {
    ResultStore store(dir, true, "aaaaaaaaaaaaaaaa", 2);
    CHECK(store.completed() == 2);
    store.append(cfg(0, 1024), sample(1, 11));
  }
  const std::string after = read_file(dir + "/results.jsonl");  // (split_lines returns views into it)
  for (const Line& l : split_lines(after)) CHECK(nlohmann::json::accept(l.text));
}

TEST_CASE("resume: records measured on another machine are refused before anything is written") {
  const std::string dir = fresh_dir("machine");
  {
    ResultStore store(dir, false, "aaaaaaaaaaaaaaaa", 2);
    store.set_machine("1111111111111111");
    store.append(cfg(0, 1024), sample(0, 10));
  }
  ResultStore store(dir, true, "aaaaaaaaaaaaaaaa", 2);
  CHECK_NOTHROW(store.set_machine("1111111111111111"));
  CHECK_THROWS_WITH_AS(store.set_machine("2222222222222222"), doctest::Contains("another machine"),
                       UsageError);
}
