// `commsim model list|show`: the bundled model specs, their derived tensors, parameter counts and bytes.
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "commsim/workloads/model_spec.hpp"

namespace commsim::cli {

void add_model_command(CLI::App& app) {
  CLI::App* model =
      app.add_subcommand("model", "Model specs whose weights commsim moves (weight sync, broadcasts)");
  model->require_subcommand(1);
  CLI::App* list =
      model->add_subcommand("list", "List the bundled model specs with parameter counts and bytes");
  list->callback([] {
    std::printf("%-14s %16s %10s %8s  %s\n", "model", "parameters", "size", "tensors", "description");
    for (const auto& m : workloads::model_specs()) {
      std::printf("%-14s %16llu %7.1f GB %8zu  %s\n", m.name.c_str(),
                  static_cast<unsigned long long>(m.parameters()), static_cast<double>(m.bytes()) / 1e9,
                  m.tensors().size(), m.description.c_str());
    }
  });
  struct ShowOptions {
    std::string name;
    std::string format = "text";
    bool tensors = false;
  };
  auto o = std::make_shared<ShowOptions>();
  CLI::App* show =
      model->add_subcommand("show", "Show one spec: architecture, parameter count, bytes, tensor list");
  show->add_option("NAME", o->name, "Model name (see `commsim model list`)")->required();
  show->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  show->add_flag("--tensors", o->tensors, "List every tensor (text format)");
  show->callback([o] {
    const auto& m = workloads::model_spec(o->name);
    const auto tensors = m.tensors();
    if (o->format == "json") {
      nlohmann::json j = {{"name", m.name},
                          {"description", m.description},
                          {"layers", m.layers},
                          {"hidden", m.hidden},
                          {"intermediate", m.intermediate},
                          {"heads", m.heads},
                          {"kv_heads", m.kv_heads},
                          {"vocab", m.vocab},
                          {"tied_embeddings", m.tied_embeddings},
                          {"dtype", m.dtype},
                          {"parameters", m.parameters()},
                          {"bytes", m.bytes()}};
      j["tensors"] = nlohmann::json::array();
      for (const auto& t : tensors)
        j["tensors"].push_back({{"name", t.name}, {"shape", t.shape}, {"bytes", t.bytes}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::printf("%s: %s\n", m.name.c_str(), m.description.c_str());
    std::printf(
        "  layers %d, hidden %lld, intermediate %lld, heads %d, kv heads %d, vocab %lld, %s embeddings, %s\n",
        m.layers, static_cast<long long>(m.hidden), static_cast<long long>(m.intermediate), m.heads,
        m.kv_heads, static_cast<long long>(m.vocab), m.tied_embeddings ? "tied" : "untied", m.dtype.c_str());
    std::printf("  %zu tensors, %llu parameters, %llu bytes (%.1f GB, %.1f GiB)\n", tensors.size(),
                static_cast<unsigned long long>(m.parameters()), static_cast<unsigned long long>(m.bytes()),
                static_cast<double>(m.bytes()) / 1e9, static_cast<double>(m.bytes()) / (1ULL << 30));
    if (o->tensors) {
      for (const auto& t : tensors) {
        std::string shape;
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
          if (i) shape += " x ";
          shape += std::to_string(t.shape[i]);
        }
        std::printf("  %-48s %-16s %12llu B\n", t.name.c_str(), shape.c_str(),
                    static_cast<unsigned long long>(t.bytes));
      }
    }
  });
}

}  // namespace commsim::cli
