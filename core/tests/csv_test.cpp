// Unit tests for the CSV writer (quoting, number formats, round-trip) and the line splitter.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "commsim/core/csv.hpp"

using namespace commsim;

TEST_CASE("csv: a field is quoted only when it needs it") {
  CHECK(csv_quote("") == "");
  CHECK(csv_quote("plain") == "plain");
  CHECK(csv_quote("0 1 2") == "0 1 2");  // inner spaces need nothing
  CHECK(csv_quote("a,b") == "\"a,b\"");
  CHECK(csv_quote("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_quote("two\nlines") == "\"two\nlines\"");
  CHECK(csv_quote("cr\r") == "\"cr\r\"");
  CHECK(csv_quote(" leading") == "\" leading\"");
  CHECK(csv_quote("trailing ") == "\"trailing \"");
  CHECK(csv_quote("\ttab") == "\"\ttab\"");
  CHECK(csv_quote("\"") == "\"\"\"\"");
}

TEST_CASE("csv: rows, headers and field types") {
  CsvWriter w;
  w.header({"name", "n", "t", "ok"});
  w.row(std::string("a,b"), 42, 1.5, true);
  w.row("x", std::uint64_t{18446744073709551615ULL}, -0.25, false);
  w.field(std::int64_t{-7}).raw("0x1f").field(std::string_view("")).end_row();
  CHECK(w.str() ==
        "name,n,t,ok\n"
        "\"a,b\",42,1.5,1\n"
        "x,18446744073709551615,-0.25,0\n"
        "-7,0x1f,\n");
}

TEST_CASE("csv: General at 6 digits is std::ostream's number format") {
  const CsvOptions general{CsvDoubles::General, 6};
  for (double v : {0.0, 1.0, -2.5, 1.0 / 3, 123456.7, 1234567.0, 1e-7, 6.02e23, 100.0, 0.1 + 0.2}) {
    std::ostringstream os;
    os << v;
    CHECK(csv_number(v, general) == os.str());
  }
  CHECK(csv_number(std::numeric_limits<double>::infinity(), general) == "inf");
  CHECK(csv_number(1.0 / 3, {CsvDoubles::General, 3}) == "0.333");
  CHECK(csv_number(2.5, {CsvDoubles::Fixed, 6}) == "2.500000");
  CHECK(csv_number(1763828812.25, {CsvDoubles::Fixed, 6}) == "1763828812.250000");
}

TEST_CASE("csv: the default is round-trip, never 6 digits") {
  CHECK(csv_number(1074090.5) == "1074090.5");
  CHECK(csv_number(0.1 + 0.2) == "0.30000000000000004");
  CsvWriter w;
  w.row(1.0 / 3, 1074090.5);
  CHECK(w.str() == "0.3333333333333333,1074090.5\n");
}

TEST_CASE("csv: a missing number (NaN) is an empty cell in every format, never \"nan\"") {
  for (const CsvDoubles d : {CsvDoubles::RoundTrip, CsvDoubles::Fixed, CsvDoubles::General}) {
    CHECK(csv_number(std::nan(""), CsvOptions{d}).empty());
  }
  CsvWriter w;
  w.row(1.5, std::nan(""), 2.5);
  CHECK(w.str() == "1.5,,2.5\n");
}

TEST_CASE("csv: round-trip numbers read back exactly") {
  const CsvOptions exact{CsvDoubles::RoundTrip};
  CHECK(csv_number(0.1, exact) == "0.1");
  CHECK(csv_number(1.0 / 3, exact) == "0.3333333333333333");
  CHECK(csv_number(1e300, exact) == "1e+300");
  CHECK(csv_number(3.0, exact) == "3");
  for (double v : {0.1 + 0.2, 1.0 / 3, 2.0 / 3 * 1e-9, 123456.789012345678, 5e-324, 1.7976931348623157e308,
                   -42.125, 3.14159265358979}) {
    const std::string text = csv_number(v, exact);
    CHECK(std::strtod(text.c_str(), nullptr) == v);
    const std::string g17 = csv_number(v, {CsvDoubles::General, 17});  // "%.17g" round-trips too
    CHECK(std::strtod(g17.c_str(), nullptr) == v);
  }
  CsvWriter w(exact);
  w.row(0.1 + 0.2);
  CHECK(w.str() == "0.30000000000000004\n");
}

TEST_CASE("csv: split reads back what the writer quotes") {
  CsvWriter w;
  w.row("a,b", "say \"hi\"", " pad ", "", "plain");
  std::string line = w.str();
  line.pop_back();
  const auto f = csv_split(line);
  REQUIRE(f.size() == 5);
  CHECK(f[0] == "a,b");
  CHECK(f[1] == "say \"hi\"");
  CHECK(f[2] == " pad ");
  CHECK(f[3] == "");
  CHECK(f[4] == "plain");
  CHECK(csv_split("gpus\tuser_s", '\t') == std::vector<std::string>{"gpus", "user_s"});
  CHECK(csv_split("") == std::vector<std::string>{""});
}
