// CSV of numbers: a quoting-aware record scanner over the whole file, std::from_chars for the cells.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <ostream>

#include "runtime/core/error.hpp"
#include "runtime/core/read_double.hpp"
#include "runtime/core/interrupt.hpp"
#include "runtime/core/source_text.hpp"
#include "runtime/core/text_file.hpp"
#include "runtime/core/utf8.hpp"

namespace vnt {
namespace {

// Records read between two polls for an interrupt (observe_csv reads inside a directive).
constexpr size_t kRowsPerPoll = 4096;

// One cell of a record: the text between the separators (inside the quotes if quoted, where '"' is
// still doubled), trimmed of spaces and tabs if unquoted, and the line it starts on. Its column is found only
// for a message, from the offset where that line starts.
struct Cell {
  std::string_view text;
  bool quoted = false;
  size_t line = 0, line_start = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A cell as shown in a message: at most 40 characters.
std::string shown(std::string_view s) {
  return s.size() <= 40 ? std::string(s) : fmt::format("{}...", s.substr(0, 37));
}

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& name) : text_(text), name_(name) {
    // A UTF-8 byte order mark (spreadsheets write one) is not part of the first cell, nor a column.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;
  }

  /// Reads the next record into `cells`; false at the end of the text. `line()` is where it started.
  bool next(std::vector<Cell>& cells) {
    cells.clear();
    if (pos_ >= text_.size()) return false;
    record_line_ = line_;
    for (;;) {
      const bool quoted = pos_ < text_.size() && text_[pos_] == '"';
      const size_t line = line_, line_start = line_start_;  // a quoted cell may end on a later line
      cells.push_back(quoted ? quoted_cell(cells.size() + 1) : plain_cell());
      cells.back().line = line;
      cells.back().line_start = line_start;
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size()) {  // at the line break ending the record
        pos_ += line_break_size(text_.substr(pos_));
        new_line(pos_);
      }
      return true;
    }
  }

  size_t line() const { return record_line_; }

  /// "name:line:column" where `cell` starts (its opening quote, if quoted).
  std::string where(const Cell& cell) const {
    return where(cell.line, cell.line_start, static_cast<size_t>(cell.text.data() - text_.data()) - (cell.quoted ? 1 : 0));
  }

 private:
  /// "name:line:column" of offset `at` on the line that starts at `line_start`: 1-based, the column counted in
  /// characters as for .vnt text, so an editor can go there.
  std::string where(size_t line, size_t line_start, size_t at) const {
    return fmt::format("{}:{}:{}", name_, line, utf8_length(text_.substr(line_start, at - line_start)) + 1);
  }

  Cell plain_cell() {
    size_t end = pos_;  // a plain loop: find_first_of tests each character against the set
    while (end < text_.size() && text_[end] != ',' && text_[end] != '\n' && text_[end] != '\r') ++end;
    Cell cell{trim(text_.substr(pos_, end - pos_)), false};
    pos_ = end;
    return cell;
  }

  // RFC 4180: "..." with "" for a quote; may span lines. Only blanks may follow, then a comma or a line break.
  Cell quoted_cell(size_t column) {
    const size_t open_line = line_, open_line_start = line_start_;
    const size_t start = ++pos_;
    for (;;) {
      size_t q = text_.find('"', pos_);
      if (q == std::string_view::npos) {
        raise(ErrorKind::kIo, "{}: unterminated quoted cell in column {}", where(open_line, open_line_start, start - 1),
              column);
      }
      for (size_t i = pos_; i < q; ++i)  // the line breaks inside the cell, CR LF counted once
        if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 == q || text_[i + 1] != '\n'))) new_line(i + 1);
      pos_ = q + 1;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        ++pos_;
        continue;
      }
      Cell cell{text_.substr(start, q - start), true};
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
      if (pos_ < text_.size() && text_[pos_] != ',' && line_break_size(text_.substr(pos_)) == 0) {
        raise(ErrorKind::kIo, "{}: unexpected '{}' after the quoted cell in column {}", where(line_, line_start_, pos_),
              shown(text_.substr(pos_, utf8_column_size(text_.substr(pos_)))), column);
      }
      return cell;
    }
  }

  void new_line(size_t start) {
    ++line_;
    line_start_ = start;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0, line_ = 1, record_line_ = 1;
  size_t line_start_ = 0;  // where line_ starts
};

bool is_blank(const std::vector<Cell>& cells) {
  return cells.size() == 1 && !cells[0].quoted && cells[0].text.empty();
}

std::string unquote(const Cell& cell) {
  std::string out(cell.text);
  if (!cell.quoted) return out;
  size_t at = 0;
  while ((at = out.find("\"\"", at)) != std::string::npos) out.erase(at++, 1);
  return out;
}

/// Reads a whole cell as a number (read_double, after an optional '+').
std::errc read_number(std::string_view s, double& value) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  return read_double(s, value);
}

