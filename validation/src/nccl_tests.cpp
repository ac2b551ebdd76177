// Parsing nccl-tests output: "# ..." header lines, device lines and the data table, run after run.
#include "commsim/validation/nccl_tests.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"

namespace commsim::validation {

std::string nccl_version_text(long code) {
  if (code <= 0) return "";
  if (code < 10000)
    return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." +
           std::to_string(code % 100);
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
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

/// nccl-tests' own JSON (`-J FILE`, format version 3): one run per file.
std::vector<NcclTestsRun> parse_json(std::string_view text, const std::string& file) {
  nlohmann::json d;
  try {
    d = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError({file, 1, 1}, std::string("not valid nccl-tests JSON: ") + e.what());
  }
  auto fail = [&](const std::string& why) -> InputError { return InputError({file, 1, 1}, why); };
  if (!d.is_object() || !d.contains("results") || !d.contains("config") || !d.contains("args"))
    throw fail("not an nccl-tests JSON output (needs args, config and results)");
  NcclTestsRun run;
  run.file = file;
  run.line = 1;
  run.version = "json v" + std::to_string(d.value("version", 0));
  if (d.contains("env") && d["env"].is_array()) {
    for (const auto& e : d["env"]) {
      if (e.is_string() && e.get<std::string>().rfind("NCCL_", 0) == 0)
        run.nccl_env.push_back(e.get<std::string>());
    }
  }
  if (d.contains("nccl_version") && d["nccl_version"].is_number_integer())
    run.nccl_version = nccl_version_text(d["nccl_version"].get<long>());
  try {
    std::string prog = d["args"].at(0).get<std::string>();
    prog = prog.substr(prog.find_last_of('/') + 1);
    const auto suffix = prog.find("_perf");
    if (suffix == std::string::npos) throw fail("args[0] '" + prog + "' is not an nccl-tests *_perf binary");
    run.op = prog.substr(0, suffix);
    const auto& cfg = d["config"];
    run.nthreads = cfg.value("nthreads", 1);
    run.ngpus = cfg.value("ngpus", 1);
    for (const auto& dev : cfg.value("devices", nlohmann::json::array())) {
      NcclTestsDevice nd;
      nd.rank = dev.value("rank", 0);
      nd.cuda_device = dev.value("device", 0);
      nd.bus_id = dev.value("device_hex", "");
      nd.name = dev.value("device_info", "");
      run.devices.push_back(nd);
    }
    // nccl-tests 2.19 lists only the first device of a thread's group in its JSON: the others of that thread
    // are the next CUDA devices (-g N drives devices d..d+N-1), as in its text output.
    const std::size_t expected = static_cast<std::size_t>(run.nthreads * run.ngpus);
    if (!run.devices.empty() && run.devices.size() < expected && run.nthreads == 1) {
      const NcclTestsDevice first = run.devices.front();
      run.devices.clear();
      for (int i = 0; i < run.ngpus; ++i) {
        NcclTestsDevice nd = first;
        nd.rank = i;
        nd.cuda_device = first.cuda_device + i;
        nd.bus_id = i == 0 ? first.bus_id : "";
        run.devices.push_back(nd);
      }
    }
    int row_no = 0;
    for (const auto& r : d["results"]) {
      ++row_no;
      NcclTestsRow row;
      row.size = r.at("size").get<std::uint64_t>();
      row.count = r.value("count", std::uint64_t{0});
      row.type = r.value("type", "");
      row.redop = r.value("redop", "");
      const auto& oop = r.at("out_of_place");
      row.time_us = oop.at("time").get<double>();
      row.algbw_gbps = oop.value("alg_bw", 0.0);
      row.busbw_gbps = oop.value("bus_bw", 0.0);
      if (r.contains("in_place") && r["in_place"].is_object()) {
        row.time_ip_us = r["in_place"].value("time", 0.0);
        row.algbw_ip_gbps = r["in_place"].value("alg_bw", 0.0);
        row.busbw_ip_gbps = r["in_place"].value("bus_bw", 0.0);
      }
      row.line = row_no;
      if (!run.rows.empty() && row.size < run.rows.back().size)
        throw fail("results entry " + std::to_string(row_no) + ": sizes go down");
      run.rows.push_back(row);
    }
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("malformed nccl-tests JSON: ") + e.what());
  }
  if (run.rows.empty()) throw fail("nccl-tests JSON has no result rows");
  return {run};
}

}  // namespace

