// Unit tests for binary detection, line splitting, atomic writes and escaping for HTML, Markdown and the
// shell.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
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

TEST_CASE("text: join_ints writes integers with the separator between each two") {
  CHECK(join_ints({}, " ") == "");
  CHECK(join_ints({3}, ",") == "3");
  CHECK(join_ints({0, 1, 12}, " ") == "0 1 12");
}

TEST_CASE("text: shell_quote keeps plain words and makes everything else one literal word") {
  CHECK(shell_quote("validation/data/h200x4/p2p_all") == "validation/data/h200x4/p2p_all");
  CHECK(shell_quote("NCCL_PROTO=Simple") == "NCCL_PROTO=Simple");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("m;touch PWNED;x") == "'m;touch PWNED;x'");
  CHECK(shell_quote("a'b") == "'a'\\''b'");
  CHECK(shell_quote("$(touch x)`id`") == "'$(touch x)`id`'");
  CHECK(shell_quote("fitted on p2p; rest held out") == "'fitted on p2p; rest held out'");
}

TEST_CASE("text: markdown_escape leaves ordinary text alone and lets no HTML, cell end or link through") {
  CHECK(markdown_escape("p2p 0->1 batched") == "p2p 0->1 batched");
  CHECK(markdown_escape("<script>alert(1)</script>") == "&lt;script>alert(1)&lt;/script>");
  CHECK(markdown_escape("a|b") == "a\\|b");
  CHECK(markdown_escape("a\\|b") == "a\\\\\\|b");
  CHECK(markdown_escape("[x](javascript:y)") == "\\[x\\](javascript:y)");
  CHECK(markdown_escape("line\n\n<b>") == "line  &lt;b>");
}

TEST_CASE("text: Markdown code spans and blocks cannot be closed by their contents") {
  CHECK(markdown_code_span("a.topo") == "`a.topo`");
  CHECK(markdown_code_span("a`b") == "``a`b``");
  CHECK(markdown_code_span("`x") == "`` `x ``");
  CHECK(markdown_code_span("a\n\nb") == "`a  b`");
  CHECK(markdown_code_span("a\n\n<b>") == "a  &lt;b>");
  CHECK(markdown_code_block("cmd") == "```\ncmd\n```\n");
  CHECK(markdown_code_block("cmd", "sh") == "```sh\ncmd\n```\n");
  CHECK(markdown_code_block("x\n```\n<script>") == "````\nx\n```\n<script>\n````\n");
}

TEST_CASE("text: write_file_atomic replaces a file, names a directory target and leaves no temporary") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("commsim-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  const std::string file = (dir / "out.txt").string();
  write_file_atomic(file, "one");
  write_file_atomic(file, "two");
  CHECK(read_file(file) == "two");
  CHECK_THROWS_WITH_AS(write_file_atomic((dir / "sub").string(), "x"), doctest::Contains("is a directory"),
                       IoError);
  CHECK_THROWS_WITH_AS(write_file_atomic((dir / "missing" / "f").string(), "x"),
                       doctest::Contains("No such file or directory"), IoError);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);  // out.txt and sub: no temporary left behind
  fs::remove_all(dir);
}

TEST_CASE("text: read_file refuses devices, FIFOs, directories and files over the documented size") {
  namespace fs = std::filesystem;
  CHECK_THROWS_WITH_AS(read_file("/dev/urandom"), doctest::Contains("is a character device"), IoError);
  CHECK_THROWS_WITH_AS(read_file("/dev/null"), doctest::Contains("regular files"), IoError);
  const fs::path dir = fs::temp_directory_path() / ("commsim-read-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS(read_file(dir.string()), doctest::Contains("is a directory"), IoError);
  // A FIFO with no writer: refused at once, not waited on.
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(read_file(fifo), doctest::Contains("is a FIFO"), IoError);
  // One byte over the limit (a sparse file: nothing is written) is refused before reading; at the limit it
  // is read.
  const std::string big = (dir / "big.txt").string();
  write_file_atomic(big, "x");
  fs::resize_file(big, kMaxInputFileBytes + 1);
  CHECK_THROWS_WITH_AS(read_file(big), doctest::Contains("larger than the largest input file"), IoError);
  fs::resize_file(big, kMaxInputFileBytes);
  CHECK(read_file(big).size() == kMaxInputFileBytes);
  CHECK_THROWS_WITH_AS(read_file((dir / "missing").string()), doctest::Contains("cannot open"), IoError);
  fs::remove_all(dir);
}
