// Tests of the nccl-tests log parser on the committed logs and on damaged copies of them.
#include <doctest/doctest.h>

#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/validation/nccl_tests.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {
std::string data(const std::string& name) {
  return read_file(std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x4/nccl-tests/" + name);
}
}  // namespace

TEST_CASE("nccl_tests: a sendrecv_perf log from the H200 machine") {
  const auto runs = parse_nccl_tests(data("sendrecv_g4_r1.log"), "g4.log");
  REQUIRE(runs.size() == 1);
  const NcclTestsRun& r = runs[0];
  CHECK(r.op == "sendrecv");
  CHECK(r.version == "2.19.6");
  CHECK(r.ngpus == 4);
  REQUIRE(r.devices.size() == 4);
  CHECK(r.devices[2].bus_id == "0000:00:08");
  CHECK(r.devices[2].name == "NVIDIA H200");
  REQUIRE(r.rows.size() == 28);
  CHECK(r.rows.front().size == 8);
  CHECK(r.rows.back().size == 1073741824);
  CHECK(r.rows.back().time_us > 2900);
  CHECK(r.rows.back().time_ip_us > 2900);
}

TEST_CASE("nccl_tests: several runs concatenated in one file") {
  const std::string both = data("sendrecv_g2_d01_r1.log") + data("all_reduce_g2.log");
  const auto runs = parse_nccl_tests(both, "both.log");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].op == "sendrecv");
  CHECK(runs[1].op == "all_reduce");
  CHECK(runs[1].line > runs[0].line);
}

TEST_CASE("nccl_tests: truncated, corrupted and unsupported logs are located errors") {
  const std::string full = data("sendrecv_g2_d01_r1.log");
  // Cut in the middle of a data row.
  const std::string cut = full.substr(0, full.find("   1048576") + 30);
  CHECK_THROWS_WITH_AS(parse_nccl_tests(cut, "cut.log"), doctest::Contains("cut.log:"), InputError);
  // A header with no rows.
  const std::string header_only = full.substr(0, full.find("           8 "));
  CHECK_THROWS_WITH_AS(parse_nccl_tests(header_only, "h.log"), doctest::Contains("no result rows"),
                       InputError);
  // A corrupted number.
  std::string bad = full;
  bad.replace(bad.find("2975.38"), 7, "29x5.38");
  CHECK_THROWS_WITH_AS(parse_nccl_tests(bad, "bad.log"), doctest::Contains("bad.log:40:"), InputError);
  // An old major version.
  std::string old = full;
  old.replace(old.find("version 2.19.6"), 14, "version 1.99.0");
  CHECK_THROWS_WITH_AS(parse_nccl_tests(old, "old.log"), doctest::Contains("unsupported nccl-tests version"),
                       InputError);
  CHECK_THROWS_AS(parse_nccl_tests("hello\n", "x.log"), InputError);
  CHECK_THROWS_AS(parse_nccl_tests("", "x.log"), InputError);
}

TEST_CASE("nccl_tests: the JSON output (-J) gives the same rows as the text") {
  const auto text = parse_nccl_tests(data("all_reduce_g4.log"), "ar.log");
  const auto json = parse_nccl_tests(data("all_reduce_g4.json"), "ar.json");
  REQUIRE(json.size() == 1);
  CHECK(json[0].op == "all_reduce");
  CHECK(json[0].ngpus == 4);
  REQUIRE(json[0].devices.size() == 4);
  CHECK(json[0].devices[3].cuda_device == 3);
  REQUIRE(json[0].rows.size() == text[0].rows.size());
  for (std::size_t i = 0; i < json[0].rows.size(); ++i) {
    CHECK(json[0].rows[i].size == text[0].rows[i].size);
    CHECK(json[0].rows[i].time_us == doctest::Approx(text[0].rows[i].time_us).epsilon(0.01));
    CHECK(json[0].rows[i].time_ip_us == doctest::Approx(text[0].rows[i].time_ip_us).epsilon(0.01));
  }
  CHECK_THROWS_WITH_AS(parse_nccl_tests("{\"version\": 3}", "x.json"), doctest::Contains("x.json:1:1"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_nccl_tests("{\"version\": 3, ", "y.json"),
                       doctest::Contains("not valid nccl-tests JSON"), InputError);
}

TEST_CASE("nccl_tests: the CUDA graph setting (-G) is read from the text header") {
  const std::string dir =
      std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x2/mechanism/vm-20261123T020110Z/";
  const auto graph = parse_nccl_tests(read_file(dir + "all_reduce_t2_G1_r1.log"), "g.log");
  REQUIRE(graph.size() == 1);
  CHECK(graph[0].graph == 1);
  CHECK(graph[0].nthreads == 2);
  const auto plain = parse_nccl_tests(read_file(dir + "all_reduce_t2_G0_r1.log"), "p.log");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].graph == 0);
  // The JSON output records it under config.graph.
  const auto json = parse_nccl_tests(data("sendrecv_g2_d01_r1.json"), "r1.json");
  REQUIRE(json.size() == 1);
  CHECK(json[0].graph == 0);
  std::string with_graph = data("sendrecv_g2_d01_r1.json");
  with_graph.replace(with_graph.find("\"graph\":0"), 9, "\"graph\":1");
  CHECK(parse_nccl_tests(with_graph, "g.json")[0].graph == 1);
}

TEST_CASE(
    "nccl_tests: data from another NCCL is warned about, against the set's version or the modelled one") {
  // A fitted set names the NCCL it was fitted on: any other patch release is named.
  CHECK(nccl_version_warning("2.28.3", "h200", "2.28.3").empty());
  CHECK(nccl_version_warning("2.28.9", "h200", "2.28.3") ==
        "ran NCCL 2.28.9, the parameter set h200 was fitted on NCCL 2.28.3");
  // The datasheet set names none: the minor release commsim models is the reference.
  CHECK(nccl_version_warning("2.28.3", "nccl-default", "").empty());
  CHECK(nccl_version_warning("2.28", "nccl-default", "").empty());
  CHECK(nccl_version_warning("2.21.7", "nccl-default", "") ==
        "ran NCCL 2.21.7, commsim models NCCL 2.28 and the parameter set nccl-default names no NCCL version");
  CHECK(!nccl_version_warning("2.280.1", "nccl-default", "").empty());  // not 2.28.x
  // Data that does not say: nothing to compare.
  CHECK(nccl_version_warning("", "h200", "2.28.3").empty());
}
