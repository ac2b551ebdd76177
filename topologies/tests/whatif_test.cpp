// Tests of the what-if TOML format: presets, overrides, rails, leaf-spine and oversubscription.
#include <doctest/doctest.h>

#include <string>

#include "commsim/core/error.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/topo/render.hpp"

using namespace commsim;
using namespace commsim::topo;

namespace {

Topology whatif(const std::string& text, Diagnostics& diag) {
  return load_whatif(text, "w.toml", std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/whatif", {}, diag,
                     models::HardwareCatalog::builtin());
}

Route gpu_route(const Topology& t, int a, int b) {
  return t.route(t.gpus[a].vertex, t.gpus[b].vertex);
}

}  // namespace

TEST_CASE("whatif: two rail-optimised HGX H100 nodes") {
  Diagnostics diag;
  const Topology t = whatif(R"(
[[nodes]]
count = 2
preset = "hgx-h100"
[fabric]
kind = "infiniband"
link_bandwidth = "400Gbps"
hop_latency = "0.6us"
rails = 8
)",
                            diag);
  CHECK(diag.warnings().empty());
  REQUIRE(t.gpus.size() == 16);
  REQUIRE(t.fabric.has_value());
  CHECK(t.fabric->leaves == 8);
  CHECK(t.fabric->spine);
  CHECK(t.fabric->kind == FabricKind::InfiniBand);
  CHECK(t.pair_code(0, 8) == "NET");
  CHECK(t.pair_code(0, 1) == "NV18");
  CHECK(t.path_type(0, 8) == models::PathType::Net);
  CHECK(t.pair_nvlinks(0, 8) == 0);
  CHECK(t.path_type(8, 9) == models::PathType::Nvl);
  CHECK(t.pair_nvlinks(8, 9) == 18);
  // Same rail: GPU0 -> NIC0 -> leaf.r0 -> NIC0 -> GPU0 of node 1, limited by the 400 Gb/s NIC.
  const Route same = gpu_route(t, 0, 8);
  CHECK(same.bandwidth == doctest::Approx(50e9));
  int network_hops = 0;
  for (const Edge& e : same.edges) network_hops += t.graph()[e].kind == LinkKind::Network;
  CHECK(network_hops == 2);
  // Different rails cross the spine.
  const Route cross = gpu_route(t, 0, 11);
  network_hops = 0;
  for (const Edge& e : cross.edges) network_hops += t.graph()[e].kind == LinkKind::Network;
  CHECK(network_hops == 4);
  CHECK(t.nics[11].rail == 3);
}

TEST_CASE("whatif: leaf uplinks are downlinks x port speed / oversubscription") {
  Diagnostics diag;
  const Topology t = whatif(R"(
[[nodes]]
count = 4
preset = "hgx-h100"
[fabric]
kind = "roce"
link_bandwidth = "400Gbps"
rails = 2
nodes_per_leaf = 2
oversubscription = "2:1"
)",
                            diag);
  CHECK(t.fabric->kind == FabricKind::Roce);
  CHECK(std::string(kind_name(t.fabric->kind)) == "roce");
  CHECK(t.fabric->leaves == 4);
  CHECK(t.fabric->oversubscription == doctest::Approx(2.0));
  CHECK(t.fabric->hop_latency == 1'000'000);  // the catalogue's RoCE default
  // 2 nodes x 4 NICs per rail on each leaf = 8 downlinks of 50 GB/s, halved.
  const Graph& g = t.graph();
  int uplinks = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[boost::target(*e, g)].name == "spine") {
      ++uplinks;
      CHECK(g[*e].bandwidth == doctest::Approx(8 * 50e9 / 2));
    }
  }
  CHECK(uplinks == 4);
}

TEST_CASE("whatif: overrides change link rates and PCIe generation") {
  Diagnostics diag;
  const Topology t = whatif(R"(
[[nodes]]
topo_file = "../real/h200x4.topo"
gpu = "H200"
[nodes.overrides]
nvlink_link_bandwidth = "50GBps"
pcie_gen = 6
)",
                            diag);
  CHECK(gpu_route(t, 0, 1).bandwidth == doctest::Approx(900e9));
  CHECK(t.gpus[0].pcie_gen == 6);
}

