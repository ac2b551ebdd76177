// `commsim topo show|gpus|presets`: inspect topologies, the GPU catalogue and the bundled machines.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/topo/render.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

struct ShowOptions {
  std::string file;
  std::string gpu;
  std::string nvlink;
  std::string format = "text";
  std::string out;
};

void run_show(const ShowOptions& o) {
  OutputGuard guard;
  guard_topology(guard, "FILE", o.file);
  guard.input("--nvlink", o.nvlink);
  guard.output("--out", o.out);
  guard.check();
  topo::Diagnostics diag;
  topo::LoadOptions load{o.gpu, o.nvlink};
  if (!o.gpu.empty())
    models::HardwareCatalog::builtin().gpu(o.gpu);  // unknown names fail before reading files
  const topo::Topology t = topo::load_topology(o.file, load, diag);
  std::string text;
  if (o.format == "json") {
    text = topo::to_json(t, diag).dump(2) + "\n";
  } else if (o.format == "dot") {
    text = topo::to_dot(t);
  } else {
    text = topo::to_text(t, diag);
  }
  // Warnings go to stderr once each (text output also lists them at the end).
  for (const auto& w : diag.warnings()) std::cerr << "commsim: warning: " << w << "\n";
  if (o.out.empty() || o.out == "-") {
    std::cout << text;
  } else {
    write_file_atomic(o.out, text);
  }
}

}  // namespace

void add_topo_command(CLI::App& app) {
  CLI::App* topo =
      app.add_subcommand("topo", "Inspect machine topologies, the GPU catalogue and bundled presets");
  topo->require_subcommand(1);

  auto opts = std::make_shared<ShowOptions>();
  CLI::App* show = topo->add_subcommand(
      "show",
      "Parse a topology and print what commsim infers from it: GPUs,\nNICs, NVSwitch or NVLink bundles, "
      "the PCIe tree, and the peak\nper-direction bandwidth between every pair of GPUs.");
  show->add_option("FILE", opts->file,
                   "`nvidia-smi topo -m` output (a sibling FILE.nvlink holding\n"
                   "`nvidia-smi nvlink -s` is read too), or a what-if cluster in\nTOML (*.toml)")
      ->required();
  show->add_option(
      "--gpu", opts->gpu,
      "GPU generation: H100, H200, B200, A100, V100, L40S, ...\n(`commsim topo gpus` lists them). "
      "Default: what the input\nsays, else the documented rule for what the matrix shows");
  show->add_option("--nvlink", opts->nvlink, "`nvidia-smi nvlink -s` output of the same machine");
  show->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  show->add_option("-o,--out", opts->out, "Write to this file (atomically) instead of standard\noutput");
  show->footer(R"(
EXAMPLES
  commsim topo show topologies/library/real/h200x4.topo
  commsim topo show topologies/library/real/hgx-h100.topo --gpu H100 --format json
  commsim topo show topologies/library/whatif/hgx-h100-2nodes-ndr.toml --format dot | dot -Tsvg > cluster.svg

JSON
  {"gpus": [...], "nics": [...], "paths": [{"src", "dst", "type", "bandwidth_gbps", "latency_us", "hops"}], ...}
  One path per ordered GPU pair; "type" is the nvidia-smi code (NV18, PIX, PXB, PHB, NODE, SYS; SOC reads as
  SYS) or NET between machines; "bandwidth_gbps" is the route's peak per-direction bandwidth in GB/s.)");
  show->callback([opts] { run_show(*opts); });

  CLI::App* gpus =
      topo->add_subcommand("gpus", "List the GPU generations commsim knows, with their link constants");
  gpus->callback([] {
    const auto& hw = models::HardwareCatalog::builtin();
    std::printf("%-10s %-5s %-4s %-7s %-10s %-8s %-6s %-9s %s\n", "gpu", "year", "sm", "nvlink", "per link",
                "total", "pcie", "nic", "description");
    for (const auto& g : hw.gpus()) {
      std::printf("%-10s %-5d %-4d %-7d %-10s %-8s gen%-3d %-9s %s\n", g.name.c_str(), g.release_year, g.sm,
                  g.nvlink_links, g.nvlink_links ? format_bandwidth(g.nvlink_link_bandwidth).c_str() : "-",
                  g.nvlink_links ? format_bandwidth(g.nvlink_links * g.nvlink_link_bandwidth).c_str() : "-",
                  g.pcie_gen, (std::to_string(static_cast<int>(g.nic_bandwidth * 8 / 1e9)) + " Gb/s").c_str(),
                  g.description.c_str());
    }
  });
  CLI::App* presets = topo->add_subcommand("presets", "List the bundled machines usable as `preset = NAME`");
  presets->callback([] {
    for (const auto& p : topo::presets()) {
      std::printf("%-18s %-6s %s\n", p.name.c_str(), p.gpu.c_str(), p.description.c_str());
    }
  });
}

}  // namespace commsim::cli
