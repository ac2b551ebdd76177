// Unit tests for the `nvidia-smi nvlink -s` parser.
#include <doctest/doctest.h>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/topo/nvlink_status.hpp"

using namespace commsim;
using namespace commsim::topo;

TEST_CASE("nvlink_status: the captured 4x H200 output") {
  const auto st = parse_nvlink_status(
      read_file(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/real/h200x4.nvlink"), "h200x4.nvlink");
  REQUIRE(st.gpus.size() == 4);
  CHECK(st.gpus[0].name == "NVIDIA H200");
  CHECK(st.gpus[0].uuid.rfind("GPU-", 0) == 0);
  CHECK(st.gpus[3].active_links() == 18);
  CHECK(st.gpus[1].link_rate[17] == doctest::Approx(26.562e9));
}

TEST_CASE("nvlink_status: inactive links count as down") {
  const auto st = parse_nvlink_status(
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-x)\n\t Link 0: 25 GB/s\n"
      "\t Link 1: <inactive>\n",
      "f");
  CHECK(st.gpus[0].active_links() == 1);
  CHECK(st.gpus[0].link_rate.size() == 2);
}

TEST_CASE("nvlink_status: malformed lines are located") {
  CHECK_THROWS_WITH_AS(parse_nvlink_status("GPU 0: X\n\t Link 0: 25 GB\n", "f"), doctest::Contains("f:2:11"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_nvlink_status("\t Link 0: 25 GB/s\n", "f"),
                       doctest::Contains("before any 'GPU n:'"), InputError);
  CHECK_THROWS_WITH_AS(parse_nvlink_status("GPU 0: X\n\t Link 1: 25 GB/s\n", "f"),
                       doctest::Contains("out of order"), InputError);
  CHECK_THROWS_WITH_AS(parse_nvlink_status("something else\n", "f"),
                       doctest::Contains("f:1:1: error: unrecognised"), InputError);
  CHECK_THROWS_AS(parse_nvlink_status("", "f"), InputError);
}
