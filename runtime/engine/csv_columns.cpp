// Finding observe_csv's value columns (by name or index) in a table, and splitting each row by them.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/csv_columns.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"

namespace vnt {

namespace {

/// The table's column that `c` names.
size_t find_column(const CsvColumn& c, const CsvTable& table, const std::string& path, size_t width,
                   const SourceSpan& at) {
  if (c.index >= 0) {
    const auto col = static_cast<size_t>(c.index);
    if (col >= width)
      raise_at(at, ErrorKind::kIo, "observe_csv: column {} is out of range: '{}' has {} columns", col, path, width);
    return col;
  }
  // By name, even an empty one ("" names an empty header cell, not column -1).
  auto it = std::find(table.header.begin(), table.header.end(), c.name);
  if (it == table.header.end())
    raise_at(at, ErrorKind::kIo, "observe_csv: '{}' has no column named '{}'", path, c.name);
  if (std::find(it + 1, table.header.end(), c.name) != table.header.end())  // which one was meant?
    raise_at(at, ErrorKind::kIo, "observe_csv: '{}' has two columns named '{}'", path, c.name);
  return static_cast<size_t>(it - table.header.begin());
}

}  // namespace

CsvColumns::CsvColumns(const Directive& d, const CsvTable& table, const std::string& path) : list_(d.column_list) {
  VNT_ASSERT(!d.columns.empty(), "observe_csv without a value column");  // analyze_directive gives one at least
  const size_t width = table.rows.empty() ? table.header.size() : table.rows[0].size();
  is_value_.assign(width, false);
  for (const CsvColumn& c : d.columns) {
    // A column of a list is pointed at itself: the directive may name several.
    const SourceSpan& at = list_ ? c.span : d.span;
    const size_t col = find_column(c, table, path, width, at);
    if (is_value_[col]) {  // by the same name or index, or by a name and by its index
      if (table.header.empty())
        raise_at(at, ErrorKind::kIo, "observe_csv: column {} is given twice in the value columns", col);
      raise_at(at, ErrorKind::kIo, "observe_csv: column {} ('{}') is given twice in the value columns", col,
               table.header[col]);
    }
    is_value_[col] = true;
    value_.push_back(col);
  }
}

Value CsvColumns::value(const std::vector<double>& row) const {
  if (!list_) return row[value_[0]];
  Eigen::VectorXd v(static_cast<Eigen::Index>(value_.size()));
  for (size_t k = 0; k < value_.size(); ++k) v[static_cast<Eigen::Index>(k)] = row[value_[k]];
  return make_vector(std::move(v));
}

void CsvColumns::rest(const std::vector<double>& row, std::vector<double>& out) const {
  out.clear();
  for (size_t j = 0; j < row.size(); ++j)
    if (!is_value_[j]) out.push_back(row[j]);
}

}  // namespace vnt
