// Result lines, execution log, final files and NCCL transport parsing for commsim-measure.
#include "commsim/measure/results.hpp"

#include <algorithm>
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

ResultStore::ResultStore(std::string dir, bool resume) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw IoError(dir_ + ": cannot create: " + ec.message());
  const std::string jsonl = dir_ + "/results.jsonl";
  if (fs::exists(jsonl)) {
    if (!resume) {
      throw UsageError(jsonl + " exists: pass --resume to continue that run, or choose another --out");
    }
    const std::string text = read_file(jsonl);  // the lines below are views into it
    const std::vector<Line> lines = split_lines(text);
    for (const Line& l : lines) {
      if (l.text.empty()) continue;
      try {
        auto j = nlohmann::json::parse(l.text);
        done_.insert({j.at("config_id").get<int>(), j.at("rep").get<int>()});
        lines_.push_back(std::move(j));
      } catch (const nlohmann::json::exception&) {
        // A line cut short by a crash: everything before it is kept; the configuration will run again.
        if (l.number != lines.back().number) {
          throw InputError({jsonl, l.number, 1}, "corrupted result line in the middle of the file");
        }
      }
    }
  }
  if (fs::exists(jsonl)) {
    // Drop a line cut short by a crash so the next line starts cleanly.
    const std::string text = read_file(jsonl);
    const auto keep = text.rfind('\n');
    const std::uintmax_t size = keep == std::string::npos ? 0 : keep + 1;
    if (size != text.size()) fs::resize_file(jsonl, size);
  }
  jsonl_.open(jsonl, std::ios::app);
  exec_log_.open(dir_ + "/exec_log.csv", std::ios::app);
  if (!jsonl_ || !exec_log_) throw IoError(dir_ + ": cannot write results");
  if (exec_log_.tellp() == 0) {
    exec_log_ << CsvWriter()
                     .header({"config_id", "workload", "src", "dst", "bytes", "rep", "cpu_start_ns",
                              "cpu_end_ns", "duration_us", "failed"})
                     .str();
  }
}

void ResultStore::append(const Config& c, const Sample& s) {
  nlohmann::json j = {{"config_id", c.id},  {"rep", s.rep},           {"workload", c.workload},
                      {"src", c.src},       {"dst", c.dst},           {"gpus", c.gpus},
                      {"bytes", c.bytes},   {"mode", c.mode},         {"microbatches", c.microbatches},
                      {"chunks", c.chunks}, {"time_us", s.time_us()}, {"iteration_us", s.iteration_us},
                      {"failed", s.failed}, {"error", s.error}};
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
  doc["schema"] = "commsim.results/1";
  doc["rows"] = std::move(rows);
  write("results.json", doc.dump(2) + "\n");
  write("results.csv", csv.str());
  write("samples.csv", samples.str());
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
