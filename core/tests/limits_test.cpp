// Unit tests for the simulator's documented limits and the checked arithmetic.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/units.hpp"

using namespace commsim;

TEST_CASE("limits: sizes above the largest simulated size are refused") {
  CHECK_NOTHROW(check_size(kMaxBytes, "size"));
  CHECK_THROWS_WITH_AS(check_size(kMaxBytes + 1, "size"), doctest::Contains("largest size"), ValueError);
  CHECK_THROWS_AS(check_size(std::numeric_limits<std::uint64_t>::max(), "size"), ValueError);
  CHECK_THROWS_AS(parse_size_flag("--max-bytes", "5000TiB"), UsageError);
  CHECK(parse_size_flag("--max-bytes", "4TiB") == kMaxBytes);
}

TEST_CASE("limits: bandwidths outside 1 MB/s to 1 PB/s are refused") {
  CHECK_THROWS_WITH_AS(parse_bandwidth("1Bps"), doctest::Contains("outside the range"), ValueError);
  CHECK_THROWS_AS(parse_bandwidth("1e-300GBps"), ValueError);
  CHECK_THROWS_AS(parse_bandwidth("1e12GBps"), ValueError);
  CHECK(parse_bandwidth("1MBps") == doctest::Approx(1e6));
  CHECK(parse_bandwidth("1000TBps") == doctest::Approx(1e15));
  CHECK(parse_bandwidth("10Gbps") == doctest::Approx(1.25e9));
}

TEST_CASE("limits: a size sweep with a factor barely above 1 is refused at once") {
  CHECK_THROWS_WITH_AS(size_sweep(1, 1ULL << 30, 1.000000001), doctest::Contains("raise --factor"),
                       UsageError);
  CHECK_THROWS_AS(size_sweep(1, kMaxBytes * 2, 2), UsageError);
  CHECK(size_sweep(8, 1024, 2).size() == 8);
  CHECK(size_sweep(1, 1ULL << 30, 1.001).size() > 1000);  // many steps, but fewer than kMaxSweepSteps
}

TEST_CASE("limits: checked arithmetic throws on overflow") {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
  CHECK(checked_add(std::uint64_t{2}, std::uint64_t{3}, "sum") == 5);
  CHECK_THROWS_AS(checked_add(big, std::uint64_t{1}, "sum"), ValueError);
  CHECK_THROWS_AS(checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32, "product"), ValueError);
  CHECK(checked_add(Picoseconds{5}, Picoseconds{7}, "time") == 12);
  CHECK_THROWS_AS(checked_add(kMaxSimulatedTime, Picoseconds{1}, "time"), ValueError);
  CHECK_THROWS_AS(checked_mul(kMaxSimulatedTime / 2 + 1, 2, "time"), ValueError);
}

TEST_CASE("limits: seconds become picoseconds only when finite, non-negative and in range") {
  CHECK(seconds_to_picoseconds(1.5e-6, "t") == 1500000);
  CHECK_THROWS_AS(seconds_to_picoseconds(std::numeric_limits<double>::quiet_NaN(), "t"), ValueError);
  CHECK_THROWS_AS(seconds_to_picoseconds(-1, "t"), ValueError);
  CHECK_THROWS_AS(seconds_to_picoseconds(1e300, "t"), ValueError);
}

TEST_CASE("limits: a UTF-8 byte-order mark is stripped, other text kept") {
  CHECK(strip_utf8_bom("\xEF\xBB\xBF# x") == "# x");
  CHECK(strip_utf8_bom("# x") == "# x");
  CHECK(strip_utf8_bom("\xEF\xBB") == "\xEF\xBB");
}
