// Unit tests for OutputGuard: outputs that are inputs (through links and other spellings) are refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"

using namespace commsim;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("commsim-guard-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d / "sub");
  std::ofstream(d / "in.topo") << "GPU0\n";
  return d;
}

}  // namespace

TEST_CASE("output_guard: an output that is an input is a usage error naming both flags and the file") {
  const fs::path d = fresh_dir("same");
  OutputGuard g;
  g.input("--topology", (d / "in.topo").string());
  g.output("--out", (d / "sub" / ".." / "in.topo").string());
  CHECK_THROWS_WITH_AS(g.check(), doctest::Contains("--out"), UsageError);
  CHECK_THROWS_WITH_AS(g.check(), doctest::Contains("--topology"), UsageError);
  const std::string file = (d / "in.topo").string();
  CHECK_THROWS_WITH_AS(g.check(), doctest::Contains(file.c_str()), UsageError);
  fs::remove_all(d);
}

TEST_CASE("output_guard: symbolic and hard links to an input are the input") {
  const fs::path d = fresh_dir("links");
  fs::create_symlink(d / "in.topo", d / "sym.topo");
  fs::create_hard_link(d / "in.topo", d / "hard.topo");
  fs::create_directory_symlink(d, d / "sub" / "up");
  for (const fs::path& out : {d / "sym.topo", d / "hard.topo", d / "sub" / "up" / "in.topo"}) {
    OutputGuard g;
    g.input("--topology", (d / "in.topo").string());
    g.output("-o", out.string());
    CHECK_THROWS_AS(g.check(), UsageError);
  }
  fs::remove_all(d);
}

TEST_CASE("output_guard: files read or written inside directories, and two outputs on one file") {
  const fs::path d = fresh_dir("dirs");
  OutputGuard g;
  g.input_in("--measured", d.string(), {"results.json"});
  g.output("--out", (d / "results.json").string());
  CHECK_THROWS_WITH_AS(g.check(), doctest::Contains("--measured"), UsageError);

  OutputGuard shards;
  shards.inputs("SHARDS", {(d / "results.csv").string()});
  shards.output_in("--out", d.string(), {"results.csv", "summary.html"});
  CHECK_THROWS_AS(shards.check(), UsageError);

  OutputGuard two;
  two.output("--csv", (d / "x").string());
  two.output("--report", (d / "sub" / ".." / "x").string());
  CHECK_THROWS_WITH_AS(two.check(), doctest::Contains("same file"), UsageError);
  fs::remove_all(d);
}

TEST_CASE("output_guard: distinct paths, standard output and empty flags pass") {
  const fs::path d = fresh_dir("ok");
  OutputGuard g;
  g.input("--topology", (d / "in.topo").string());
  g.input("--params", "");
  g.output("--out", (d / "out.txt").string());
  g.output("--trace", "-");
  g.output("--csv", "");
  g.output_in("--out", (d / "new-dir").string(), {"results.csv"});
  CHECK_NOTHROW(g.check());
  fs::remove_all(d);
}

TEST_CASE("output_guard: an output directory that is a file is an I/O error") {
  const fs::path d = fresh_dir("mkdir");
  CHECK_THROWS_WITH_AS(create_output_directory("--out", (d / "in.topo").string()),
                       doctest::Contains("not a directory"), IoError);
  CHECK_NOTHROW(create_output_directory("--out", (d / "a" / "b").string()));
  CHECK(fs::is_directory(d / "a" / "b"));
  fs::remove_all(d);
}
