// Result lines, execution log, final files and NCCL transport parsing for commsim-measure.
#include "commsim/measure/results.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <regex>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "commsim/core/csv.hpp"
#include "commsim/core/enum_names.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/text.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::measure {
namespace fs = std::filesystem;

namespace {

constexpr EnumNames<Timing, 3> kTimings{
    {{Timing::Pipelined, "pipelined"}, {Timing::PerOp, "per-op"}, {Timing::PerIteration, "per-iteration"}}};

}  // namespace

const char* timing_name(Timing t) {
  return kTimings.name(t);
}

Timing parse_timing(const std::string& name) {
  if (const auto t = kTimings.find(name)) return *t;
  throw UsageError("unknown timing '" + name + "': valid are " + kTimings.list());
}

Timing default_timing(const std::string& workload) {
  const workloads::WorkloadSpec* spec = workloads::lookup_workload(workload);
  return spec && spec->family == workloads::Family::Pipeline ? Timing::PerOp : Timing::Pipelined;
}

double Sample::time_us() const {
  if (rep_time_us > 0) return rep_time_us;
  if (iteration_us.empty()) return 0;
  return std::accumulate(iteration_us.begin(), iteration_us.end(), 0.0) /
         static_cast<double>(iteration_us.size());
}

std::string encode_rank_records(const std::vector<RankRecord>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankRecord& r : records)
    out.push_back({{"rank", r.rank},
                   {"iteration_us", r.iteration_us},
                   {"pipelined_us", r.pipelined_us},
                   {"gpu_span_us", r.gpu_span_us},
                   {"timeline", r.timeline}});
  return out.dump();
}

void combine_rank_records(const std::vector<std::string>& encoded, int nranks, Sample& s) {
  std::vector<RankRecord> ranks(static_cast<std::size_t>(nranks));
  std::vector<bool> seen(static_cast<std::size_t>(nranks), false);
  for (const std::string& e : encoded) {
    if (e.empty()) continue;
    for (const auto& j : nlohmann::json::parse(e)) {
      const int r = j.at("rank").get<int>();
      if (r < 0 || r >= nranks || seen[r])
        throw Error("rank " + std::to_string(r) + " of " + std::to_string(nranks) +
                    " reported twice or out of range");
      seen[r] = true;
      ranks[r].rank = r;
      ranks[r].iteration_us = j.at("iteration_us").get<std::vector<double>>();
      ranks[r].pipelined_us = j.at("pipelined_us").get<double>();
      ranks[r].gpu_span_us = j.at("gpu_span_us").get<double>();
      ranks[r].timeline = j.at("timeline");
    }
  }
  for (int r = 0; r < nranks; ++r) {
    if (!seen[r]) throw Error("no timing reported for rank " + std::to_string(r));
    if (ranks[r].iteration_us.size() != ranks[0].iteration_us.size() ||
        (ranks[r].pipelined_us > 0) != (ranks[0].pipelined_us > 0))
      throw Error("ranks timed different numbers of iterations");
  }
  s.timeline = nullptr;
  if (!ranks.empty() && ranks[0].pipelined_us > 0) {  // pipelined: nccl-tests' average over ranks
    double sum = 0, gpu = 0;
    for (const RankRecord& r : ranks) {
      sum += r.pipelined_us;
      gpu = std::max(gpu, r.gpu_span_us);
    }
    s.rep_time_us = sum / nranks;
    s.gpu_time_us = gpu;
    s.iteration_us = {s.rep_time_us};
    return;
  }
  const std::size_t iterations = ranks.empty() ? 0 : ranks[0].iteration_us.size();
  s.iteration_us.assign(iterations, 0.0);
  double slowest = 0;
  for (const RankRecord& r : ranks) {
    double total = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
      s.iteration_us[i] += r.iteration_us[i] / nranks;
      total += r.iteration_us[i];
    }
    slowest = std::max(slowest, total);
  }
  s.rep_time_us = iterations > 0 ? slowest / static_cast<double>(iterations) : 0;
  if (!ranks.empty() && !ranks[0].timeline.is_null()) {
    s.timeline = nlohmann::json::array();
    for (const RankRecord& r : ranks) s.timeline.push_back(r.timeline);
  }
}

