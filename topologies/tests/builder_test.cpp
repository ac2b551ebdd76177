// Model tests on small topologies with closed-form answers: NVSwitch sharing, NVLink bundles, PCIe trees, GPU
// rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/topo/builder.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/topo/render.hpp"

using namespace commsim;
using namespace commsim::topo;

namespace {

const models::HardwareCatalog& hw() {
  return models::HardwareCatalog::builtin();
}

std::string lib(const std::string& rel) {
  return std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/" + rel;
}

Topology build(const std::string& text, const std::string& gpu, Diagnostics& diag) {
  Topology t;
  NodeBuildOptions o;
  o.gpu = gpu;
  add_matrix_node(t, parse_topo_matrix(text, "t.topo"), o, hw(), diag);
  return t;
}

const PathEntry& path(const std::vector<PathEntry>& paths, int s, int d) {
  for (const auto& p : paths) {
    if (p.src == s && p.dst == d) return p;
  }
  FAIL("no path");
  return paths.front();
}

}  // namespace

TEST_CASE("builder: a commsim-measure folder's topo.txt takes the GPU from the nvlink.txt beside it") {
  Diagnostics diag;
  const Topology t =
      load_topology(std::string(COMMSIM_SOURCE_DIR) +
                        "/validation/data/h200x2/measure-pipelined/h200x2-2026-11-22b/p2p_all/topo.txt",
                    {}, diag);
  CHECK(diag.warnings().empty());  // without nvlink.txt: "does not say which GPU it has; assuming B200"
  REQUIRE(t.nodes.size() == 1);
  CHECK(t.nodes[0].gpu_model == "H200");
  CHECK(t.gpus.size() == 2);
}

TEST_CASE("builder: an NVSwitch fabric gives every pair the GPU's full NVLink bandwidth (4x H200)") {
  Diagnostics diag;
  const Topology t = load_topology(lib("real/h200x4.topo"), {}, diag);
  CHECK(diag.warnings().empty());  // the sibling .nvlink names the GPU
  REQUIRE(t.nodes.size() == 1);
  CHECK(t.nodes[0].gpu_model == "H200");
  CHECK(t.nodes[0].nvlink_fabric == "nvswitch");
  const auto paths = gpu_paths(t);
  CHECK(paths.size() == 12);
  for (const auto& p : paths) {
    CHECK(p.type == "NV18");
    CHECK(p.bandwidth == doctest::Approx(18 * 25e9));
    CHECK(p.hops == 2);
  }
}

TEST_CASE("builder: links are full duplex, one directed edge each way") {
  Diagnostics diag;
  const Topology t = build("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n", "A6000", diag);
  const Graph& g = t.graph();
  const auto [e, found] = boost::edge(t.gpus[0].vertex, t.gpus[1].vertex, g);
  const auto [back, found_back] = boost::edge(t.gpus[1].vertex, t.gpus[0].vertex, g);
  REQUIRE(found);
  REQUIRE(found_back);
  CHECK(e != back);
  CHECK(g[e].bandwidth == doctest::Approx(4 * 14.0625e9));
  CHECK(boost::num_edges(g) % 2 == 0);
}

TEST_CASE("builder: direct NVLink bundles carry count x link rate, other pairs go over PCIe (DGX-1)") {
  Diagnostics diag;
  const Topology t = load_topology(lib("real/dgx1-v100.topo"), {"V100", ""}, diag);
  CHECK(t.nodes[0].nvlink_fabric == "direct");
  const auto paths = gpu_paths(t);
  CHECK(path(paths, 0, 3).bandwidth == doctest::Approx(50e9));
  CHECK(path(paths, 0, 1).bandwidth == doctest::Approx(25e9));
  CHECK(path(paths, 0, 1).hops == 1);
  // GPU0 -> GPU5 is SYS: PCIe gen3 x16 is the bottleneck, through both CPUs.
  CHECK(path(paths, 0, 5).type == "SYS");
  CHECK(path(paths, 0, 5).bandwidth == doctest::Approx(15.75e9));
  CHECK(t.gpus[0].nvlinks == 6);
}

TEST_CASE("builder: PCIe trees from PIX/PXB/PHB/SYS (8-GPU PCIe server)") {
  Diagnostics diag;
  const Topology t = load_topology(lib("real/pcie8-server.topo"), {"L40S", ""}, diag);
  CHECK(diag.warnings().empty());  // the inferred tree reproduces every cell
  const auto paths = gpu_paths(t);
  CHECK(path(paths, 0, 1).type == "PIX");
  CHECK(path(paths, 0, 1).hops == 2);  // GPU -> leaf switch -> GPU
  CHECK(path(paths, 0, 2).hops == 4);  // GPU -> leaf -> parent -> leaf -> GPU
  CHECK(path(paths, 0, 1).bandwidth == doctest::Approx(31.5e9));
  CHECK(path(paths, 0, 4).type == "SYS");
  int cpus = 0, switches = 0;
  for (auto [v, end] = boost::vertices(t.graph()); v != end; ++v) {
    cpus += t.vertex(*v).kind == VertexKind::Cpu;
    switches += t.vertex(*v).kind == VertexKind::PcieSwitch;
  }
  CHECK(cpus == 2);
  CHECK(switches == 6);  // per socket: one parent and two leaf switches
}

