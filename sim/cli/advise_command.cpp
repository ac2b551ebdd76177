// `commsim advise pipeline`: simulates every P2P mode over a grid of pipeline shapes and says which wins, by
// how much, whether the margin is inside the prediction band, and which known hazards apply.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/workloads/cli_conventions.hpp"
#include "hazards.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

struct AdviseOptions {
  std::string topology;
  std::string gpu;
  std::string params;
  std::string cost_model = "nccl";
  std::vector<std::string> nccl_env;
  std::string stages;
  std::string gpus;
  std::string microbatches;
  std::string activation_bytes;
  std::string schedule = "1f1b";
  int chunks = 0;
  double fwd_us = 0;
  double bwd_us = 0;
  std::string framework = "both";
  std::string format = "table";
  std::string out;
};

constexpr sim::ExchangeMode kModes[] = {sim::ExchangeMode::Sequential, sim::ExchangeMode::Overlapped,
                                        sim::ExchangeMode::Batched};

/// One mode's simulated step at one grid point.
struct Outcome {
  sim::ExchangeMode mode;
  double step_us = 0;
  double exposed_us = 0;  ///< step - compute bound: the communication the schedule does not hide
  models::Band band;      ///< the parameter set's band around exposed_us
  std::vector<const Hazard*> hazards;
  bool hung = false;  ///< a hang hazard at a measured size: never recommended
};

/// The link class that carries stage-to-stage traffic, in words.
std::string route_words(sim::Runtime& rt, int a, int b, const models::TransferModel& model) {
  const models::PairInfo& p = rt.pair(a, b);
  const models::Transport t = model.transport(p);
  const double gbps = p.route_bandwidth / 1e9;
  char buf[160];
  if (t == models::Transport::Net) {
    const std::string fabric = rt.topology().fabric ? topo::kind_name(rt.topology().fabric->kind) : "network";
    std::snprintf(buf, sizeof buf, "the %s network (NET transport, %.0f GB/s peak per direction)",
                  fabric.c_str(), gbps);
  } else if (t == models::Transport::Shm) {
    std::snprintf(buf, sizeof buf, "host memory (SHM transport through the CPU, %.0f GB/s route peak)", gbps);
  } else if (p.path == models::PathType::Nvl) {
    std::snprintf(buf, sizeof buf, "NVLink (%d links, %.0f GB/s peak per direction)", p.nvlinks, gbps);
  } else {
    std::snprintf(buf, sizeof buf, "PCIe (P2P transport, %.0f GB/s peak per direction)", gbps);
  }
  return buf;
}

std::vector<int> int_list(const std::string& flag, const std::string& text, int lo, int hi) {
  std::vector<int> out;
  for (const std::string& v : split_list(text)) {
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x < lo || x > hi) {
      throw UsageError(flag + " " + v + ": expected a whole number between " + std::to_string(lo) + " and " +
                       std::to_string(hi));
    }
    out.push_back(static_cast<int>(x));
  }
  if (out.empty()) throw UsageError(flag + " needs at least one value");
  return out;
}

