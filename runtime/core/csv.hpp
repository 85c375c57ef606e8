// A small CSV reader and writer for numeric tables (data sets, MCMC draws).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace vnt {

/// A numeric table: column names (empty without a header) and rows of equal width.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  std::vector<size_t> lines;  // the 1-based line where each row starts (blank lines and quoted breaks count)
};

/// Writes a header line (skipped if `header` is empty) and one line per row, '\n'-terminated.
/// Names containing a comma, quote, line break or edge whitespace (and empty names) are quoted, with
/// '"' doubled. Numbers are printed shortest-round-trip (fmt "{}"; "nan", "inf", "-inf").
/// Throws kDomain if a row's width differs from the header's (or the first row's), kIo if the
/// stream fails.
void write_csv(std::ostream& os, const std::vector<std::string>& header,
               const std::vector<std::vector<double>>& rows);

/// One name as write_csv writes it in a header: quoted as described there when it needs to be, else as it is.
std::string csv_header_cell(const std::string& name);

/// Parses CSV text whose cells are all numbers (the first record being names if `has_header`).
/// Accepts '\n', "\r\n" and a lone '\r' (old Mac spreadsheets) as line breaks, a missing or extra final
/// newline, blank lines (skipped), spaces around cells, RFC 4180 quoting, a leading '+', and nan/inf. Every row
/// must have as many cells as the header (or the first row). `name` prefixes error messages, which are kIo
/// errors of the form "name:line:col: expected a number in column 2 ('x1'), found 'abc'" (line and col of the
/// cell, 1-based, col in characters; column 2 is the cell's index, with its header name if there is a header),
/// "name:line: expected 51 columns, found 50" or "name: empty file" (no record at all).
CsvTable parse_csv_numeric(std::string_view text, const std::string& name, bool has_header);

/// Whether the first record that is not blank has a cell that is not a number, so it reads as a header (names
/// such as `y,x1` or `n,e`; `1e-3,nan,inf` is a row of data). A malformed quoted cell there throws kIo, naming
/// `name` as parse_csv_numeric does.
bool csv_has_header(std::string_view text, const std::string& name);

/// Whether the text has a record that is not blank (without one, parse_csv_numeric throws "name: empty file").
/// A malformed quoted cell in the first record throws kIo, as for csv_has_header.
bool csv_has_records(std::string_view text, const std::string& name);

/// Reads the file at `path` in one go and parses it as above, naming it `path` in messages.
/// Throws kIo: "cannot open 'path': <reason>", "cannot read 'path': <reason>", or a parse error.
CsvTable read_csv_numeric(const std::string& path, bool has_header);

}  // namespace vnt
