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

TEST_CASE("text: html_escape escapes markup and both quotes") {
  CHECK(html_escape("<script>alert('x') & \"y\"</script>") ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  CHECK(html_escape("plain 0,1 -> 2") == "plain 0,1 -&gt; 2");
  CHECK(html_escape("") == "");
}

TEST_CASE("text: join puts the separator between each two parts") {
  CHECK(join({}, ", ") == "");
  CHECK(join({"a"}, ", ") == "a");
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join({"NCCL_ALGO=Ring", "NCCL_PROTO=LL"}, " ") == "NCCL_ALGO=Ring NCCL_PROTO=LL");
}
