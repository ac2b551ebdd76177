// Tests of the known-hazards table: the embedded file parses, cites evidence that exists, and bad entries are
// refused.
#include "hazards.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "commsim/core/error.hpp"

using namespace commsim;
using namespace commsim::cli;

TEST_CASE("hazards: the embedded table parses and its evidence paths exist in the repository") {
  const auto& hazards = known_hazards();
  REQUIRE(hazards.size() >= 2);
  bool hang = false, disagrees = false;
  for (const Hazard& h : hazards) {
    hang = hang || (h.kind == "hang" && h.mode == "overlapped" && h.schedule == "interleaved" &&
                    h.hung_from == (64ULL << 20) && h.ok_up_to == (4ULL << 20));
    disagrees = disagrees || (h.kind == "disagrees" && h.faster == "overlapped" && h.than == "batched");
    // The first path the evidence names is committed.
    const std::string first = h.evidence.substr(0, h.evidence.find(' '));
    CHECK_MESSAGE(std::filesystem::exists(std::filesystem::path(COMMSIM_SOURCE_DIR) / first), first);
  }
  CHECK(hang);
  CHECK(disagrees);
}

TEST_CASE("hazards: an unknown kind is refused with file, line and column") {
  const std::string text =
      "[[hazard]]\nid = \"x\"\nkind = \"slow\"\nworkload = \"pipeline\"\nmeasured_on = \"m\"\nevidence = "
      "\"e\"\n"
      "text = \"t\"\n";
  try {
    parse_hazards(text, "h.toml");
    FAIL("accepted an unknown kind");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("h.toml:3:") != std::string::npos);
    CHECK(std::string(e.what()).find("must be \"hang\" or \"disagrees\"") != std::string::npos);
  }
}

TEST_CASE("hazards: a hang whose completed size is not below its hung size is refused") {
  const std::string text =
      "[[hazard]]\nid = \"x\"\nkind = \"hang\"\nworkload = \"pipeline\"\nmode = \"overlapped\"\n"
      "hung_from = \"4MiB\"\nok_up_to = \"64MiB\"\nmeasured_on = \"m\"\nevidence = \"e\"\ntext = \"t\"\n";
  CHECK_THROWS_AS(parse_hazards(text, "h.toml"), InputError);
}

TEST_CASE("hazards: an unknown key is refused") {
  const std::string text =
      "[[hazard]]\nid = \"x\"\nkind = \"disagrees\"\nworkload = \"pipeline\"\nfaster = \"a\"\nthan = \"b\"\n"
      "measured_on = \"m\"\nevidence = \"e\"\ntext = \"t\"\nseverity = 3\n";
  CHECK_THROWS_AS(parse_hazards(text, "h.toml"), InputError);
}