std::string gpu_words(const std::vector<int>& gpus) {
  std::string s;
  for (std::size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + std::to_string(gpus[i]);
  return s;
}

/// The hazards of `hazards` that concern one mode at one grid point (hang hazards by mode and size).
std::vector<const Hazard*> mode_hazards(const std::vector<Hazard>& hazards, const std::string& schedule,
                                        sim::Framework f, sim::ExchangeMode m, std::uint64_t bytes,
                                        bool& hung) {
  std::vector<const Hazard*> out;
  for (const Hazard& h : hazards) {
    if (h.kind != "hang" || h.workload != "pipeline") continue;
    if (!h.schedule.empty() && h.schedule != schedule) continue;
    if (!h.framework.empty() && h.framework != sim::framework_name(f)) continue;
    if (h.mode != sim::exchange_mode_name(m) || bytes <= h.ok_up_to) continue;
    out.push_back(&h);
    if (bytes >= h.hung_from) hung = true;
  }
  return out;
}

void run_advise(const AdviseOptions& o) {
  OutputGuard guard;
  guard_topology(guard, "--topology", o.topology);
  guard.input("--params", o.params);
  guard.output("--out", o.out);
  guard.check();
  const bool interleaved = o.schedule == "interleaved";
  if (!interleaved && o.chunks > 0)
    throw UsageError("--chunks " + std::to_string(o.chunks) + " applies to --schedule interleaved only");
  if (interleaved && o.chunks < 2) throw UsageError("--schedule interleaved needs --chunks V (at least 2)");
  if (!(o.fwd_us >= 0) || !(o.bwd_us >= 0) || o.fwd_us > 1e9 || o.bwd_us > 1e9)
    throw UsageError("--fwd-us and --bwd-us must be between 0 and 1e9 microseconds");
  const auto setup = load_setup(o.topology, o.gpu, o.params, o.cost_model, o.nccl_env);
  const topo::Topology& topology = setup->topology;
  const models::TransferModel* model = setup->model.get();
  const models::ModelParams& params = setup->params;
  const int n = static_cast<int>(topology.gpus.size());
  sim::Runtime rt(topology, *model);

  // The grid: stage GPU lists x microbatch counts x activation sizes.
  std::vector<std::vector<int>> stage_sets;
  if (!o.gpus.empty()) {
    if (!o.stages.empty()) {
      throw UsageError("--gpus " + o.gpus +
                       " fixes the stages (its GPUs in order); give --stages or --gpus, "
                       "not both");
    }
    stage_sets.push_back(parse_gpu_list(o.gpus, n));
    if (stage_sets.back().size() < 2) throw UsageError("--gpus must list at least 2 GPUs (one per stage)");
  } else {
    if (o.stages.empty())
      throw UsageError("advise pipeline needs --stages P[,P...] (at least 2) or --gpus LIST");
    for (int p : int_list("--stages", o.stages, 2, 1 << 20)) {
      if (p > n) {
        throw UsageError("--stages " + std::to_string(p) + " is more than the topology's " +
                         std::to_string(n) + " GPUs");
      }
      std::vector<int> g;
      for (int i = 0; i < p; ++i) g.push_back(i);
      stage_sets.push_back(g);
    }
  }
  const std::vector<int> mbs = int_list("--microbatches", o.microbatches, 1, 100000);
  std::vector<std::uint64_t> acts;
  for (const std::string& a : split_list(o.activation_bytes))
    acts.push_back(parse_size_flag("--activation-bytes", a));
  if (acts.empty()) throw UsageError("--activation-bytes needs at least one size");
  const int chunks = interleaved ? o.chunks : 1;
  if (interleaved) {
    for (const auto& g : stage_sets) {
      for (int m : mbs) {
        if (m % static_cast<int>(g.size()) != 0) {
          throw UsageError("--schedule interleaved: --microbatches " + std::to_string(m) +
                           " is not a multiple of the " + std::to_string(g.size()) +
                           " stages (Megatron's requirement)");
        }
      }
    }
  }
  std::vector<sim::Framework> frameworks;
  if (o.framework == "both" || o.framework == "nccl") frameworks.push_back(sim::Framework::Nccl);
  if (o.framework == "both" || o.framework == "torch") frameworks.push_back(sim::Framework::Torch);
  const std::vector<Hazard>& hazards = known_hazards();

  nlohmann::json out;
  out["workload"] = "advise pipeline";
  out["topology"] = o.topology;
  out["setup"] = sim::describe_setup(rt, o.topology, stage_sets.back(), o.nccl_env);
  out["params"] = params.name;
  out["params_note"] = setup->params_note;
  out["band"] = {{"latency_below", params.band.latency_below},
                 {"latency_above", params.band.latency_above},
                 {"bandwidth_below", params.band.bandwidth_below},
                 {"bandwidth_above", params.band.bandwidth_above},
                 {"regime_bytes", models::kBandRegimeBytes},
                 {"kind", band_kind(params, setup->band_widened)},
                 {"applied_to", "exposed communication (step - compute bound) of each mode"}};
  out["schedule"] = o.schedule;
  out["chunks"] = chunks;
  out["fwd_us"] = o.fwd_us;
  out["bwd_us"] = o.bwd_us;
  out["points"] = nlohmann::json::array();
  std::vector<const Hazard*> fired;
  auto fire = [&](const Hazard* h) {
    if (std::find(fired.begin(), fired.end(), h) == fired.end()) fired.push_back(h);
  };
  std::vector<std::string> advice;  // the explanation, for a grid of one point

  for (const auto& gpus : stage_sets) {
    const int stages = static_cast<int>(gpus.size());
    for (int mb : mbs) {
      for (std::uint64_t act : acts) {
        // Compute alone: M x (F + B) plus the pipeline bubble (P - 1) x (F + B) / V.
        const double compute_bound = sim::pipeline_compute_bound_us(stages, mb, chunks, o.fwd_us, o.bwd_us);
        for (sim::Framework f : frameworks) {
          std::vector<Outcome> outcomes;
          for (sim::ExchangeMode m : kModes) {
            sim::PipelineSpec s;
            s.gpus = gpus;
            s.microbatches = mb;
            s.activation_bytes = act;
            s.fwd = static_cast<Picoseconds>(std::llround(o.fwd_us * 1e6));
            s.bwd = static_cast<Picoseconds>(std::llround(o.bwd_us * 1e6));
            s.mode = m;
            s.framework = f;
            s.chunks = chunks;
            sim::Program p = sim::pipeline_program(s);
            p.warmup = 1;
            p.iterations = 2;
            Outcome x{m, static_cast<double>(rt.run(p).per_iteration) / 1e6, 0, {}, {}, false};
            x.exposed_us = std::max(0.0, x.step_us - compute_bound);
            x.band = models::band_of(params, act, x.exposed_us);
            x.hazards = mode_hazards(hazards, o.schedule, f, m, act, x.hung);
            outcomes.push_back(x);
          }
          std::vector<const Outcome*> order;
          for (const Outcome& x : outcomes) order.push_back(&x);
          std::stable_sort(order.begin(), order.end(),
                           [](const Outcome* a, const Outcome* b) { return a->step_us < b->step_us; });
          // The recommendation: the fastest mode that did not hang on hardware at this size.
          const Outcome* best = nullptr;
          for (const Outcome* x : order) {
            if (!x->hung) {
              best = x;
              break;
            }
          }
          if (!best) best = order.front();
          // The runner-up: the fastest other mode that did not hang (any other when all did).
          const Outcome* runner = nullptr;
          for (const Outcome* x : order) {
            if (x != best && !x->hung) {
              runner = x;
              break;
            }
          }
          for (const Outcome* x : order) {
            if (!runner && x != best) runner = x;
          }
          // The margin and its band: the two modes differ only in exposed communication, each known to
          // within its band, so the margin lies in [runner.lo - best.hi, runner.hi - best.lo].
          const double margin = runner->step_us - best->step_us;
          const double margin_lo = runner->band.lo_us - best->band.hi_us;
          const double margin_hi = runner->band.hi_us - best->band.lo_us;
          const bool tie = margin_lo <= 0;
          std::vector<const Hazard*> point_hazards;
          bool measured_tie = false;  // the measurements show winner and runner-up tied
          for (const Outcome& x : outcomes) {
            for (const Hazard* h : x.hazards) point_hazards.push_back(h);
          }
          // Predicted orders that the committed measurements do not show.
          for (const Hazard& h : hazards) {
            if (h.kind != "disagrees" || h.workload != "pipeline") continue;
            if (!h.schedule.empty() && h.schedule != o.schedule) continue;
            if (!h.framework.empty() && h.framework != sim::framework_name(f)) continue;
            const Outcome *a = nullptr, *b = nullptr;
            for (const Outcome& x : outcomes) {
              if (h.faster == sim::exchange_mode_name(x.mode)) a = &x;
              if (h.than == sim::exchange_mode_name(x.mode)) b = &x;
            }
            if (a && b && a->step_us < b->step_us) {
              point_hazards.push_back(&h);
              if (best == a && runner == b) measured_tie = true;
            }
          }
          for (const Hazard* h : point_hazards) fire(h);
          std::string verdict;
          if (tie) {
            verdict = "tie within the error";
          } else {
            verdict = std::string(sim::exchange_mode_name(best->mode)) + " wins";
          }
          if (measured_tie) verdict += " (measured: a tie)";
          if (best != order.front()) {
            verdict += std::string("; ") + sim::exchange_mode_name(order.front()->mode) +
                       " is predicted faster but hung on hardware";
          }
          nlohmann::json point = {{"stages", stages},
                                  {"gpus", gpus},
                                  {"microbatches", mb},
                                  {"activation_bytes", act},
                                  {"framework", sim::framework_name(f)},
                                  {"compute_bound_us", compute_bound},
                                  {"winner", sim::exchange_mode_name(best->mode)},
                                  {"runner_up", sim::exchange_mode_name(runner->mode)},
                                  {"margin_us", margin},
                                  {"margin_pct", 100.0 * margin / runner->step_us},
                                  {"margin_lo_us", margin_lo},
                                  {"margin_hi_us", margin_hi},
                                  {"tie_within_error", tie},
                                  {"measured_tie", measured_tie},
                                  {"verdict", verdict},
                                  {"hazards", nlohmann::json::array()},
                                  {"modes", nlohmann::json::array()}};
          for (const Hazard* h : point_hazards) point["hazards"].push_back(h->id);
          for (const Outcome& x : outcomes) {
            nlohmann::json hz = nlohmann::json::array();
            for (const Hazard* h : x.hazards) hz.push_back(h->id);
            point["modes"].push_back({{"mode", sim::exchange_mode_name(x.mode)},
                                      {"step_us", x.step_us},
                                      {"vs_best_pct", 100.0 * (x.step_us - best->step_us) / best->step_us},
                                      {"exposed_comm_us", x.exposed_us},
                                      {"exposed_comm_lo_us", x.band.lo_us},
                                      {"exposed_comm_hi_us", x.band.hi_us},
                                      {"hung_on_hardware", x.hung},
                                      {"hazards", hz}});
          }
          out["points"].push_back(point);

          // The explanation (printed for a grid of one point; in the JSON always).
          std::vector<std::string> lines;
          char buf[640];
          std::snprintf(
              buf, sizeof buf,
              "With --framework %s, %s: %s %.1f us per step, %s %.1f us (%.1f us, %.1f%% apart; the "
              "band puts the gap between %+.1f and %+.1f us).",
              sim::framework_name(f), verdict.c_str(), sim::exchange_mode_name(best->mode), best->step_us,
              sim::exchange_mode_name(runner->mode), runner->step_us, margin,
              100.0 * margin / runner->step_us, margin_lo, margin_hi);
          lines.emplace_back(buf);
          if (f == sim::Framework::Torch && stages > 2) {
            double ov = 0, seq = 0;
            for (const Outcome& x : outcomes) {
              if (x.mode == sim::ExchangeMode::Overlapped) ov = x.step_us;
              if (x.mode == sim::ExchangeMode::Sequential) seq = x.step_us;
            }
            if (std::fabs(ov - seq) <= 0.01 * seq) {
              lines.emplace_back(
                  "  Under PyTorch, overlapped is no faster than sequential: unbatched isend/irecv on a "
                  "group of "
                  "more than 2 ranks serialize on the group's one NCCL stream. Only batch_isend_irecv "
                  "overlaps "
                  "them.");
            }
          }
          if (f == frameworks.back()) {
            std::snprintf(
                buf, sizeof buf,
                "Why: compute alone takes (M + (P - 1) / V) x (F + B) = %.1f us; the best mode under "
                "--framework %s exposes %.1f us of communication on top (%.1f%% of the step).",
                compute_bound, sim::framework_name(f), best->exposed_us,
                100.0 * best->exposed_us / best->step_us);
            lines.emplace_back(buf);
            auto transfer_us = [&](std::uint64_t bytes) {
              sim::Program p = sim::p2p_program(gpus[0], gpus[1], bytes);
              p.warmup = 1;
              p.iterations = 3;
              return static_cast<double>(rt.run(p).per_iteration) / 1e6;
            };
            const double one = transfer_us(act);
            const double fixed = transfer_us(1);
            const bool latency_bound = fixed >= 0.5 * one;
            std::snprintf(
                buf, sizeof buf,
                "  One %s activation between stages takes %.1f us over %s; %.1f us of it is fixed cost "
                "(launch, protocol), so transfers are %s.",
                format_size(act).c_str(), one, route_words(rt, gpus[0], gpus[1], *model).c_str(), fixed,
                latency_bound
                    ? "latency-bound: per-call overheads dominate, and fewer calls (batched) help most"
                    : "bandwidth-bound: the link dominates, and modes that move both directions at once "
                      "(batched, or overlapped on separate streams) help most");
            lines.emplace_back(buf);
          }
          out["points"].back()["advice"] = lines;
          advice.insert(advice.end(), lines.begin(), lines.end());
        }
      }
    }
  }
  out["hazards"] = nlohmann::json::array();
  for (const Hazard* h : fired) {
    out["hazards"].push_back({{"id", h->id},
                              {"kind", h->kind},
                              {"text", h->text},
                              {"measured_on", h->measured_on},
                              {"evidence", h->evidence}});
  }

  std::string text;
  if (o.format == "json") {
    text = out.dump(2) + "\n";
  } else {
    char line[512];
    text = "# " + setup->params_note + "\n";
    text += "# simulated on " + out["setup"].get<std::string>() + "\n";
    std::snprintf(
        line, sizeof line,
        "# band: -%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB (%s), applied to each mode's "
        "exposed communication\n",
        100 * params.band.latency_below, 100 * params.band.latency_above, 100 * params.band.bandwidth_below,
        100 * params.band.bandwidth_above,
        params.fitted.empty() ? "datasheet band: no fitted set"
        : setup->band_widened
            ? "the fitted band, widened to the datasheet band where that is wider: no network "
              "in the fit"
            : "the parameter set's fitted band");
    text += line;
    std::snprintf(line, sizeof line,
                  "pipeline, %s schedule%s, F %.0f us, B %.0f us per stage and microbatch\n\n",
                  o.schedule.c_str(), interleaved ? (", V = " + std::to_string(chunks)).c_str() : "",
                  o.fwd_us, o.bwd_us);
    text += line;
    std::snprintf(line, sizeof line, "  %-8s %-6s %10s  %-9s  %-10s %11s  %-10s %24s  %-7s  %s\n", "stages",
                  "micro", "activation", "framework", "winner", "step_us", "runner-up", "margin (band) us",
                  "hazards", "verdict");
    text += line;
    for (const auto& p : out["points"]) {
      std::string hz;  // H1, H2: the hazards' numbers in the list below the table
      for (const auto& h : p["hazards"]) {
        for (std::size_t i = 0; i < fired.size(); ++i) {
          if (fired[i]->id == h.get<std::string>()) hz += (hz.empty() ? "H" : ",H") + std::to_string(i + 1);
        }
      }
      const std::string gpus_text = gpu_words(p["gpus"].get<std::vector<int>>());
      char margin[96];
      std::snprintf(margin, sizeof margin, "%.0f (%+.0f..%+.0f)", p["margin_us"].get<double>(),
                    p["margin_lo_us"].get<double>(), p["margin_hi_us"].get<double>());
      double best_step = 0;
      for (const auto& m : p["modes"]) {
        if (m["mode"] == p["winner"]) best_step = m["step_us"].get<double>();
      }
      std::snprintf(
          line, sizeof line, "  %-8s %-6d %10s  %-9s  %-10s %11.1f  %-10s %24s  %-7s  %s\n",
          (std::to_string(p["stages"].get<int>()) + (o.gpus.empty() ? "" : " (" + gpus_text + ")")).c_str(),
          p["microbatches"].get<int>(), format_size(p["activation_bytes"].get<std::uint64_t>()).c_str(),
          p["framework"].get<std::string>().c_str(), p["winner"].get<std::string>().c_str(), best_step,
          p["runner_up"].get<std::string>().c_str(), margin, hz.empty() ? "-" : hz.c_str(),
          p["verdict"].get<std::string>().c_str());
      text += line;
    }
    text += "\n";
    if (out["points"].size() <= frameworks.size()) {
      for (const auto& l : advice) text += l + "\n";
    } else {
      text += "Every mode's step, its band and the explanation per point: --format json.\n";
    }
    for (std::size_t i = 0; i < fired.size(); ++i) {
      const Hazard* h = fired[i];
      text += "\nH" + std::to_string(i + 1) + " hazard " + h->id + ": " + h->text + ".\n  Measured on " +
              h->measured_on + ".\n  Evidence: " + h->evidence + ".\n";
    }
  }
  if (o.out.empty() || o.out == "-") {
    std::cout << text;
  } else {
    write_file_atomic(o.out, text);
  }
}

}  // namespace

