// Tests of ChunkedVector: indexing across its doubling segments, stable references, clear and reuse.
#include "commsim/sim/chunked_vector.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using commsim::sim::ChunkedVector;

TEST_CASE("chunked_vector: indexes every element across segment boundaries as a vector would") {
  ChunkedVector<long> c;
  std::vector<long> v;
  for (long i = 0; i < 100'000; ++i) {
    c.push_back(i * 7 - 3);
    v.push_back(i * 7 - 3);
  }
  REQUIRE(c.size() == v.size());
  // The boundaries of the first segments (16, 48, 112, ...) and a sample of the rest.
  for (std::size_t i : {0, 15, 16, 47, 48, 111, 112, 240, 65'519, 65'520, 99'999}) CHECK(c[i] == v[i]);
  bool all = true;
  for (std::size_t i = 0; i < v.size(); ++i) all = all && c[i] == v[i];
  CHECK(all);
  CHECK(c.back() == v.back());
}

TEST_CASE("chunked_vector: references stay valid while it grows") {
  ChunkedVector<std::string> c;
  std::string& first = c.emplace_back("first");
  std::string* seventeenth = nullptr;
  for (int i = 1; i < 5'000; ++i) {
    std::string& s = c.emplace_back(std::to_string(i));
    if (i == 17) seventeenth = &s;
  }
  CHECK(&c[0] == &first);
  CHECK(first == "first");
  CHECK(&c[17] == seventeenth);
  CHECK(*seventeenth == "17");
}

TEST_CASE("chunked_vector: clear destroys the elements and the slots are reused") {
  auto counter = std::make_shared<int>(0);
  ChunkedVector<std::shared_ptr<int>> c;
  for (int i = 0; i < 40; ++i) c.push_back(counter);
  CHECK(counter.use_count() == 41);
  c.clear();
  CHECK(c.empty());
  CHECK(counter.use_count() == 1);
  for (int i = 0; i < 3; ++i) c.emplace_back(counter);
  CHECK(c.size() == 3);
  CHECK(counter.use_count() == 4);
  CHECK(c[2] == counter);
}
