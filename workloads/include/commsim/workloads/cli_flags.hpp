// Adds a workload's registered flags to a CLI11 subcommand, so commsim and commsim-measure declare them once.
#pragma once

#include <CLI/CLI.hpp>

#include "commsim/workloads/cli_conventions.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::workloads {

/// Adds every flag of `spec` declared for `side` (or both tools) to `sub`, bound to `args` (which must hold
/// their defaults: WorkloadArgs::defaults, and outlive the parse).
inline void add_workload_flags(CLI::App* sub, const WorkloadSpec& spec, Side side, WorkloadArgs& args) {
  for (const FlagSpec& f : spec.flags) {
    if (f.side != Side::Both && f.side != side) continue;
    CLI::Option* opt = nullptr;
    switch (f.kind) {
      case FlagSpec::Kind::Int:
        opt = sub->add_option(f.name, args.ints[f.name], f.help);
        break;
      case FlagSpec::Kind::Number:
        opt = sub->add_option(f.name, args.numbers[f.name], f.help);
        break;
      case FlagSpec::Kind::Text:
        opt = sub->add_option(f.name, args.text[f.name], f.help);
        break;
      case FlagSpec::Kind::TextList:
        opt = sub->add_option(f.name, args.lists[f.name], f.help);
        break;
      case FlagSpec::Kind::IntList:
        opt = sub->add_option(f.name, args.int_lists[f.name], f.help);
        break;
    }
    if (f.delimiter != 0) opt->delimiter(f.delimiter);
    if (!f.time_unit.empty()) opt->transform(time_in(f.time_unit));
    if (!f.choices.empty()) opt->check(CLI::IsMember(f.choices));
    if (f.required) opt->required();
    if (f.show_default && !f.default_value.empty()) opt->capture_default_str();
  }
}

}  // namespace commsim::workloads
