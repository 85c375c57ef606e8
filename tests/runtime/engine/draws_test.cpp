// The table of collected draws: a missing cell and a NaN draw stay distinct in the values, the CSV and truncation.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "runtime/core/csv.hpp"
#include "runtime/engine/draws.hpp"

namespace vnt::draws_tests {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST_CASE("a NaN draw is a value: written as nan, kept by present(), not dropped by truncate") {
  Draws d;
  d.add_row({{"a", 1.5}});
  d.add_row({{"a", kNaN}, {"b", -kNaN}});  // -nan too, as inf - inf gives
  d.add_row({{"b", 2.0}});
  REQUIRE(d.columns() == std::vector<std::string>{"a", "b"});
  CHECK(d.has(0, 1));
  CHECK(!d.has(0, 2));
  CHECK(!d.has(1, 0));
  CHECK(d.present(0).size() == 2);
  CHECK(std::isnan(d.present(0)[1]));
  CHECK(d.present(1).size() == 2);
  std::ostringstream csv;
  d.write_csv(csv);
  CHECK(csv.str() == "a,b\n1.5,\nnan,nan\n,2\n");

  // The rows before the first value of b hold no value of it, but a NaN in a kept row is a value.
  d.truncate(2);
  REQUIRE(d.columns() == std::vector<std::string>{"a", "b"});
  CHECK(d.present(1).size() == 1);
  d.truncate(1);
  CHECK(d.columns() == std::vector<std::string>{"a"});
  d.add_row({{"c", kNaN}});
  std::ostringstream after;
  d.write_csv(after);
  CHECK(after.str() == "a,c\n1.5,\n,nan\n");
}

TEST_CASE("a column name with a line break is quoted, a lone CR too: the CSV reads back with one header line") {
  // A collect expression spread over lines is named by its source text, line breaks included, and a .vnt file
  // may end its lines in a lone CR (docs/language.md). Unquoted, "(+ x\r 1)" split the header line in two.
  Draws d;
  d.add_row({{"(+ x\r 1)", 1}, {"(+ x\r\n 2)", 2}, {"(+ x\n 3)", 3}, {"y", 4}});
  std::ostringstream csv;
  d.write_csv(csv);
  CHECK(csv.str() == "\"(+ x\r 1)\",\"(+ x\r\n 2)\",\"(+ x\n 3)\",y\n1,2,3,4\n");
  CsvTable t = parse_csv_numeric(csv.str(), "draws.csv", true);
  CHECK(t.header == std::vector<std::string>{"(+ x\r 1)", "(+ x\r\n 2)", "(+ x\n 3)", "y"});
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0] == std::vector<double>{1, 2, 3, 4});
}

}  // namespace
}  // namespace vnt::draws_tests
