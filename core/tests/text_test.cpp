// Unit tests for binary detection and line splitting.
#include <doctest/doctest.h>

#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"

using namespace commsim;

TEST_CASE("text: empty, whitespace-only and binary input are rejected with a position") {
  CHECK_THROWS_WITH_AS(require_text("", "f.topo", "x"), doctest::Contains("f.topo:1:1"), InputError);
  CHECK_THROWS_WITH_AS(require_text("  \n\n", "f.topo", "x"), doctest::Contains("only whitespace"),
                       InputError);
  const std::string binary = std::string("GPU0\nab") + '\0' + "cd";
  CHECK_THROWS_WITH_AS(require_text(binary, "f.topo", "x"), doctest::Contains("f.topo:2:3"), InputError);
  CHECK_THROWS_WITH_AS(require_text("ok\n\xff\xfe", "f", "x"), doctest::Contains("invalid UTF-8"),
                       InputError);
  CHECK_NOTHROW(require_text("GPU0\t X \x1b[0m\r\n", "f", "x"));
  CHECK_NOTHROW(require_text("caf\xc3\xa9\n", "f", "x"));
}

TEST_CASE("text: lines keep numbers and drop CR LF terminators") {
  const auto lines = split_lines("a\r\nb\n\nc");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].text == "a");
  CHECK(lines[1].number == 2);
  CHECK(lines[2].text.empty());
  CHECK(lines[3].text == "c");
  CHECK(split_lines("x\n").size() == 1);
}
