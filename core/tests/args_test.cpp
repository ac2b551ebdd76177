// Tests of the command-line value parsers: nccl-tests-style sizes, time flags with units, "did you mean".
#include <doctest/doctest.h>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"

using namespace commsim;

TEST_CASE("args: a bare number on the command line is bytes") {
  CHECK(parse_cli_size("8") == 8);
  CHECK(parse_cli_size(" 1024 ") == 1024);
  CHECK(parse_cli_size("1e3") == 1000);
  CHECK(parse_size_flag("-b", "8") == 8);
}

TEST_CASE("args: K M G T are powers of two as in nccl-tests") {
  CHECK(parse_cli_size("1K") == 1024);
  CHECK(parse_cli_size("1k") == 1024);
  CHECK(parse_cli_size("128M") == 128ULL << 20);
  CHECK(parse_cli_size("128m") == 128ULL << 20);
  CHECK(parse_cli_size("1G") == 1ULL << 30);
  CHECK(parse_cli_size("2T") == 2ULL << 40);
  CHECK(parse_cli_size("1.5K") == 1536);
}

TEST_CASE("args: KB MB GB stay decimal and KiB MiB GiB binary on the command line") {
  CHECK(parse_cli_size("1MB") == 1000000);
  CHECK(parse_cli_size("1KB") == 1000);
  CHECK(parse_cli_size("1GB") == 1000000000);
  CHECK(parse_cli_size("1MiB") == 1ULL << 20);
  CHECK(parse_cli_size("8B") == 8);
}

TEST_CASE("args: sizes in files keep their mandatory unit") {
  CHECK_THROWS_WITH_AS(parse_size("8"), doctest::Contains("no unit"), ValueError);
  CHECK_THROWS_WITH_AS(parse_size("128M"), doctest::Contains("unknown size unit"), ValueError);
}

TEST_CASE("args: bad command-line sizes name the flag and the accepted forms") {
  CHECK_THROWS_WITH_AS(parse_size_flag("-e", "4parsecs"), doctest::Contains("-e 4parsecs"), UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("-e", "4parsecs"),
                       doctest::Contains("powers of 1024 as in nccl-tests"), UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("--min-bytes", "0"), doctest::Contains("at least 1B"), UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("--min-bytes", "-8"), doctest::Contains("'-8' is negative"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("--min-bytes", "0.5"), doctest::Contains("not a whole number"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("--max-bytes", "99999999T"), doctest::Contains("overflows"),
                       UsageError);
  CHECK_THROWS_AS(parse_size_flag("--max-bytes", ""), UsageError);
  CHECK_THROWS_AS(parse_size_flag("--max-bytes", "M"), UsageError);
}

TEST_CASE("args: a time flag takes units and a bare number keeps its documented unit") {
  CHECK(parse_time_flag("--fwd-us", "500", "us") == 500.0);
  CHECK(parse_time_flag("--fwd-us", "500us", "us") == 500.0);
  CHECK(parse_time_flag("--fwd-us", "1.5ms", "us") == 1500.0);
  CHECK(parse_time_flag("--fwd-us", "250ns", "us") == doctest::Approx(0.25));
  CHECK(parse_time_flag("--timeout", "2ms", "s") == doctest::Approx(0.002));
  CHECK(parse_time_flag("--nvml-interval-ms", "1s", "ms") == 1000.0);
  CHECK(parse_time_flag("--fwd-us", "-1", "us") == -1.0);  // the caller's range check reports it
  CHECK_THROWS_WITH_AS(parse_time_flag("--fwd-us", "5 parsecs", "us"),
                       doctest::Contains("--fwd-us 5 parsecs"), UsageError);
  CHECK_THROWS_WITH_AS(parse_time_flag("--fwd-us", "fast", "us"), doctest::Contains("a bare number is in us"),
                       UsageError);
}

TEST_CASE("args: did you mean names the closest candidate, and nothing when none is close") {
  const std::vector<std::string> commands = {"topo", "simulate", "validate", "calibrate", "sweep"};
  CHECK(closest_name("simulat", commands) == "simulate");
  CHECK(closest_name("smulate", commands) == "simulate");
  CHECK(closest_name("swep", commands) == "sweep");
  CHECK(closest_name("xyz", commands).empty());
  CHECK(closest_name("simulate", commands).empty());  // an exact name needs no hint
  CHECK(closest_name("--min-byte", {"--min-bytes", "--max-bytes", "--factor"}) == "--min-bytes");
}
