// CSV writer/reader: round trip, tolerated variants, and the exact error messages.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/csv.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/core/error.hpp"

namespace vnt::csv_tests {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() / fmt::format("vnt_csv_test_{}_{}", ::getpid(), counter++);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` byte for byte to a file in the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The message of the kIo error that reading `path` raises ("" if none).
std::string read_error(const std::string& path, bool has_header = true) {
  try {
    read_csv_numeric(path, has_header);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
    return e.message();
  }
  return "";
}

TEST_CASE("write_csv then read_csv_numeric round-trips names and values exactly") {
  const std::vector<std::string> header = {"x", "a,b", "say \"hi\"", " padded", ""};
  const std::vector<std::vector<double>> rows = {
      {0.1, 1e300, std::numeric_limits<double>::denorm_min(), -0.0, 123456789.123456789},
      {-1.0 / 3.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
       std::nan(""), 2},
  };
  std::ostringstream out;
  write_csv(out, header, rows);
  CHECK(out.str() ==
        "x,\"a,b\",\"say \"\"hi\"\"\",\" padded\",\"\"\n"
        "0.1,1e+300,5e-324,-0,123456789.12345679\n"
        "-0.3333333333333333,inf,-inf,nan,2\n");

  TempDir dir;
  const CsvTable t = read_csv_numeric(dir.write("draws.csv", out.str()), true);
  CHECK(t.header == header);
  REQUIRE(t.rows.size() == 2);
  for (size_t j = 0; j < 5; ++j) {
    CHECK(t.rows[0][j] == rows[0][j]);
    CHECK(std::signbit(t.rows[0][j]) == std::signbit(rows[0][j]));
  }
  CHECK(t.rows[1][0] == rows[1][0]);
  CHECK(t.rows[1][1] == rows[1][1]);
  CHECK(t.rows[1][2] == rows[1][2]);
  CHECK(std::isnan(t.rows[1][3]));
}

TEST_CASE("write_csv rejects a ragged row") {
  std::ostringstream out;
  try {
    write_csv(out, {"a", "b"}, {{1, 2}, {3}});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kDomain);
    CHECK(e.message() == "write_csv: row 2 has 1 values, expected 2");
  }
}

TEST_CASE("read_csv_numeric tolerates CRLF, blank lines, spaces, quotes and no final newline") {
  TempDir dir;
  const CsvTable crlf = read_csv_numeric(dir.write("crlf.csv", "a,b\r\n1,2\r\n\r\n3 , +4.5e1\r\n"), true);
  CHECK(crlf.header == std::vector<std::string>{"a", "b"});
  CHECK(crlf.rows == std::vector<std::vector<double>>{{1, 2}, {3, 45}});

  // Lines that end in a lone CR (old Mac spreadsheets) are lines: such a file was read as one line.
  const CsvTable cr = read_csv_numeric(dir.write("cr.csv", "a,\"b\"\r1,2\r\r\"3\" , 4\r"), true);
  CHECK(cr.header == std::vector<std::string>{"a", "b"});
  CHECK(cr.rows == std::vector<std::vector<double>>{{1, 2}, {3, 4}});
  CHECK(cr.lines == std::vector<size_t>{2, 4});

  const CsvTable bare = read_csv_numeric(dir.write("bare.csv", "1,\"2\"\n-3,4"), false);
  CHECK(bare.header.empty());
  CHECK(bare.rows == std::vector<std::vector<double>>{{1, 2}, {-3, 4}});

  const CsvTable multiline = read_csv_numeric(dir.write("ml.csv", "\"two\nlines\",b\n1,2\n"), true);
  CHECK(multiline.header == std::vector<std::string>{"two\nlines", "b"});
  CHECK(multiline.rows.size() == 1);

  // A UTF-8 byte order mark is skipped: the header's first name is "y", and a first row of numbers is data.
  const std::string bom = "\xEF\xBB\xBF";
  const std::string bom_header = dir.write("bom.csv", bom + "y,x\n1,2\n");
  CHECK(csv_has_header(bom + "y,x\n1,2\n", bom_header));
  CHECK(read_csv_numeric(bom_header, true).header == std::vector<std::string>{"y", "x"});
  CHECK(!csv_has_header(bom + "1,2\n", "bom_data.csv"));
  CHECK(read_csv_numeric(dir.write("bom_data.csv", bom + "1,2\n"), false).rows ==
        std::vector<std::vector<double>>{{1, 2}});

  const CsvTable header_only = read_csv_numeric(dir.write("h.csv", "a,b\n"), true);
  CHECK(header_only.header.size() == 2);
  CHECK(header_only.rows.empty());
}

TEST_CASE("read_csv_numeric reads a number too small for a double as 0, as a literal is read") {
  TempDir dir;
  const CsvTable t = read_csv_numeric(dir.write("small.csv", "1e-400,-1e-400,4.9e-324,+1e-400\n"), false);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0] == std::vector<double>{0, 0, std::numeric_limits<double>::denorm_min(), 0});
  CHECK(std::signbit(t.rows[0][1]));  // -0, as the literal -1e-400 is
  CHECK(!csv_has_header("1e-400,2\n", "small.csv"));
}

TEST_CASE("csv_has_records: a header or a row is a record, blank lines and a byte order mark are not") {
  CHECK(csv_has_records("a,b\n", "h.csv"));
  CHECK(csv_has_records("\n\n1,2", "d.csv"));
  CHECK(!csv_has_records("", "e.csv"));
  CHECK(!csv_has_records("\n  \r\n\n", "b.csv"));
  CHECK(!csv_has_records("\xEF\xBB\xBF\n", "bom.csv"));
}

TEST_CASE("read_csv_numeric error messages") {
  TempDir dir;
  const std::string missing = dir.path("x.csv");
  CHECK(read_error(missing) == fmt::format("cannot read '{}': No such file or directory", missing));
  CHECK(read_error(dir.path("")) == fmt::format("cannot read '{}': Is a directory", dir.path("")));

  std::string p = dir.write("data.csv", "a,b\n1,2\n3,abc\n");
  CHECK(read_error(p) == p + ":3:3: expected a number in column 2 ('b'), found 'abc'");
  p = dir.write("data.csv", "a,b\r\n1,2\r\n3,abc\r\n");
  CHECK(read_error(p) == p + ":3:3: expected a number in column 2 ('b'), found 'abc'");
  p = dir.write("data.csv", "a,b\r1,2\r3,abc\r");
  CHECK(read_error(p) == p + ":3:3: expected a number in column 2 ('b'), found 'abc'");
  p = dir.write("data.csv", "\"x\ry\",b\r\r1,abc\r");  // a CR inside a quoted cell is a line too
  CHECK(read_error(p) == p + ":4:3: expected a number in column 2 ('b'), found 'abc'");
  p = dir.write("data.csv", "1,2\n,3\n");
  CHECK(read_error(p, false) == p + ":2:1: expected a number in column 1, found an empty cell");
  p = dir.write("data.csv", "1,2\n1e999,3\n");
  CHECK(read_error(p, false) == p + ":2:1: number '1e999' in column 1 is out of range");
  p = dir.write("data.csv", "1,2\n-1e999,3\n");
  CHECK(read_error(p, false) == p + ":2:1: number '-1e999' in column 1 is out of range");
  // The col is where the cell starts, in characters: past blanks, at its quote, after a quoted line break in the
  // same record, not counting a byte order mark.
  p = dir.write("data.csv", "a,bb,c\n1,  2 ,\t x\n");
  CHECK(read_error(p) == p + ":2:10: expected a number in column 3 ('c'), found 'x'");
  p = dir.write("data.csv", "1,2\n3,\"x\"\n");
  CHECK(read_error(p, false) == p + ":2:3: expected a number in column 2, found 'x'");
  p = dir.write("data.csv", "\"a\nb\",c\n1,\n");
  CHECK(read_error(p) == p + ":3:3: expected a number in column 2 ('c'), found an empty cell");
  p = dir.write("data.csv", "\"a\nb\" x,c\n");
  CHECK(read_error(p) == p + ":2:4: unexpected 'x' after the quoted cell in column 1");
  p = dir.write("data.csv", "\xEF\xBB\xBF" "1,x\n");
  CHECK(read_error(p, false) == p + ":1:3: expected a number in column 2, found 'x'");
  p = dir.write("data.csv", "a,b\n1,2\n\n3,4,5\n");
  CHECK(read_error(p) == p + ":4: expected 2 columns, found 3");
  p = dir.write("data.csv", "1,\"2\n");
  CHECK(read_error(p, false) == p + ":1:3: unterminated quoted cell in column 2");
  p = dir.write("data.csv", "\"1\"x,2\n");
  CHECK(read_error(p, false) == p + ":1:4: unexpected 'x' after the quoted cell in column 1");
  p = dir.write("data.csv", "\"\xC3\xA9\" \xC3\xA9,2\n");  // characters, not bytes
  CHECK(read_error(p) == p + ":1:5: unexpected '\xC3\xA9' after the quoted cell in column 1");
  p = dir.write("empty.csv", "");
  CHECK(read_error(p) == p + ": empty file");
  p = dir.write("blank.csv", "\n\r\n");
  CHECK(read_error(p, false) == p + ": empty file");

  std::string wide = "y";
  std::string row = "1";
  for (int j = 1; j <= 50; ++j) wide += fmt::format(",x{}", j);
  for (int j = 1; j < 50; ++j) row += ",0.5";
  p = dir.write("wide.csv", fmt::format("{}\n{}\n{},0.5\n{}\n", wide, row + ",0.5", row, row));
  CHECK(read_error(p) == p + ":4: expected 51 columns, found 50");
}

TEST_CASE("read_csv_numeric reads the MNIST 7-vs-9 training set") {
  const std::string path = "/work/shared/data/mnist79/train.csv";
  if (!fs::exists(path)) {
    MESSAGE("skipped: " << path << " is not present");
    return;
  }
  const CsvTable t = read_csv_numeric(path, true);
  REQUIRE(t.header.size() == 51);
  CHECK(t.header.front() == "y");
  CHECK(t.header.back() == "x50");
  CHECK(t.rows.size() == 1740);
  size_t nines = 0;
  for (const auto& r : t.rows) nines += r[0] == 1.0;
  CHECK(nines == 831);
}

}  // namespace
}  // namespace vnt::csv_tests