TEST_CASE("builder: each GPU pair's NCCL path type and NVLink count are fixed when the machine is built") {
  using models::PathType;
  Diagnostics diag;
  const Topology sw = load_topology(lib("real/h200x4.topo"), {}, diag);
  CHECK(sw.path_type(0, 1) == PathType::Nvl);
  CHECK(sw.pair_nvlinks(0, 1) == 18);
  CHECK(sw.pair_code(0, 1) == "NV18");
  const Topology dgx1 = load_topology(lib("real/dgx1-v100.topo"), {"V100", ""}, diag);
  CHECK(dgx1.path_type(0, 3) == PathType::Nvl);
  CHECK(dgx1.pair_nvlinks(0, 3) == 2);
  CHECK(dgx1.path_type(0, 5) == PathType::Sys);
  CHECK(dgx1.pair_nvlinks(0, 5) == 0);
  const Topology pcie = load_topology(lib("real/pcie8-server.topo"), {"L40S", ""}, diag);
  CHECK(pcie.path_type(0, 1) == PathType::Pix);
  CHECK(pcie.path_type(0, 2) == PathType::Pxb);
  CHECK(pcie.path_type(0, 4) == PathType::Sys);
  CHECK(pcie.path_type(0, 0) == PathType::Sys);  // X, a GPU and itself, is no NCCL path: it reads as SYS
  CHECK(pcie.pair_code(0, 0) == "X");
  // NODE is NCCL's PHB; the code itself is kept for output.
  const Topology node = build(
      "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPHB\tNODE\nGPU1\tPHB\t X \tNODE\n"
      "GPU2\tNODE\tNODE\t X \n",
      "L40S", diag);
  CHECK(node.path_type(0, 1) == PathType::Phb);
  CHECK(node.path_type(0, 2) == PathType::Phb);
  CHECK(node.pair_code(0, 2) == "NODE");
}

TEST_CASE("builder: the default GPU rule when the input does not name the GPU") {
  auto guess = [](const char* text) {
    return default_gpu_for(parse_topo_matrix(text, "t"), hw()).first->name;
  };
  CHECK(guess("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV18\tNV18\nGPU1\tNV18\t X \tNV18\nGPU2\tNV18\tNV18\t X \n") ==
        "B200");
  CHECK(guess("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV12\tNV12\nGPU1\tNV12\t X \tNV12\nGPU2\tNV12\tNV12\t X \n") ==
        "A100");
  CHECK(guess("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n") == "A6000");
  CHECK(guess("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n") == "L40S");
  Diagnostics diag;
  const Topology t = build("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n", "", diag);
  REQUIRE(diag.warnings().size() == 1);
  CHECK(diag.warnings()[0].find("--gpu") != std::string::npos);
  CHECK(t.gpus[0].model == "L40S");
}

TEST_CASE("builder: four GPUs with NV4 to each other on a 12-link A100 are a direct mesh, not a switch") {
  Diagnostics diag;
  const Topology t = build(
      "\tGPU0\tGPU1\tGPU2\tGPU3\nGPU0\t X \tNV4\tNV4\tNV4\nGPU1\tNV4\t X \tNV4\tNV4\nGPU2\tNV4\tNV4\t X "
      "\tNV4\n"
      "GPU3\tNV4\tNV4\tNV4\t X \n",
      "A100", diag);
  CHECK(t.nodes[0].nvlink_fabric == "direct");
  CHECK(path(gpu_paths(t), 2, 3).bandwidth == doctest::Approx(100e9));
}

TEST_CASE("builder: a matrix that contradicts the chosen GPU is an input error at the cell") {
  Diagnostics diag;
  CHECK_THROWS_WITH_AS(build("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n", "A100", diag),
                       doctest::Contains("t.topo:2:10: error: NV18 is more NVLinks than a A100 has (12)"),
                       InputError);
  CHECK_THROWS_AS(build("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n", "L40S", diag), InputError);
  CHECK_THROWS_AS(build("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n", "K80", diag), UsageError);
}

TEST_CASE("builder: NIC placement follows PIX cells (HGX H100)") {
  Diagnostics diag;
  const Topology t = load_topology(lib("real/hgx-h100.topo"), {"H100", ""}, diag);
  REQUIRE(t.nics.size() == 8);
  CHECK(t.nics[0].device == "mlx5_0");
  CHECK(t.nics[4].numa == 1);
  // GPU0's nearest NIC is NIC0: GPU -> switch -> NIC.
  const Route r = t.route(t.gpus[0].vertex, t.nics[0].vertex);
  CHECK(r.edges.size() == 2);
  CHECK(r.bandwidth == doctest::Approx(63e9));
}