std::string plan_hash(const nlohmann::json& plan_description) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const char ch : plan_description.dump()) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

nlohmann::json plan_description(const std::vector<Config>& configs, const nlohmann::json& settings) {
  nlohmann::json list = nlohmann::json::array();
  for (const Config& c : configs) {
    const workloads::WorkloadArgs& a = c.args;
    list.push_back({{"id", c.id},
                    {"workload", c.workload},
                    {"src", c.src},
                    {"dst", c.dst},
                    {"gpus", c.gpus},
                    {"bytes", c.bytes},
                    {"mode", c.mode},
                    {"root", c.root},
                    {"microbatches", c.microbatches},
                    {"fwd_us", c.fwd_us},
                    {"bwd_us", c.bwd_us},
                    {"chunks", c.chunks},
                    {"args",
                     {{"text", a.text},
                      {"ints", a.ints},
                      {"numbers", a.numbers},
                      {"lists", a.lists},
                      {"int_lists", a.int_lists}}}});
  }
  return {{"configs", std::move(list)}, {"settings", settings}};
}

std::string machine_hash(const nlohmann::json& gpus, const std::string& topo) {
  nlohmann::json machine = {{"gpus", nlohmann::json::array()}, {"topo", topo}};
  for (const auto& g : gpus) {
    nlohmann::json id = nlohmann::json::object();
    for (const char* key : {"host", "index", "name", "uuid", "pci_bus_id"}) {
      if (g.is_object() && g.contains(key)) id[key] = g[key];
    }
    machine["gpus"].push_back(std::move(id));
  }
  return plan_hash(machine);
}

namespace {

/// Why `j` is not a record commsim-measure wrote ("" when it is one).
std::string record_problem(const nlohmann::json& j, std::size_t configs) {
  if (!j.is_object()) return "not a JSON object";
  const auto integer = [&](const char* key) { return j.contains(key) && j[key].is_number_integer(); };
  if (!integer("config_id")) return "no integer config_id";
  if (!integer("rep")) return "no integer rep";
  const auto id = j["config_id"].get<std::int64_t>();
  if (id < 0 || id > 1'000'000'000 ||
      (configs != ResultStore::kAnyConfigs && static_cast<std::uint64_t>(id) >= configs))
    return "config_id " + std::to_string(id) + " is not one of this plan's " + std::to_string(configs) +
           " configurations";
  if (j["rep"].get<std::int64_t>() < 0 || j["rep"].get<std::int64_t>() > 1'000'000'000)
    return "rep " + j["rep"].dump() + " is out of range";
  if (!j.contains("failed") || !j["failed"].is_boolean()) return "no boolean failed";
  if (!j.contains("time_us") || !j["time_us"].is_number()) return "no numeric time_us";
  if (!j.contains("iteration_us") || !j["iteration_us"].is_array()) return "no iteration_us list";
  for (const auto& t : j["iteration_us"]) {
    if (!t.is_number()) return "a non-numeric iteration_us";
  }
  if (j.contains("plan") && !j["plan"].is_string()) return "a plan that is not a string";
  if (j.contains("machine") && !j["machine"].is_string()) return "a machine that is not a string";
  return "";
}

}  // namespace

ResumeScan scan_results(const std::string& dir, const std::string& plan, std::size_t configs) {
  const std::string file = dir + "/results.jsonl";
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    ResumeScan none;
    none.file = file;
    return none;
  }
  return scan_results_text(read_file(file), file, plan, configs);
}

