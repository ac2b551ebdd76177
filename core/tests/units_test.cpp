// Unit tests for size, bandwidth and duration parsing and formatting.
#include <doctest/doctest.h>

#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"

using namespace commsim;

TEST_CASE("units: sizes parse with decimal and binary prefixes") {
  CHECK(parse_size("8B") == 8);
  CHECK(parse_size("24MiB") == 24ULL * 1024 * 1024);
  CHECK(parse_size("1.5 KB") == 1500);
  CHECK(parse_size("1GiB") == 1073741824ULL);
  CHECK(parse_size(" 2 TB ") == 2000000000000ULL);
  CHECK(parse_size("0.5KiB") == 512);
}

TEST_CASE("units: sizes without a unit or with a bad one are errors") {
  CHECK_THROWS_AS(parse_size("1024"), ValueError);
  CHECK_THROWS_AS(parse_size("4 parsecs"), ValueError);
  CHECK_THROWS_AS(parse_size("-1B"), ValueError);
  CHECK_THROWS_AS(parse_size("0.3B"), ValueError);
  CHECK_THROWS_AS(parse_size("99999999999TiB"), ValueError);
  CHECK_THROWS_AS(parse_size(""), ValueError);
  CHECK_THROWS_AS(parse_size("GiB"), ValueError);
  CHECK_THROWS_AS(parse_size("1e999GiB"), ValueError);
  CHECK_THROWS_WITH_AS(parse_size("12"), doctest::Contains("no unit"), ValueError);
  CHECK_THROWS_WITH_AS(parse_size("12 gib"), doctest::Contains("valid units"), ValueError);
}

TEST_CASE("units: bandwidths accept byte and bit units") {
  CHECK(parse_bandwidth("25GBps") == doctest::Approx(25e9));
  CHECK(parse_bandwidth("400Gbps") == doctest::Approx(50e9));
  CHECK(parse_bandwidth("31.5 GB/s") == doctest::Approx(31.5e9));
  CHECK(parse_bandwidth("1GiBps") == doctest::Approx(1073741824.0));
  CHECK(parse_bandwidth("100 Gb/s") == doctest::Approx(12.5e9));
  CHECK_THROWS_AS(parse_bandwidth("25"), ValueError);
  CHECK_THROWS_AS(parse_bandwidth("0GBps"), ValueError);
  CHECK_THROWS_AS(parse_bandwidth("25 furlongs"), ValueError);
}

TEST_CASE("units: durations become integer picoseconds") {
  CHECK(parse_duration("1.5us") == 1'500'000);
  CHECK(parse_duration("600ns") == 600'000);
  CHECK(parse_duration("2 ms") == 2'000'000'000);
  CHECK(parse_duration("7ps") == 7);
  CHECK(parse_duration("1s") == kPicosPerSecond);
  CHECK(parse_duration("1e-3 s") == 1'000'000'000);
  CHECK_THROWS_AS(parse_duration("1.5"), ValueError);
  CHECK_THROWS_AS(parse_duration("3 fortnights"), ValueError);
}

TEST_CASE("units: formatting for people") {
  CHECK(format_bandwidth(450e9) == "450 GB/s");
  CHECK(format_bandwidth(31.5e9) == "31.5 GB/s");
  CHECK(format_size(24ULL << 20) == "24 MiB");
  CHECK(format_size(1000) == "1000 B");
  CHECK(format_duration(1'500'000) == "1.5 us");
  CHECK(format_duration(250) == "250 ps");
}