TEST_CASE("builder: an absurd NUMA affinity is ignored, not a crash (fuzzer regression)") {
  Diagnostics diag;
  const Topology t = build(
      "\tGPU0\tGPU1\tNUMA Affinity\nGPU0\t X \tSYS\t99999999999999999999\nGPU1\tSYS\t X \t0\n", "L40S", diag);
  CHECK(t.gpus[0].numa == -1);
  CHECK(t.gpus[1].numa == 0);
  // A device PIX to one whose NUMA node is known is inferred to be on the same node.
  Diagnostics diag2;
  const Topology u =
      build("\tGPU0\tGPU1\tNUMA Affinity\nGPU0\t X \tPIX\tN/A\nGPU1\tPIX\t X \t3\n", "L40S", diag2);
  CHECK(u.gpus[0].numa == 3);
}

namespace {

/// `nvidia-smi nvlink -s` for four H200s; GPU `down` has every link <inactive>.
std::string h200_status(int down) {
  std::string s;
  for (int g = 0; g < 4; ++g) {
    s += "GPU " + std::to_string(g) + ": NVIDIA H200 (UUID: GPU-" + std::to_string(g) + ")\n";
    for (int l = 0; l < 18; ++l)
      s += "\t Link " + std::to_string(l) + ": " + (g == down ? "<inactive>" : "26.562 GB/s") + "\n";
  }
  return s;
}

}  // namespace

TEST_CASE("builder: a GPU whose NVLinks are all inactive is reached over PCIe, other pairs keep NVLink") {
  Diagnostics diag;
  const NvlinkStatus status = parse_nvlink_status(h200_status(2), "h200x4.nvlink");
  Topology t;
  NodeBuildOptions o;
  o.nvlink = &status;
  add_matrix_node(t, parse_topo_matrix(read_file(lib("real/h200x4.topo")), "h200x4.topo"), o, hw(), diag);
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.gpus[2].nvlinks == 0);
  CHECK(t.gpus[0].nvlinks == 18);
  // No link of zero bandwidth: GPU2 is off the NVSwitch.
  const Graph& g = t.graph();
  for (auto [e, end] = boost::edges(g); e != end; ++e) CHECK(g[*e].bandwidth > 0);
  // GPU2's pairs take the PCIe code of the inferred tree (each GPU on its own root port of one NUMA node:
  // NODE, which NCCL treats as PHB and serves through host memory); the others stay NV18 at 18 x 25 GB/s.
  const auto paths = gpu_paths(t);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      if (a == 2 || b == 2) {
        CHECK(path(paths, a, b).type == "NODE");
        CHECK(t.path_type(a, b) == models::PathType::Phb);
        CHECK(t.pair_nvlinks(a, b) == 0);
        CHECK(path(paths, a, b).bandwidth == doctest::Approx(hw().pcie_bandwidth(5, 16)));
      } else {
        CHECK(path(paths, a, b).type == "NV18");
        CHECK(path(paths, a, b).bandwidth == doctest::Approx(18 * 25e9));
      }
    }
  }
  CHECK(std::any_of(diag.warnings().begin(), diag.warnings().end(), [](const std::string& w) {
    return w.find("GPU2 has 0 of 18 NVLinks active; its GPU pairs go over PCIe") != std::string::npos;
  }));
}

TEST_CASE("builder: a GPU with fewer active NVLinks gives its pairs the fewer links, others keep theirs") {
  Diagnostics diag;
  std::string text = h200_status(-1);
  // GPU1: links 9-17 inactive.
  for (int l = 9; l < 18; ++l) {
    const std::string from = "GPU 1: NVIDIA H200 (UUID: GPU-1)\n";
    const auto at = text.find("\t Link " + std::to_string(l) + ": ", text.find(from));
    text.replace(text.find("26.562 GB/s", at), 11, "<inactive>");
  }
  const NvlinkStatus status = parse_nvlink_status(text, "h200x4.nvlink");
  Topology t;
  NodeBuildOptions o;
  o.nvlink = &status;
  add_matrix_node(t, parse_topo_matrix(read_file(lib("real/h200x4.topo")), "h200x4.topo"), o, hw(), diag);
  CHECK(t.gpus[1].nvlinks == 9);
  CHECK(t.pair_nvlinks(0, 1) == 9);
  CHECK(t.pair_nvlinks(1, 3) == 9);
  CHECK(t.pair_nvlinks(0, 3) == 18);
  const auto paths = gpu_paths(t);
  CHECK(path(paths, 0, 1).bandwidth == doctest::Approx(9 * 25e9));
  CHECK(path(paths, 0, 3).bandwidth == doctest::Approx(18 * 25e9));
}
