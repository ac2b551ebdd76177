// Adversarial tests of the validated readers: nccl-tests logs (text and JSON) and the checked JSON access
// that commsim-measure results go through. Every bad value must be an InputError naming the file and the
// location.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/validation/json_reader.hpp"
#include "commsim/validation/nccl_tests.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

/// A two-GPU all_reduce log with one row whose out-of-place time column is `time` and size column `size`.
std::string log_with(const std::string& time, const std::string& size = "1024",
                     const std::string& ranks =
                         "#  Rank  0 Group  0 Pid 1 on vm device  0 [0000:00:06] NVIDIA H200\n"
                         "#  Rank  1 Group  0 Pid 1 on vm device  1 [0000:00:07] NVIDIA H200\n",
                     const std::string& counts = "# nThread 1 nGpus 2 minBytes 8 maxBytes 8\n") {
  return "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22803\n"
         "# Collective test starting: all_reduce_perf\n" +
         counts + ranks +
         "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
         "algbw   "
         "busbw  #wrong\n" +
         size + " 256 float sum -1 " + time + " 0.10 0.05 0 9.5 0.11 0.05 0\n";
}

/// The InputError message parse_nccl_tests throws for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_nccl_tests(text, "bad.log");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("readers: a well-formed nccl-tests log still parses") {
  const auto runs = parse_nccl_tests(log_with("9.76"), "good.log");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].devices.size() == 2);
  CHECK(runs[0].rows.at(0).time_us == doctest::Approx(9.76));
}

TEST_CASE("readers: nccl-tests times must be finite and positive") {
  for (const char* t : {"nan", "NaN", "inf", "-inf", "0", "0.00", "-3.5", "1e300", "0x1p3x"}) {
    CAPTURE(t);
    const std::string e = error_of(log_with(t));
    CHECK(e.find("bad.log:7:") != std::string::npos);
  }
}

TEST_CASE("readers: nccl-tests sizes beyond the simulator's range are refused") {
  CHECK(error_of(log_with("9.76", "18446744073709551615")).find("largest size") != std::string::npos);
  CHECK(error_of(log_with("9.76", "18446744073709551616")).find("bad.log:7:1") != std::string::npos);
  CHECK(error_of(log_with("9.76", std::to_string(kMaxBytes))).empty());
}

TEST_CASE("readers: nccl-tests Rank lines must agree with nThread x nGpus") {
  const std::string one = "#  Rank  0 Group  0 Pid 1 on vm device  0 [0000:00:06] NVIDIA H200\n";
  CHECK(error_of(log_with("9.76", "1024", one)).find("missing Rank line") != std::string::npos);
  CHECK(error_of(log_with("9.76", "1024", one + one)).find("listed twice") != std::string::npos);
  CHECK(error_of(log_with("9.76", "1024", one + one.substr(0, 40))).find("bad.log:") != std::string::npos);
}

TEST_CASE("readers: nccl-tests counts that overflow or do not parse are refused") {
  CHECK(error_of(log_with("9.76", "1024", "", "# nThread 65536 nGpus 65536\n")).find("bad.log:3:") !=
        std::string::npos);
  CHECK(error_of(log_with("9.76", "1024", "", "# nThread 1 nGpus 4294967298\n")).find("bad nGpus") !=
        std::string::npos);
  CHECK(error_of(log_with("9.76", "1024", "", "# nThread one nGpus 2\n")).find("bad nThread 'one'") !=
        std::string::npos);
}

TEST_CASE("readers: a Collective test starting line without a name is an error, not a crash") {
  std::string text = log_with("9.76");
  const auto at = text.find("all_reduce_perf");
  text.erase(at, 15);
  CHECK(error_of(text).find("bad.log:2:") != std::string::npos);
}

TEST_CASE("readers: a UTF-8 byte-order mark before an nccl-tests log is accepted") {
  const auto runs = parse_nccl_tests("\xEF\xBB\xBF" + log_with("9.76"), "bom.log");
  CHECK(runs.size() == 1);
  const auto json = parse_nccl_tests(
      "\xEF\xBB\xBF{\"args\": [\"all_reduce_perf\"], \"config\": {\"ngpus\": 2}, \"results\": [{\"size\": 8, "
      "\"out_of_place\": {\"time\": 3.5}}]}",
      "bom.json");
  CHECK(json.at(0).rows.at(0).time_us == doctest::Approx(3.5));
}

TEST_CASE("readers: nccl-tests JSON type and range errors name the JSON path") {
  auto json_error = [](const std::string& text) -> std::string {
    try {
      parse_nccl_tests(text, "r.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string head = "{\"args\": [\"all_reduce_perf\"], \"config\": {\"ngpus\": ";
  CHECK(json_error(head + "1e9}, \"results\": []}").find("$.config.ngpus") != std::string::npos);
  CHECK(json_error(head + "\"two\"}, \"results\": []}").find("found string") != std::string::npos);
  CHECK(json_error(head + "2}, \"results\": [{\"size\": 8, \"out_of_place\": {\"time\": \"x\"}}]}")
            .find("r.json: error: $.results[0].out_of_place.time") != std::string::npos);
  CHECK(json_error(head +
                   "2}, \"results\": [{\"size\": 18446744073709551615, \"out_of_place\": {\"time\": 1}}]}")
            .find("$.results[0].size") != std::string::npos);
  CHECK(json_error(head + "2}, \"results\": 7}").find("$.results: expected an array") != std::string::npos);
  CHECK(json_error("{\"args\": [\n").find("r.json:2:") != std::string::npos);
}

TEST_CASE("readers: JsonValue checks types, ranges and GPU indices") {
  const auto doc = nlohmann::json::parse(
      R"({"t": 1.5, "z": 0, "s": "x", "big": 1099511627776, "neg": -1, "f": 2.0, "half": 2.5, "a": [1, 2]})");
  const JsonValue v(doc, "results.json");
  CHECK(v.at("t").positive_time_us() == 1.5);
  CHECK_THROWS_WITH_AS(v.at("z").positive_time_us(), doctest::Contains("results.json: error: $.z"),
                       InputError);
  CHECK_THROWS_WITH_AS(v.at("s").number(), doctest::Contains("found string"), InputError);
  CHECK_THROWS_WITH_AS(v.at("big").gpu(4), doctest::Contains("GPU 1099511627776 is not in the topology"),
                       InputError);
  CHECK_THROWS_AS(v.at("neg").gpu(4), InputError);
  CHECK(v.at("f").integer(0, 10) == 2);
  CHECK_THROWS_WITH_AS(v.at("half").integer(0, 10), doctest::Contains("whole number"), InputError);
  CHECK_THROWS_WITH_AS(v.at("missing"), doctest::Contains("missing key \"missing\""), InputError);
  CHECK_THROWS_WITH_AS(v.at("a").items(1), doctest::Contains("$.a: has 2 elements"), InputError);
  CHECK(v.at("a").items().at(1).path() == "$.a[1]");
  CHECK_THROWS_AS(v.at("t").at("x"), InputError);
}

TEST_CASE("readers: strict number parsing for text fields") {
  CHECK(parse_integer("12", 0, 100) == 12);
  CHECK_FALSE(parse_integer("12x", 0, 100));
  CHECK_FALSE(parse_integer("99999999999999999999", 0, 100));
  CHECK_FALSE(parse_integer("", 0, 100));
  CHECK(parse_finite("2.5") == 2.5);
  CHECK_FALSE(parse_finite("banana"));
  CHECK_FALSE(parse_finite("nan"));
  CHECK_FALSE(parse_finite("inf"));
}
