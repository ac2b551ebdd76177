// Parsing nccl-tests output: "# ..." header lines, device lines and the data table, run after run.
#include "commsim/validation/nccl_tests.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/validation/json_reader.hpp"

namespace commsim::validation {

bool thread_per_gpu(const NcclTestsRun& run, std::size_t gpus) {
  if (gpus <= 1) return false;
  if (run.ngpus == 1) return true;  // -t N, or a GPU a process under mpirun
  if (run.nthreads == 1 && static_cast<std::size_t>(run.ngpus) == gpus) return false;
  throw InputError(
      {run.file, run.line, 1},
      "the run drove " + std::to_string(gpus) + " GPUs with " + std::to_string(run.ngpus) +
          " GPUs a thread (nThread " + std::to_string(run.nthreads) + ", several threads or " +
          "processes): commsim models one thread driving every GPU (-g N) or a thread or process "
          "per GPU (-t N, mpirun with -g 1)");
}

std::string nccl_version_text(long code) {
  if (code <= 0) return "";
  if (code < 10000)
    return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." +
           std::to_string(code % 100);
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

std::string nccl_version_warning(const std::string& ran, const std::string& set_name,
                                 const std::string& set_version) {
  if (ran.empty()) return "";
  if (!set_version.empty()) {
    if (ran == set_version) return "";
    return "ran NCCL " + ran + ", the parameter set " + set_name + " was fitted on NCCL " + set_version;
  }
  const std::string minor = kModeledNccl;
  if (ran == minor || ran.rfind(minor + ".", 0) == 0) return "";
  return "ran NCCL " + ran + ", commsim models NCCL " + minor + " and the parameter set " + set_name +
         " names no NCCL version";
}

namespace {

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool to_u64(const std::string& s, std::uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool to_double(const std::string& s, double& v) {
  if (s == "N/A") return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !s.empty();
}

/// nccl-tests' own JSON (`-J FILE`, format version 3): one run per file. Every value is read through its JSON
/// path (errors name "$.results[3].out_of_place.time").
std::vector<NcclTestsRun> parse_json(std::string_view text, const std::string& file) {
  const nlohmann::json d = parse_json_file_text(text, file, "nccl-tests JSON");
  const JsonValue doc(d, file);
  if (!d.is_object() || !d.contains("results") || !d.contains("config") || !d.contains("args"))
    throw InputError({file, 1, 1}, "not an nccl-tests JSON output (needs args, config and results)");
  NcclTestsRun run;
  run.file = file;
  run.line = 1;
  if (const auto v = doc.find("version"))
    run.version = "json v" + std::to_string(v->integer(0, 1000000));
  else
    run.version = "json v0";
  if (const auto env = doc.find("env"); env && env->raw().is_array()) {
    for (const JsonValue& e : env->items()) {
      if (e.raw().is_string() && e.text().rfind("NCCL_", 0) == 0) run.nccl_env.push_back(e.text());
    }
  }
  if (const auto v = doc.find("nccl_version"); v && v->raw().is_number_integer())
    run.nccl_version = nccl_version_text(static_cast<long>(v->integer(0, 100000000)));
  const auto args = doc.at("args").items();
  if (args.empty()) doc.at("args").fail("expected the nccl-tests command line, found an empty array");
  std::string prog = args.front().text();
  prog = prog.substr(prog.find_last_of('/') + 1);
  const auto suffix = prog.find("_perf");
  if (suffix == std::string::npos || suffix == 0)
    args.front().fail("'" + prog + "' is not an nccl-tests *_perf binary");
  run.op = prog.substr(0, suffix);
  const JsonValue cfg = doc.at("config");
  run.nthreads = cfg.has("nthreads") ? static_cast<int>(cfg.at("nthreads").integer(1, kMaxGpus)) : 1;
  run.ngpus = cfg.has("ngpus") ? static_cast<int>(cfg.at("ngpus").integer(1, kMaxGpus)) : 1;
  run.graph = cfg.has("graph") ? static_cast<int>(cfg.at("graph").integer(0, 1000000)) : 0;
  const std::int64_t expected = std::int64_t{run.nthreads} * run.ngpus;
  if (expected > kMaxGpus)
    cfg.fail("nthreads x ngpus = " + std::to_string(expected) + " GPUs, more than " +
             std::to_string(kMaxGpus));
  if (const auto devices = cfg.find("devices")) {
    for (const JsonValue& dev : devices->items(static_cast<std::size_t>(kMaxGpus))) {
      NcclTestsDevice nd;
      nd.rank = dev.has("rank") ? static_cast<int>(dev.at("rank").integer(0, kMaxGpus - 1)) : 0;
      nd.cuda_device = dev.has("device") ? static_cast<int>(dev.at("device").integer(0, kMaxGpus - 1)) : 0;
      nd.bus_id = dev.has("device_hex") ? dev.at("device_hex").text() : "";
      nd.name = dev.has("device_info") ? dev.at("device_info").text() : "";
      run.devices.push_back(nd);
    }
  }
  // nccl-tests 2.19 lists only the first device of a thread's group in its JSON: the others of that thread
  // are the next CUDA devices (-g N drives devices d..d+N-1), as in its text output.
  if (!run.devices.empty() && static_cast<std::int64_t>(run.devices.size()) < expected && run.nthreads == 1) {
    const NcclTestsDevice first = run.devices.front();
    if (first.cuda_device + std::int64_t{run.ngpus} > kMaxGpus)
      cfg.fail("devices from " + std::to_string(first.cuda_device) + " on " + std::to_string(run.ngpus) +
               " GPUs pass device " + std::to_string(kMaxGpus));
    run.devices.clear();
    for (int i = 0; i < run.ngpus; ++i) {
      NcclTestsDevice nd = first;
      nd.rank = i;
      nd.cuda_device = first.cuda_device + i;
      nd.bus_id = i == 0 ? first.bus_id : "";
      run.devices.push_back(nd);
    }
  }
  // A thread-per-GPU run's JSON lists one device per process: fewer devices than GPUs is what nccl-tests
  // writes (compare() refuses to simulate such a run on its devices alone); more is not.
  if (static_cast<std::int64_t>(run.devices.size()) > expected) {
    cfg.fail("lists " + std::to_string(run.devices.size()) + " device(s) but nthreads x ngpus is " +
             std::to_string(expected));
  }
  int row_no = 0;
  for (const JsonValue& r : doc.at("results").items()) {
    ++row_no;
    NcclTestsRow row;
    row.size = r.at("size").bytes();
    row.count =
        r.has("count") ? static_cast<std::uint64_t>(r.at("count").integer(0, std::int64_t{1} << 62)) : 0;
    row.type = r.has("type") ? r.at("type").text() : "";
    row.redop = r.has("redop") ? r.at("redop").text() : "";
    const JsonValue oop = r.at("out_of_place");
    row.time_us = oop.at("time").positive_time_us();
    row.algbw_gbps = oop.has("alg_bw") ? oop.at("alg_bw").number(0) : 0.0;
    row.busbw_gbps = oop.has("bus_bw") ? oop.at("bus_bw").number(0) : 0.0;
    if (const auto ip = r.find("in_place"); ip && ip->is_object()) {
      row.time_ip_us = ip->has("time") ? ip->at("time").number(0) : 0.0;
      row.algbw_ip_gbps = ip->has("alg_bw") ? ip->at("alg_bw").number(0) : 0.0;
      row.busbw_ip_gbps = ip->has("bus_bw") ? ip->at("bus_bw").number(0) : 0.0;
    }
    row.line = row_no;
    if (!run.rows.empty() && row.size < run.rows.back().size) r.at("size").fail("sizes go down");
    run.rows.push_back(row);
  }
  if (run.rows.empty()) throw InputError({file, 1, 1}, "nccl-tests JSON has no result rows");
  return {run};
}

}  // namespace

std::vector<NcclTestsRun> parse_nccl_tests(std::string_view text, const std::string& file) {
  text = strip_utf8_bom(text);
  require_text(text, file, "nccl-tests output");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_json(text, file);
  std::vector<NcclTestsRun> runs;
  NcclTestsRun* run = nullptr;
  // The header counts and the Rank lines of a run must agree: nThread x nGpus devices per process, each rank
  // once (several processes under MPI print a multiple of it).
  auto check_devices = [&](const NcclTestsRun& r) {
    if (r.devices.empty()) return;
    const std::int64_t per_process = std::int64_t{r.nthreads} * r.ngpus;
    const auto n = static_cast<std::int64_t>(r.devices.size());
    if (n % per_process != 0) {
      throw InputError({file, r.line, 1},
                       "the run lists " + std::to_string(n) + " Rank line(s) but nThread " +
                           std::to_string(r.nthreads) + " x nGpus " + std::to_string(r.ngpus) + " = " +
                           std::to_string(per_process) + " GPUs per process (a missing Rank line?)");
    }
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    for (const NcclTestsDevice& d : r.devices) {
      if (d.rank < 0 || d.rank >= n || seen[static_cast<std::size_t>(d.rank)]++) {
        throw InputError({file, r.line, 1}, "Rank " + std::to_string(d.rank) +
                                                " is out of order or listed twice (" + std::to_string(n) +
                                                " Rank lines: expected ranks 0-" + std::to_string(n - 1) +
                                                ")");
      }
    }
  };
  auto start_run = [&](int line) {
    if (run && run->rows.empty()) {
      throw InputError({file, run->line, 1}, "nccl-tests run has no result rows (truncated log?)");
    }
    if (run) check_devices(*run);
    runs.emplace_back();
    run = &runs.back();
    run->file = file;
    run->line = line;
  };
  // A header or Rank-line count: a whole number in [lo, kMaxGpus - 1 + lo], else an error at its column.
  auto count_at = [&](const Line& l, const std::string& word, std::int64_t lo, const char* what) {
    const auto v = parse_integer(word, lo, kMaxGpus - 1 + lo);
    if (!v) {
      const auto col = l.text.find(word);
      throw InputError({file, l.number, col == std::string_view::npos ? 1 : static_cast<int>(col) + 1},
                       std::string("bad ") + what + " '" + word + "' (expected a whole number from " +
                           std::to_string(lo) + " to " + std::to_string(kMaxGpus - 1 + lo) + ")");
    }
    return static_cast<int>(*v);
  };
  int time_columns = 0;
  for (const Line& l : split_lines(text)) {
    const std::string_view t = l.text;
    const auto w = words(t);
    if (w.empty()) continue;
    if (w[0] == "#" || w[0][0] == '#') {
      const std::string_view body = t.substr(t.find('#') + 1);
      if (body.find("nccl-tests version") != std::string_view::npos) {
        start_run(l.number);
        auto pos = body.find("version");
        const auto vw = words(body.substr(pos + 7));
        run->version = vw.empty() ? "" : vw[0];
        for (const auto& x : vw) {
          if (x.rfind("nccl-library=", 0) == 0) {
            const auto code = parse_integer(std::string_view(x).substr(13), 0, 100000000);
            if (!code)
              throw InputError({file, l.number, static_cast<int>(t.find(x)) + 14},
                               "bad NCCL version code '" + x.substr(13) + "'");
            run->nccl_version = nccl_version_text(static_cast<long>(*code));
          }
        }
        if (run->version.empty() || !std::isdigit(static_cast<unsigned char>(run->version[0])) ||
            run->version[0] < '2') {
          throw InputError({file, l.number, 1},
                           "unsupported nccl-tests version '" + run->version + "'; commsim reads 2.x");
        }
      } else if (body.find("Collective test starting:") != std::string_view::npos) {
        if (!run || !run->op.empty()) start_run(l.number);
        const auto colon = t.find("Collective test starting:") + 25;
        const auto name = words(t.substr(colon));
        if (name.empty()) {
          throw InputError({file, l.number, static_cast<int>(colon) + 1},
                           "'# Collective test starting:' names no test (expected e.g. sendrecv_perf)");
        }
        std::string op = name.front();
        if (op.size() > 5 && op.substr(op.size() - 5) == "_perf") op.resize(op.size() - 5);
        run->op = op;
      } else if (body.find("nThread") != std::string_view::npos &&
                 body.find("nGpus") != std::string_view::npos) {
        if (!run) start_run(l.number);
        const auto hw = words(body);
        for (std::size_t i = 0; i < hw.size(); ++i) {
          if (hw[i] != "nThread" && hw[i] != "nGpus") continue;
          if (i + 1 >= hw.size())
            throw InputError({file, l.number, static_cast<int>(t.size()) + 1}, hw[i] + " without a value");
          (hw[i] == "nThread" ? run->nthreads : run->ngpus) = count_at(l, hw[i + 1], 1, hw[i].c_str());
        }
        for (std::size_t i = 0; i + 1 < hw.size(); ++i) {  // "... validation: 0 graph: 1 unalign: 0"
          if (hw[i] == "graph:") run->graph = count_at(l, hw[i + 1], 0, "graph");
        }
        if (std::int64_t{run->nthreads} * run->ngpus > kMaxGpus) {
          throw InputError({file, l.number, 1}, "nThread " + std::to_string(run->nthreads) + " x nGpus " +
                                                    std::to_string(run->ngpus) + " is more than " +
                                                    std::to_string(kMaxGpus) + " GPUs");
        }
      } else if (w.size() >= 2 && (w[1] == "Rank" || (w[0] == "#" && w.size() > 2 && w[1] == "Rank"))) {
        if (!run) start_run(l.number);
        // "#  Rank  0 Group  0 Pid    917 on         vm device  0 [0000:00:06] NVIDIA H200"
        NcclTestsDevice d;
        // The first "Rank" and the last "device" (a host name could read "device").
        std::size_t rank_at = w.size(), device_at = w.size();
        for (std::size_t i = 0; i + 1 < w.size(); ++i) {
          if (w[i] == "Rank" && rank_at == w.size()) rank_at = i;
          if (w[i] == "device") device_at = i;
        }
        const bool has_rank = rank_at < w.size(), has_device = device_at < w.size();
        if (has_rank) d.rank = count_at(l, w[rank_at + 1], 0, "rank");
        if (has_device) {
          const std::size_t i = device_at;
          d.cuda_device = count_at(l, w[i + 1], 0, "CUDA device");
          if (i + 2 < w.size() && w[i + 2].front() == '[') {
            d.bus_id = w[i + 2].substr(1, w[i + 2].size() - (w[i + 2].back() == ']' ? 2 : 1));
            for (std::size_t k = i + 3; k < w.size(); ++k) d.name += (d.name.empty() ? "" : " ") + w[k];
          }
        }
        if (!has_rank || !has_device)
          throw InputError({file, l.number, 1}, "Rank line without a rank number and a CUDA device");
        if (run->devices.size() >= static_cast<std::size_t>(kMaxGpus))
          throw InputError({file, l.number, 1}, "more than " + std::to_string(kMaxGpus) + " Rank lines");
        run->devices.push_back(d);
      } else if (w.size() > 2 && w[1] == "size" && t.find("count") != std::string_view::npos) {
        time_columns = 0;
        for (const auto& x : w) time_columns += x == "time";
      }
      continue;
    }
    // A data row: size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]
    if (!run) throw InputError({file, l.number, 1}, "result row before any nccl-tests header");
    NcclTestsRow r;
    r.line = l.number;
    auto col_of = [&](std::size_t k) { return static_cast<int>(t.find(w[k])) + 1; };
    if (w.size() < 8 || !to_u64(w[0], r.size) || !to_u64(w[1], r.count)) {
      throw InputError({file, l.number, 1},
                       "cannot read this nccl-tests result row (corrupted or truncated)");
    }
    if (r.size > kMaxBytes) {
      throw InputError({file, l.number, col_of(0)},
                       "size " + w[0] + " B is larger than the largest size commsim simulates (" +
                           format_size(kMaxBytes) + ")");
    }
    r.type = w[2];
    r.redop = w[3];
    const auto root = parse_integer(w[4], -1, kMaxGpus - 1);
    if (!root) throw InputError({file, l.number, col_of(4)}, "bad root '" + w[4] + "' in nccl-tests row");
    r.root = static_cast<int>(*root);
    const auto time = parse_finite(w[5]), algbw = parse_finite(w[6]), busbw = parse_finite(w[7]);
    if (!time || !algbw || !busbw) {
      throw InputError({file, l.number,
                        col_of(!time    ? 5
                               : !algbw ? 6
                                        : 7)},
                       "bad out-of-place time/bandwidth columns in nccl-tests row (not a finite number)");
    }
    if (*time <= 0 || *time > static_cast<double>(kMaxSimulatedTime) / 1e6) {
      throw InputError({file, l.number, col_of(5)},
                       "out-of-place time " + w[5] + " us must be positive and at most 2^62 ps");
    }
    if (*algbw < 0 || *busbw < 0)
      throw InputError({file, l.number, col_of(*algbw < 0 ? 6 : 7)}, "negative bandwidth in nccl-tests row");
    r.time_us = *time;
    r.algbw_gbps = *algbw;
    r.busbw_gbps = *busbw;
    if (time_columns >= 2) {
      if (w.size() < 12 || !to_double(w[9], r.time_ip_us) || !to_double(w[10], r.algbw_ip_gbps) ||
          !to_double(w[11], r.busbw_ip_gbps)) {
        throw InputError({file, l.number, static_cast<int>(t.size()) + 1},
                         "truncated nccl-tests row: in-place columns missing");
      }
      if (!std::isfinite(r.time_ip_us) || r.time_ip_us < 0 || !std::isfinite(r.algbw_ip_gbps) ||
          !std::isfinite(r.busbw_ip_gbps)) {
        throw InputError({file, l.number, col_of(9)},
                         "in-place columns are not finite, non-negative numbers");
      }
    }
    // Sizes grow within a run; alltoall prints several rows of 0 bytes when the per-peer count rounds to
    // zero.
    if (!run->rows.empty() && r.size < run->rows.back().size) {
      throw InputError({file, l.number, 1}, "sizes must not decrease within an nccl-tests run");
    }
    run->rows.push_back(r);
  }
  if (runs.empty())
    throw InputError({file, 1, 1}, "no nccl-tests run found (no '# nccl-tests version' header)");
  if (runs.back().rows.empty())
    throw InputError({file, runs.back().line, 1}, "nccl-tests run has no result rows (truncated log?)");
  check_devices(runs.back());
  for (const auto& r : runs) {
    if (r.op.empty())
      throw InputError({file, r.line, 1}, "nccl-tests run without '# Collective test starting:' line");
  }
  return runs;
}

}  // namespace commsim::validation