TEST_CASE("whatif: the bundled 128-node cluster has 1,024 GPUs on 32 leaves") {
  Diagnostics diag;
  const Topology t = load_topology(
      std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/whatif/hgx-h100-128nodes-ndr.toml", {}, diag);
  CHECK(t.gpus.size() == 1024);
  CHECK(t.nics.size() == 1024);
  CHECK(t.fabric->leaves == 32);
  CHECK(gpu_route(t, 0, 1023).bandwidth == doctest::Approx(50e9));
}

TEST_CASE("whatif: every quantity needs a unit, and errors point at the value") {
  Diagnostics diag;
  CHECK_THROWS_WITH_AS(
      whatif("[[nodes]]\npreset = \"h200x4\"\n[nodes.overrides]\nnic_bandwidth = 400\n", diag),
      doctest::Contains("w.toml:4:17: error"), InputError);
  CHECK_THROWS_WITH_AS(whatif("[[nodes]]\npreset = \"h200x4\"\ncount = 0\n", diag),
                       doctest::Contains("w.toml:3:9"), InputError);
  CHECK_THROWS_WITH_AS(whatif("[[nodes]]\npreset = \"h200x4\"\ntopo_file = \"x.topo\"\n", diag),
                       doctest::Contains("exactly one of preset"), InputError);
  CHECK_THROWS_WITH_AS(whatif("[[nodes]]\ntopo_file = \"missing.topo\"\n", diag),
                       doctest::Contains("cannot open"), InputError);
  CHECK_THROWS_WITH_AS(whatif("name = \"x\"\n", diag), doctest::Contains("missing [[nodes]]"), InputError);
}

TEST_CASE("whatif: fabric kinds are named both ways, an unknown one is an error at the key") {
  CHECK(parse_fabric_kind("tcp") == FabricKind::Tcp);
  CHECK(std::string(kind_name(FabricKind::InfiniBand)) == "infiniband");
  CHECK_THROWS_WITH_AS(parse_fabric_kind("slingshot"),
                       "unknown fabric kind 'slingshot'; valid kinds: infiniband, roce, tcp", UsageError);
  Diagnostics diag;
  CHECK_THROWS_WITH_AS(
      whatif(R"(
[[nodes]]
count = 2
preset = "hgx-h100"
[fabric]
kind = "slingshot"
)",
             diag),
      doctest::Contains("'kind': unknown fabric kind 'slingshot'; valid kinds: infiniband, roce, tcp"),
      InputError);
}

TEST_CASE("whatif: nvlink_links = 0 builds the machine without NVLink: every GPU pair goes over PCIe") {
  Diagnostics diag;
  const Topology t = whatif(R"(
[[nodes]]
preset = "h200x4"
[nodes.overrides]
nvlink_links = 0
)",
                            diag);
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.nodes[0].nvlink_fabric == "none");
  const Graph& g = t.graph();
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    CHECK(g[*e].kind != LinkKind::NvLink);
    CHECK(g[*e].bandwidth > 0);
  }
  for (int a = 0; a < 4; ++a) {
    CHECK(t.gpus[a].nvlinks == 0);
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      CHECK(t.pair_code(a, b) == "NODE");
      CHECK(t.path_type(a, b) == models::PathType::Phb);
      CHECK(!gpu_route(t, a, b).edges.empty());
    }
  }
  // A direct-bundle machine (DGX-1) the same way: its NV1/NV2 pairs fall back to the PCIe tree's codes.
  const Topology dgx1 = whatif(R"(
[[nodes]]
topo_file = "../real/dgx1-v100.topo"
gpu = "V100"
[nodes.overrides]
nvlink_links = 0
)",
                               diag);
  for (int b = 1; b < 8; ++b) CHECK(dgx1.pair_nvlinks(0, b) == 0);
  CHECK(dgx1.pair_code(0, 1) != "NV1");
}

TEST_CASE("whatif: an oversubscription ratio must be two numbers around one colon") {
  Diagnostics diag;
  const std::string head = "[[nodes]]\ncount = 2\npreset = \"hgx-h100\"\n[fabric]\nkind = \"infiniband\"\n";
  for (const char* bad : {"2:1:1", "2:1x", ":1", "2:", "2 : 1", "inf:1"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(whatif(head + "oversubscription = \"" + bad + "\"\n", diag),
                         doctest::Contains("w.toml:6:"), InputError);
  }
  CHECK(whatif(head + "oversubscription = \"3:1.5\"\n", diag).fabric->oversubscription ==
        doctest::Approx(2.0));
}
