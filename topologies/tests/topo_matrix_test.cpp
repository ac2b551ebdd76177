// Unit tests for the `nvidia-smi topo -m` parser: formats real machines print, and its error positions.
#include <doctest/doctest.h>

#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/topo/topo_matrix.hpp"

using namespace commsim;
using namespace commsim::topo;

namespace {
std::string library(const std::string& rel) {
  return read_file(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/" + rel);
}
}  // namespace

TEST_CASE("topo_matrix: tab-separated output with escape codes and the empty NUMA field (h200x4)") {
  const TopoMatrix m = parse_topo_matrix(library("real/h200x4.topo"), "h200x4.topo");
  CHECK(m.gpu_count() == 4);
  CHECK(m.nic_count() == 0);
  CHECK(m.cell(0, 3).code == PairCode::NvLink);
  CHECK(m.cell(0, 3).nvlinks == 18);
  CHECK(m.devices[2].cpu_affinity == "0-63");
  CHECK(m.devices[2].numa_affinity == "0");
  CHECK(m.devices[2].gpu_numa_id == "N/A");
  CHECK(m.legend_seen);
}

TEST_CASE("topo_matrix: CR LF line ends from a terminal capture parse the same") {
  const TopoMatrix a = parse_topo_matrix(library("real/h200x4.topo"), "a");
  const TopoMatrix b = parse_topo_matrix(library("real/h200x4-tty.topo"), "b");
  REQUIRE(a.devices.size() == b.devices.size());
  CHECK(b.devices[3].gpu_numa_id == "N/A");
  CHECK(b.cell(1, 2).nvlinks == 18);
}

TEST_CASE("topo_matrix: space-aligned output with NIC columns, NIC rows and the NIC Legend (DGX A100)") {
  const TopoMatrix m = parse_topo_matrix(library("real/dgx-a100.topo"), "dgx");
  CHECK(m.gpu_count() == 8);
  CHECK(m.nic_count() == 10);
  CHECK(m.devices[8].label == "NIC0");
  CHECK(m.devices[8].device == "mlx5_0");
  CHECK(m.devices[17].device == "mlx5_9");
  CHECK(m.cell(0, 8).code == PairCode::Pxb);
  CHECK(m.cell(16, 17).code == PairCode::Pix);
  CHECK(m.devices[4].cpu_affinity == "112-127,240-255");
  CHECK(m.devices[4].numa_affinity == "7");
  CHECK(m.devices[4].gpu_numa_id == "N/A");
  CHECK(m.devices[8].cpu_affinity.empty());
}

TEST_CASE("topo_matrix: a NIC named by device, a truncated legend and no NUMA column (PCIe server)") {
  const TopoMatrix m = parse_topo_matrix(library("real/pcie8-server.topo"), "pcie8");
  CHECK(m.nic_count() == 1);
  CHECK(m.devices[8].device == "mlx5_0");
  CHECK(m.cell(0, 1).code == PairCode::Pix);
  CHECK(m.cell(0, 2).code == PairCode::Pxb);
  CHECK(m.cell(4, 8).code == PairCode::Phb);
  CHECK(m.devices[5].numa_affinity.empty());
}

TEST_CASE("topo_matrix: SOC reads as SYS, a missing legend is fine, NIC rows may be absent") {
  const std::string text =
      "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\n"
      "GPU0\t X \tSOC\tPHB\t0-9\n"
      "GPU1\tSOC\t X \tSOC\t10-19\n";
  const TopoMatrix m = parse_topo_matrix(text, "old");
  CHECK(m.cell(0, 1).code == PairCode::Sys);
  CHECK(m.cell(2, 0).code == PairCode::Phb);  // filled from the transposed cell
  CHECK(!m.legend_seen);
  CHECK(code_name(m.cell(0, 1).code, 0) == "SYS");
}

TEST_CASE("topo_matrix: malformed matrices name file, line and column") {
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\n", "f"),
                       doctest::Contains("f:3:9: error: short row 'GPU1'"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n", "f"),
                       doctest::Contains("f:2:10: error: unknown connection code 'NVX'"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV0\nGPU1\tNV0\t X \n", "f"),
                       doctest::Contains("absurd NVLink count 'NV0'"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV4\t X \n", "f"),
                       doctest::Contains("f:3:6: error: asymmetric matrix"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU1\tGPU0\nGPU1\t X \tPIX\n", "f"),
                       doctest::Contains("GPU columns must be GPU0, GPU1"), InputError);
  CHECK_THROWS_WITH_AS(
      parse_topo_matrix("\tGPU0\tGPU1\tBogus Column\nGPU0\t X \tPIX\t1\nGPU1\tPIX\t X \t1\n", "f"),
      doctest::Contains("unknown column 'Bogus Column'"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \t\nGPU1\tPIX\t X \n", "f"),
                       doctest::Contains("f:2:10: error: empty matrix cell"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU0\tPIX\t X \n", "f"),
                       doctest::Contains("duplicate row 'GPU0'"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tPIX\tjunk\nGPU1\tPIX\t X \n", "f"),
                       doctest::Contains("f:2:14: error: row 'GPU0' has more cells"), InputError);
}

TEST_CASE("topo_matrix: format detection") {
  CHECK(looks_like_topo_matrix("\t\x1b[4mGPU0\tGPU1\x1b[0m\n"));
  CHECK(looks_like_topo_matrix("        GPU0    GPU1\n"));
  CHECK_FALSE(looks_like_topo_matrix("[[nodes]]\npreset = \"x\"\n"));
  CHECK_FALSE(looks_like_topo_matrix("xGPU0\n"));
}

TEST_CASE(
    "topo_matrix: a header wider than the documented limit is refused at once, before any cell is stored") {
  std::string header = "\t";
  for (int i = 0; i < 10000; ++i) header += "GPU" + std::to_string(i) + "\t";
  const std::string text = header + "\nGPU0\t X\n";
  CHECK_THROWS_WITH_AS(parse_topo_matrix(text, "wide.topo"), doctest::Contains("wide.topo:1:"), InputError);
  CHECK_THROWS_WITH_AS(parse_topo_matrix(text, "wide.topo"), doctest::Contains("at most 1024"), InputError);
}

TEST_CASE("topo_matrix: a header at the limit with one row stores that row and names the missing one") {
  // 1,024 columns and one row: the error is the missing GPU1 row; only GPU0's row of cells was stored.
  std::string header = "\t", row = "GPU0\t X\t";
  for (int i = 0; i < 1024; ++i) header += "GPU" + std::to_string(i) + "\t";
  for (int i = 1; i < 1024; ++i) row += "NODE\t";
  CHECK_THROWS_WITH_AS(parse_topo_matrix(header + "\n" + row + "\n", "edge.topo"),
                       doctest::Contains("matrix ends without a row for GPU1"), InputError);
}