std::vector<NcclTestsRun> parse_nccl_tests(std::string_view text, const std::string& file) {
  require_text(text, file, "nccl-tests output");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_json(text, file);
  std::vector<NcclTestsRun> runs;
  NcclTestsRun* run = nullptr;
  auto start_run = [&](int line) {
    if (run && run->rows.empty()) {
      throw InputError({file, run->line, 1}, "nccl-tests run has no result rows (truncated log?)");
    }
    runs.emplace_back();
    run = &runs.back();
    run->file = file;
    run->line = line;
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
          if (x.rfind("nccl-library=", 0) == 0)
            run->nccl_version = nccl_version_text(std::atol(x.c_str() + 13));
        }
        if (run->version.empty() || !std::isdigit(static_cast<unsigned char>(run->version[0])) ||
            run->version[0] < '2') {
          throw InputError({file, l.number, 1},
                           "unsupported nccl-tests version '" + run->version + "'; commsim reads 2.x");
        }
      } else if (body.find("Collective test starting:") != std::string_view::npos) {
        if (!run || !run->op.empty()) start_run(l.number);
        std::string op = words(body.substr(body.find(':') + 1)).at(0);
        if (op.size() > 5 && op.substr(op.size() - 5) == "_perf") op.resize(op.size() - 5);
        run->op = op;
      } else if (body.find("nThread") != std::string_view::npos &&
                 body.find("nGpus") != std::string_view::npos) {
        if (!run) start_run(l.number);
        const auto hw = words(body);
        for (std::size_t i = 0; i + 1 < hw.size(); ++i) {
          if (hw[i] == "nThread") run->nthreads = std::atoi(hw[i + 1].c_str());
          if (hw[i] == "nGpus") run->ngpus = std::atoi(hw[i + 1].c_str());
        }
      } else if (w.size() >= 2 && (w[1] == "Rank" || (w[0] == "#" && w.size() > 2 && w[1] == "Rank"))) {
        if (!run) start_run(l.number);
        // "#  Rank  0 Group  0 Pid    917 on         vm device  0 [0000:00:06] NVIDIA H200"
        NcclTestsDevice d;
        for (std::size_t i = 0; i + 1 < w.size(); ++i) {
          if (w[i] == "Rank") d.rank = std::atoi(w[i + 1].c_str());
          if (w[i] == "device") {
            d.cuda_device = std::atoi(w[i + 1].c_str());
            if (i + 2 < w.size() && w[i + 2].front() == '[') {
              d.bus_id = w[i + 2].substr(1, w[i + 2].size() - 2);
              for (std::size_t k = i + 3; k < w.size(); ++k) d.name += (d.name.empty() ? "" : " ") + w[k];
            }
          }
        }
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
    if (w.size() < 8 || !to_u64(w[0], r.size) || !to_u64(w[1], r.count)) {
      throw InputError({file, l.number, 1},
                       "cannot read this nccl-tests result row (corrupted or truncated)");
    }
    r.type = w[2];
    r.redop = w[3];
    r.root = std::atoi(w[4].c_str());
    if (!to_double(w[5], r.time_us) || !to_double(w[6], r.algbw_gbps) || !to_double(w[7], r.busbw_gbps) ||
        r.time_us <= 0) {
      throw InputError({file, l.number, static_cast<int>(t.find(w[5])) + 1},
                       "bad out-of-place time/bandwidth columns in nccl-tests row");
    }
    if (time_columns >= 2) {
      if (w.size() < 12 || !to_double(w[9], r.time_ip_us) || !to_double(w[10], r.algbw_ip_gbps) ||
          !to_double(w[11], r.busbw_ip_gbps)) {
        throw InputError({file, l.number, static_cast<int>(t.size()) + 1},
                         "truncated nccl-tests row: in-place columns missing");
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
  for (const auto& r : runs) {
    if (r.op.empty())
      throw InputError({file, r.line, 1}, "nccl-tests run without '# Collective test starting:' line");
  }
  return runs;
}

}  // namespace commsim::validation