ResumeScan scan_results_text(std::string_view text, const std::string& file, const std::string& plan,
                             std::size_t configs) {
  ResumeScan scan;
  scan.file = file;
  scan.exists = true;
  const std::vector<Line> lines = split_lines(text);  // views into `text`
  std::uintmax_t offset = 0;                          // where the current line starts in the file
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    const bool last = i + 1 == lines.size();
    const std::uintmax_t line_start = offset;
    offset = static_cast<std::uintmax_t>(l.text.data() - text.data()) + l.text.size();
    if (offset < text.size() && text[offset] == '\r') ++offset;
    const bool has_newline = offset < text.size() && text[offset] == '\n';
    if (has_newline) ++offset;
    if (l.text.empty()) continue;
    nlohmann::json j;
    std::string problem;
    try {
      j = nlohmann::json::parse(l.text);
      problem = record_problem(j, configs);
    } catch (const nlohmann::json::exception& e) {
      problem = "not JSON (" + std::string(e.what()) + ")";
    }
    if (!problem.empty()) {
      // A record cut short by a crash can only be the last line; one before it means the file was damaged.
      if (!last) {
        throw InputError(
            {scan.file, l.number, 1},
            "unreadable result record before the last line (" + problem +
                "); the file was changed after commsim-measure wrote it, so --resume cannot trust it");
      }
      scan.torn_line = l.number;
      scan.keep_bytes = line_start;
      scan.torn_bytes = text.size() - line_start;
      break;
    }
    const std::string record_plan = j.value("plan", std::string());
    if (record_plan != plan) {
      throw UsageError(
          scan.file + ":" + std::to_string(l.number) + ": " +
          (j.contains("plan")
               ? "a record of another plan (" + record_plan + "; this run's plan is " + plan + ")"
               : std::string("a record from a run that did not record its plan")) +
          ": the workload, its flags, the seed, the GPU set or the sizes differ. --resume continues only the "
          "same plan: repeat the first run's flags, or choose another --out");
    }
    const std::string record_machine = j.value("machine", std::string());
    if (scan.records > 0 && record_machine != scan.machine) {
      throw UsageError(scan.file + ":" + std::to_string(l.number) +
                       ": records of one plan measured on different machines (" + scan.machine + " and " +
                       record_machine + "); --resume cannot continue it, choose another --out");
    }
    scan.machine = record_machine;
    const std::pair<int, int> key{j["config_id"].get<int>(), j["rep"].get<int>()};
    if (!scan.done.insert(key).second) {
      ++scan.duplicates;
      if (scan.first_duplicate_line == 0) scan.first_duplicate_line = l.number;
      continue;
    }
    ++scan.records;
    if (last && !has_newline) scan.missing_newline = true;
    scan.lines.push_back(std::move(j));
  }
  if (scan.torn_line == 0) scan.keep_bytes = text.size();
  return scan;
}

ResultStore::ResultStore(std::string dir, bool resume, std::string plan, std::size_t configs)
    : dir_(std::move(dir)), plan_(std::move(plan)) {
  create_output_directory("--out", dir_);
  const std::string jsonl = dir_ + "/results.jsonl";
  std::error_code ec;
  if (fs::exists(jsonl, ec)) {
    if (!resume) {
      throw UsageError(jsonl + " exists: pass --resume to continue that run, or choose another --out");
    }
    resumed_ = scan_results(dir_, plan_, configs);
    // Cut a torn last line off, and end a whole last record's line, so the next record starts cleanly.
    if (resumed_.torn_line > 0) {
      fs::resize_file(jsonl, resumed_.keep_bytes, ec);
      if (ec) throw IoError(jsonl + ": cannot drop the torn last line: " + ec.message());
    }
    done_ = resumed_.done;
    lines_ = resumed_.lines;
    machine_ = resumed_.machine;
  }
  jsonl_.open(jsonl, std::ios::app);
  exec_log_.open(dir_ + "/exec_log.csv", std::ios::app);
  if (!jsonl_ || !exec_log_) throw IoError(dir_ + ": cannot write results");
  if (resumed_.missing_newline) {
    jsonl_ << "\n";
    jsonl_.flush();
  }
  if (exec_log_.tellp() == 0) {
    exec_log_ << CsvWriter()
                     .header({"config_id", "workload", "src", "dst", "bytes", "rep", "cpu_start_ns",
                              "cpu_end_ns", "duration_us", "failed"})
                     .str();
  }
}

