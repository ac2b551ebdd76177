// Tests of size sweeps, GPU lists and exchange modes (the flags every workload shares).
#include <doctest/doctest.h>

#include "commsim/core/error.hpp"
#include "commsim/sim/workloads.hpp"

using namespace commsim;
using namespace commsim::sim;

TEST_CASE("workloads: the default sweep 1B..1GiB by 2 has 31 sizes") {
  const auto s = size_sweep(1, 1ULL << 30, 2);
  CHECK(s.size() == 31);
  CHECK(s.front() == 1);
  CHECK(s.back() == 1ULL << 30);
  CHECK_THROWS_AS(size_sweep(0, 8, 2), UsageError);
  CHECK_THROWS_AS(size_sweep(16, 8, 2), UsageError);
  CHECK_THROWS_AS(size_sweep(1, 8, 1.0), UsageError);
}

TEST_CASE("workloads: size flags must be positive, and a bare number is bytes as in nccl-tests") {
  CHECK(parse_size_flag("--max-bytes", "1GiB") == 1ULL << 30);
  CHECK_THROWS_WITH_AS(parse_size_flag("--min-bytes", "0B"), doctest::Contains("at least 1B"), UsageError);
  CHECK_THROWS_WITH_AS(parse_size_flag("--min-bytes", "-8B"), doctest::Contains("negative"), UsageError);
  CHECK(parse_size_flag("--max-bytes", "1024") == 1024);
  CHECK(parse_size_flag("--max-bytes", "1G") == 1ULL << 30);
  CHECK_THROWS_WITH_AS(parse_size_flag("--max-bytes", "99999999TiB"), doctest::Contains("overflows"),
                       UsageError);
}

TEST_CASE("workloads: GPU lists take ranges, lists and all") {
  CHECK(parse_gpu_list("0-3", 8) == std::vector<int>{0, 1, 2, 3});
  CHECK(parse_gpu_list("0-2,5,7", 8) == std::vector<int>{0, 1, 2, 5, 7});
  CHECK(parse_gpu_list("all", 3) == std::vector<int>{0, 1, 2});
  CHECK_THROWS_WITH_AS(parse_gpu_list("0-9", 8), doctest::Contains("GPU 9 is not in the topology"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_gpu_list("3-1", 8), doctest::Contains("backwards"), UsageError);
  CHECK_THROWS_WITH_AS(parse_gpu_list("1,1", 8), doctest::Contains("twice"), UsageError);
  CHECK_THROWS_AS(parse_gpu_list("x", 8), UsageError);
  CHECK_THROWS_AS(parse_gpu_list("", 8), UsageError);
}

TEST_CASE("workloads: exchange modes have NCCL's meaning") {
  const Program seq = exchange_program(0, 1, ExchangeMode::Sequential, 64);
  const Program ovl = exchange_program(0, 1, ExchangeMode::Overlapped, 64);
  const Program bat = exchange_program(0, 1, ExchangeMode::Batched, 64);
  CHECK(seq.comms.size() == 1);
  CHECK(seq.launches.size() == 4);                // four single-op calls on one stream
  CHECK(ovl.comms.size() == 2);                   // separate communicators ...
  CHECK(ovl.launches[1].kernels[0].stream == 1);  // ... and streams
  CHECK(bat.launches.size() == 2);                // one group per GPU
  CHECK(bat.launches[0].kernels[0].ops.size() == 2);
  CHECK_THROWS_AS(parse_exchange_mode("parallel"), UsageError);
}