/// The number in cell `j` (0-based) of a record, or a kIo error located at the cell and naming its column
/// (by header name too, if there is a header).
double parse_number(const Cell& cell, const Scanner& scanner, size_t j, const std::vector<std::string>& header) {
  double value = 0.0;
  const std::errc ec = read_number(cell.text, value);
  if (ec == std::errc()) return value;
  const std::string at = scanner.where(cell);
  const std::string column = j < header.size() ? fmt::format("column {} ('{}')", j + 1, shown(header[j]))
                                               : fmt::format("column {}", j + 1);
  if (ec == std::errc::result_out_of_range)
    raise(ErrorKind::kIo, "{}: number '{}' in {} is out of range", at, shown(cell.text), column);
  if (cell.text.empty()) raise(ErrorKind::kIo, "{}: expected a number in {}, found an empty cell", at, column);
  raise(ErrorKind::kIo, "{}: expected a number in {}, found '{}'", at, column, shown(cell.text));
}

bool needs_quotes(const std::string& s) {
  return s.empty() || s.find_first_of(",\"\r\n") != std::string::npos || s.front() == ' ' ||
         s.front() == '\t' || s.back() == ' ' || s.back() == '\t';
}

void append_name(fmt::memory_buffer& buf, const std::string& s) {
  if (!needs_quotes(s)) {
    buf.append(s);
    return;
  }
  buf.push_back('"');
  for (char c : s) {
    if (c == '"') buf.push_back('"');
    buf.push_back(c);
  }
  buf.push_back('"');
}

}  // namespace

std::string csv_header_cell(const std::string& name) {
  fmt::memory_buffer buf;
  append_name(buf, name);
  return fmt::to_string(buf);
}

void write_csv(std::ostream& os, const std::vector<std::string>& header,
               const std::vector<std::vector<double>>& rows) {
  fmt::memory_buffer buf;
  auto flush = [&] {
    os.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.clear();
  };
  for (size_t j = 0; j < header.size(); ++j) {
    if (j > 0) buf.push_back(',');
    append_name(buf, header[j]);
  }
  if (!header.empty()) buf.push_back('\n');
  const size_t width = !header.empty() ? header.size() : rows.empty() ? 0 : rows[0].size();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != width) {
      raise(ErrorKind::kDomain, "write_csv: row {} has {} values, expected {}", i + 1, rows[i].size(), width);
    }
    for (size_t j = 0; j < width; ++j) {
      if (j > 0) buf.push_back(',');
      fmt::format_to(std::back_inserter(buf), "{}", rows[i][j]);
    }
    buf.push_back('\n');
    if (buf.size() > (1u << 16)) flush();
  }
  flush();
  if (!os) raise(ErrorKind::kIo, "write_csv: cannot write to the output stream");
}

CsvTable parse_csv_numeric(std::string_view text, const std::string& name, bool has_header) {
  CsvTable table;
  Scanner scanner(text, name);
  std::vector<Cell> cells;
  bool seen_record = false;
  size_t width = 0;
  while (scanner.next(cells)) {
    if (is_blank(cells)) continue;
    if (!seen_record) {
      seen_record = true;
      width = cells.size();
      if (has_header) {
        for (const Cell& c : cells) table.header.push_back(unquote(c));
        continue;
      }
    }
    if (cells.size() != width) {
      raise(ErrorKind::kIo, "{}:{}: expected {} columns, found {}", name, scanner.line(), width,
            cells.size());
    }
    if (table.rows.size() % kRowsPerPoll == 0) poll_interrupt();  // a file of a GB takes seconds
    table.lines.push_back(scanner.line());
    std::vector<double>& row = table.rows.emplace_back();
    row.reserve(width);
    for (size_t j = 0; j < width; ++j) row.push_back(parse_number(cells[j], scanner, j, table.header));
  }
  if (!seen_record) raise(ErrorKind::kIo, "{}: empty file", name);
  return table;
}

namespace {

// The cells of the first record that is not blank; false if there is none.
bool first_record(std::string_view text, const std::string& name, std::vector<Cell>& cells) {
  Scanner scanner(text, name);
  while (scanner.next(cells))
    if (!is_blank(cells)) return true;
  return false;
}

}  // namespace

bool csv_has_header(std::string_view text, const std::string& name) {
  std::vector<Cell> cells;
  if (!first_record(text, name, cells)) return false;
  double value = 0.0;
  return std::any_of(cells.begin(), cells.end(),
                     [&](const Cell& c) { return read_number(c.text, value) == std::errc::invalid_argument; });
}

bool csv_has_records(std::string_view text, const std::string& name) {
  std::vector<Cell> cells;
  return first_record(text, name, cells);
}

CsvTable read_csv_numeric(const std::string& path, bool has_header) {
  return parse_csv_numeric(read_text_file(path), path, has_header);
}

}  // namespace vnt