void ResultStore::set_machine(const std::string& machine) {
  if (resumed_.records > 0 && !resumed_.machine.empty() && resumed_.machine != machine) {
    throw UsageError(resumed_.file + ": its records were measured on another machine (machine " +
                     resumed_.machine + ", this one is " + machine +
                     ": other GPUs or another topology); --resume continues only on the same machine, choose "
                     "another --out");
  }
  machine_ = machine;
}

void ResultStore::append(const Config& c, const Sample& s) {
  nlohmann::json j = {{"config_id", c.id},
                      {"rep", s.rep},
                      {"plan", plan_},
                      {"machine", machine_},
                      {"workload", c.workload},
                      {"src", c.src},
                      {"dst", c.dst},
                      {"gpus", c.gpus},
                      {"bytes", c.bytes},
                      {"mode", c.mode},
                      {"microbatches", c.microbatches},
                      {"chunks", c.chunks},
                      {"time_us", s.time_us()},
                      {"iteration_us", s.iteration_us},
                      {"failed", s.failed},
                      {"error", s.error}};
  if (s.gpu_time_us > 0) j["gpu_time_us"] = s.gpu_time_us;
  if (!s.timeline.is_null()) j["timeline"] = s.timeline;
  jsonl_ << j.dump() << "\n";
  jsonl_.flush();
  exec_log_ << CsvWriter()
                   .row(c.id, c.workload, c.src, c.dst, c.bytes, s.rep, s.cpu_start_ns, s.cpu_end_ns,
                        static_cast<double>(s.cpu_end_ns - s.cpu_start_ns) / 1000.0, s.failed)
                   .str();
  exec_log_.flush();
  done_.insert({c.id, s.rep});
  lines_.push_back(std::move(j));
}

void ResultStore::write(const std::string& name, const std::string& contents) const {
  write_file_atomic(dir_ + "/" + name, contents);
}

void ResultStore::finalize(const std::vector<Config>& configs, const nlohmann::json& metadata) const {
  std::map<int, std::vector<const nlohmann::json*>> by_config;
  for (const auto& j : lines_) by_config[j.at("config_id").get<int>()].push_back(&j);
  nlohmann::json rows = nlohmann::json::array();
  CsvWriter csv, samples;
  csv.header({"workload",   "src",        "dst",       "gpus",         "mode",   "bytes",   "time_us",
              "algbw_gbps", "busbw_gbps", "median_us", "min_us",       "max_us", "mean_us", "stdev_us",
              "cv",         "reps",       "failed",    "microbatches", "chunks", "timing"});
  samples.header({"config_id", "workload", "src", "dst", "bytes", "rep", "iteration", "time_us"});
  // Every row carries the timing that produced it (measure/README.md, "Timing"); "" in runs from before it.
  const std::string timing = metadata.value("timing", "");
  for (const Config& c : configs) {
    std::vector<double> times;
    nlohmann::json timeline;
    int failed = 0;
    for (const auto* j : by_config[c.id]) {
      if (j->at("failed").get<bool>()) {
        ++failed;
        continue;
      }
      times.push_back(j->at("time_us").get<double>());
      if (j->contains("timeline")) timeline = j->at("timeline");  // the last repetition that has one
      int it = 0;
      for (double t : j->at("iteration_us"))
        samples.row(c.id, c.workload, c.src, c.dst, c.bytes, j->at("rep").get<int>(), it++, t);
    }
    if (times.empty() && failed == 0) continue;  // not run (yet)
    const Summary s = summarize(times);
    const double algbw = s.median > 0 ? static_cast<double>(c.bytes) / (s.median * 1e3) : 0;
    // nccl-tests' bus bandwidth, by the registry's factor (the simulator's too, so both report the same
    // busbw).
    const double busbw =
        algbw * workloads::find_workload(c.workload).busbw_factor(static_cast<int>(c.gpus.size()));
    std::string gpus;
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
      gpus += i ? " " : "";
      gpus += std::to_string(c.gpus[i]);
    }
    rows.push_back({{"config_id", c.id},
                    {"workload", c.workload},
                    {"src", c.src},
                    {"dst", c.dst},
                    {"gpus", c.gpus},
                    {"mode", c.mode},
                    {"microbatches", c.microbatches},
                    {"chunks", c.chunks},
                    {"fwd_us", c.fwd_us},
                    {"bwd_us", c.bwd_us},
                    {"bytes", c.bytes},
                    {"time_us", s.median},
                    {"algbw_gbps", algbw},
                    {"busbw_gbps", busbw},
                    {"median_us", s.median},
                    {"min_us", s.min},
                    {"max_us", s.max},
                    {"mean_us", s.mean},
                    {"stdev_us", s.stdev},
                    {"cv", s.cv},
                    {"reps", s.n},
                    {"failed", failed},
                    {"timing", timing}});
    if (!timeline.is_null()) rows.back()["timeline"] = timeline;
    csv.row(c.workload, c.src, c.dst, gpus, c.mode, c.bytes, s.median, algbw, busbw, s.median, s.min, s.max,
            s.mean, s.stdev, s.cv, s.n, failed, c.microbatches, c.chunks, timing);
  }
  nlohmann::json doc = metadata;
  doc["schema"] = kResultsSchema;
  doc["rows"] = std::move(rows);
  write("results.json", doc.dump(2) + "\n");
  write("results.csv", csv.str());
  write("samples.csv", samples.str());
}