void add_advise_command(CLI::App& app) {
  CLI::App* advise =
      app.add_subcommand("advise", "Recommend settings from simulations instead of rules of thumb");
  advise->require_subcommand(1);
  auto o = std::make_shared<AdviseOptions>();
  CLI::App* p = advise->add_subcommand(
      "pipeline",
      "Simulate every P2P mode (sequential, overlapped, batched) of a Megatron pipeline\nover a grid of "
      "stages, "
      "microbatches and activation sizes; say which wins, by how\nmuch, whether the margin is inside the "
      "prediction band, and which known\nhazards (validation/data/hazards.toml) apply");
  add_setup_flags(p, {&o->topology, &o->gpu, &o->params, &o->cost_model, &o->nccl_env}, SetupRole::WhatIf);
  p->add_option("--stages", o->stages, "Pipeline stages, a list: 2,4 (stage r on GPU r)");
  p->add_option("--gpus", o->gpus, "GPUs for the stages in order (instead of --stages)");
  p->add_option("--microbatches", o->microbatches, "Microbatches per step, a list: 4,16")->required();
  p->add_option("--activation-bytes", o->activation_bytes,
                "Activation bytes per microbatch, a list: 4MiB,64MiB")
      ->required();
  p->add_option("--schedule", o->schedule,
                "1f1b (Megatron's non-interleaved) or interleaved (with --chunks V)")
      ->check(CLI::IsMember({"1f1b", "interleaved"}))
      ->capture_default_str();
  p->add_option(
      "--chunks", o->chunks,
      "Model chunks per stage for --schedule interleaved (--fwd-us/--bwd-us\nsplit evenly over them)");
  p->add_option("--fwd-us", o->fwd_us, "Forward compute per stage and microbatch (us, or with a unit: 0.5ms)")
      ->transform(workloads::time_in("us"))
      ->required();
  p->add_option("--bwd-us", o->bwd_us, "Backward compute per stage and microbatch (us, or with a unit: 1ms)")
      ->transform(workloads::time_in("us"))
      ->required();
  p->add_option("--framework", o->framework, "nccl, torch or both")
      ->check(CLI::IsMember({"nccl", "torch", "both"}))
      ->capture_default_str();
  p->add_option("--format", o->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  p->add_option("-o,--out", o->out, "Write to this file (atomically) instead of standard output");
  p->footer(
      "\nOUTPUT\n"
      "  One row per grid point and framework: the winning mode, its step time, the runner-up, the margin\n"
      "  in us and the range the prediction band allows for it (each mode's band applied to its exposed\n"
      "  communication, step - compute bound); 'tie within the error' when that range reaches 0. Hazards\n"
      "  (validation/data/hazards.toml) name configurations that real hardware did not run as predicted; a\n"
      "  mode that hung on hardware is never the winner.\n"
      "\nEXAMPLES\n  commsim advise pipeline --topology topologies/library/real/h200x4.topo --params "
      "models/params/h200.toml --stages 4 --microbatches 16 --activation-bytes 64MiB --fwd-us 500 --bwd-us "
      "1000\n"
      "  commsim advise pipeline --topology topologies/library/real/h200x4.topo --params "
      "models/params/h200.toml "
      "--stages 2,4 --microbatches 4,16 --activation-bytes 1MiB,16MiB,64MiB --fwd-us 500 --bwd-us 1ms "
      "--schedule interleaved --chunks 2 --framework nccl --format json");
  p->callback([o] { run_advise(*o); });
}

}  // namespace commsim::cli
