// Unit tests for the hardware catalogue: lookup by name and alias, PCIe rates, bad parameter files.
#include <doctest/doctest.h>

#include "commsim/core/error.hpp"
#include "commsim/models/hardware.hpp"

using namespace commsim;
using namespace commsim::models;

TEST_CASE("hardware: the embedded catalogue has the documented generations") {
  const auto& hw = HardwareCatalog::builtin();
  for (const char* name : {"V100", "A100", "A6000", "L40S", "H100", "H100-NVL", "H200", "B200"}) {
    CHECK_MESSAGE(hw.find_gpu(name) != nullptr, name);
  }
  const GpuSpec& h100 = hw.gpu("H100");
  CHECK(h100.nvlink_links == 18);
  CHECK(h100.nvlink_links * h100.nvlink_link_bandwidth == doctest::Approx(450e9));
  CHECK(hw.gpu("B200").nvlink_links * hw.gpu("B200").nvlink_link_bandwidth == doctest::Approx(900e9));
}

TEST_CASE("hardware: GPU lookup ignores case, prefixes and marketing suffixes") {
  const auto& hw = HardwareCatalog::builtin();
  CHECK(hw.gpu("h200").name == "H200");
  CHECK(hw.gpu("NVIDIA H200").name == "H200");
  CHECK(hw.gpu("NVIDIA H100 80GB HBM3").name == "H100");
  CHECK(hw.gpu("NVIDIA H100 NVL").name == "H100-NVL");
  CHECK(hw.gpu("Tesla V100-SXM2-32GB").name == "V100");
  CHECK(hw.gpu("NVIDIA RTX A6000").name == "A6000");
  CHECK(hw.gpu("NVIDIA A100-SXM4-80GB").name == "A100");
  CHECK_THROWS_WITH_AS(hw.gpu("K80"), doctest::Contains("known GPUs: A100, A6000"), UsageError);
}

TEST_CASE("hardware: PCIe bandwidth scales with generation and lanes") {
  const auto& hw = HardwareCatalog::builtin();
  CHECK(hw.pcie_bandwidth(4, 16) == doctest::Approx(31.5e9));
  CHECK(hw.pcie_bandwidth(5, 8) == doctest::Approx(31.5e9));
  CHECK_THROWS_AS(hw.pcie_bandwidth(9, 16), ValueError);
}

TEST_CASE("hardware: a parameter file with a unit-less value names its line and column") {
  const char* text = R"([pcie]
gen4 = "31.5GBps"
[host]
root_complex_bandwidth = 128
smp_bandwidth = "62GBps"
[gpu.X]
release = 2020
sm = 80
nvlink_links = 0
pcie_gen = 4
nic_bandwidth = "100Gbps"
)";
  CHECK_THROWS_WITH_AS(HardwareCatalog::parse(text, "p.toml"), doctest::Contains("p.toml:4:26"), InputError);
  CHECK_THROWS_WITH_AS(HardwareCatalog::parse(text, "p.toml"), doctest::Contains("has no unit"), InputError);
}

TEST_CASE("hardware: a missing required value is reported") {
  const char* text = R"([pcie]
gen4 = "31.5GBps"
[host]
root_complex_bandwidth = "128GBps"
smp_bandwidth = "62GBps"
[gpu.X]
release = 2020
sm = 80
nvlink_links = 4
pcie_gen = 4
nic_bandwidth = "100Gbps"
)";
  CHECK_THROWS_WITH_AS(HardwareCatalog::parse(text, "p.toml"), doctest::Contains("nvlink_link_bandwidth"),
                       InputError);
}