nlohmann::json weight_sync_document(const nlohmann::json& raw) {
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [k, v] : raw.items()) {
    if (k != "once" && k != "metrics") doc[k] = v;
  }
  doc["schema"] = kResultsSchema;
  doc["tool"] = "commsim-measure";
  doc["workload"] = "weight-sync";
  nlohmann::json rows = nlohmann::json::array();
  auto row = [&](const std::string& timing, const nlohmann::json& seconds) {
    if (!seconds.is_number()) throw Error("weight-sync timing " + timing + " is not a number");
    return nlohmann::json{{"workload", "weight-sync"},
                          {"model", raw.value("model", "")},
                          {"method", raw.value("method", "")},
                          {"tensors", raw.value("tensors", 0)},
                          {"bytes", raw.value("bytes", std::uint64_t{0})},
                          {"timing", timing},
                          {"time_us", seconds.get<double>() * 1e6}};
  };
  if (raw.contains("once")) {
    for (const auto& [k, v] : raw["once"].items()) rows.push_back(row(k, v));
  }
  if (raw.contains("metrics")) {
    for (const auto& m : raw["metrics"]) {
      for (const auto& [k, v] : m.items()) {
        if (k == "rep" || k == "warmup") continue;
        nlohmann::json r = row(k, v);
        r["rep"] = m.value("rep", 0);
        r["warmup"] = m.value("warmup", false);
        rows.push_back(std::move(r));
      }
    }
  }
  doc["rows"] = std::move(rows);
  return doc;
}

std::string weight_sync_csv(const nlohmann::json& document) {
  CsvWriter csv;
  csv.header({"workload", "model", "method", "bytes", "rep", "warmup", "timing", "time_us"});
  for (const auto& r : document.at("rows")) {
    csv.field(r.at("workload").get<std::string>())
        .field(r.at("model").get<std::string>())
        .field(r.at("method").get<std::string>())
        .field(r.at("bytes").get<std::uint64_t>());
    if (r.contains("rep")) {
      csv.field(r["rep"].get<int>()).field(r["warmup"].get<bool>());
    } else {
      csv.raw("").raw("");
    }
    csv.field(r.at("timing").get<std::string>()).field(r.at("time_us").get<double>()).end_row();
  }
  return csv.str();
}

std::vector<std::tuple<int, int, std::string>> parse_nccl_transports(const std::string& log) {
  static const std::regex kLine(
      R"(Channel \d+(?:/\d+)? : \d+\[(\d+)\] -> \d+\[(\d+)\] (?:\[\w+\] )?via (\S+(?: pointer)?))");
  std::map<std::pair<int, int>, std::string> seen;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) {
      seen.emplace(std::make_pair(std::stoi(m[1]), std::stoi(m[2])), m[3].str());
    }
  }
  std::vector<std::tuple<int, int, std::string>> out;
  for (const auto& [k, v] : seen) out.emplace_back(k.first, k.second, v);
  return out;
}

}  // namespace commsim::measure
