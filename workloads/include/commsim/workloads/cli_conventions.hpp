// The command-line conventions commsim and commsim-measure share (CLI11): time flags with units, and "did you
// mean" for mistyped commands and flags.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"

namespace commsim::workloads {

/// A CLI11 transform for a time flag whose documented unit is `unit` ("us", "ms", "s"): "500" stays 500 (the
/// flag's unit, as before), "1.5ms" becomes 1500 for a flag in us (parse_time_flag). Bad values are CLI11
/// validation errors (exit 2) that say which units are accepted.
inline CLI::Validator time_in(const std::string& unit) {
  return CLI::Validator(
      [unit](std::string& value) {
        try {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17g", parse_time_flag("", value, unit));
          value = buf;
          return std::string();
        } catch (const UsageError& e) {
          std::string why = e.what();
          if (!why.empty() && why.front() == ' ') why.erase(0, 1);
          return why;
        }
      },
      "TIME (bare: " + unit + ")");
}

/// For a command line CLI11 rejected: a "did you mean" line for the first mistyped subcommand or flag
/// ("unknown command 'simulat' for 'commsim'; did you mean 'simulate'?"), the list of commands when a
/// required one is missing, or "" when every subcommand and flag is known (then CLI11's own message says what
/// is wrong).
inline std::string did_you_mean(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* cur = &app;
  std::string path = app.get_name();
  bool chose_subcommand = false;  // at the current level
  auto subcommands = [](const CLI::App* a) {
    std::vector<std::string> names;
    for (const CLI::App* s : a->get_subcommands([](const CLI::App*) { return true; })) {
      if (!s->get_name().empty()) names.push_back(s->get_name());
    }
    return names;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    if (t == "--") break;
    if (t == "-h" || t == "--help" || t == "--help-all" || t == "--version")
      return "";  // asked for, not wrong
  }
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") break;
    const bool number = token.size() > 1 && token[0] == '-' &&
                        (std::isdigit(static_cast<unsigned char>(token[1])) || token[1] == '.');
    if (token.size() > 1 && token[0] == '-' && !number) {
      std::string name = token.substr(0, token.find('='));
      if (name.size() > 2 && name[1] != '-') name = name.substr(0, 2);  // -b8: the flag is -b
      const CLI::Option* opt = nullptr;
      for (const CLI::App* a = cur; a && !opt; a = a->get_parent()) opt = a->get_option_no_throw(name);
      if (!opt) {
        std::vector<std::string> names;
        for (const CLI::Option* o : cur->get_options()) {
          for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
        }
        const std::string best = closest_name(name, names);
        if (best.empty()) break;  // below: a missing command, if that is what is wrong
        return "unknown option '" + name + "' for '" + path + "'; did you mean '" + best + "'?";
      }
      if (token.find('=') != std::string::npos || (token[1] != '-' && token.size() > 2)) continue;
      if (opt->get_items_expected_max() > 1) {  // a list: its values run to the next flag
        while (i + 1 < argc && argv[i + 1][0] != '-') ++i;
      } else if (opt->get_type_size_max() > 0 && opt->get_items_expected_min() > 0 && i + 1 < argc) {
        ++i;  // the flag's value
      }
      continue;
    }
    const std::vector<std::string> names = subcommands(cur);
    if (names.empty() || chose_subcommand) continue;  // a positional argument
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
      if (s->check_name(token)) sub = s;
    }
    if (sub) {
      cur = sub;
      path += " " + sub->get_name();
      chose_subcommand = false;
      continue;
    }
    if (cur->get_require_subcommand_min() == 0) {
      chose_subcommand = true;  // the token is the command's own positional argument
      continue;
    }
    const std::string best = closest_name(token, names);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return "unknown command '" + token + "' for '" + path + "'" +
           (best.empty() ? "" : "; did you mean '" + best + "'?") + " (commands: " + list + ")";
  }
  // No command where one is required: say which there are, not only CLI11's "A subcommand is required".
  if (cur->get_require_subcommand_min() > 0) {
    std::string list;
    for (const std::string& n : subcommands(cur)) {
      for (int i = 1; i < argc; ++i) {
        if (n == argv[i]) return "";  // one was given after what stopped the walk: CLI11's message is better
      }
      list += (list.empty() ? "" : ", ") + n;
    }
    if (!list.empty())
      return "'" + path + "' needs a command: " + list + " ('" + path + " --help' says more)";
  }
  return "";
}

}  // namespace commsim::workloads
