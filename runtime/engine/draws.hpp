// The run's draws: rows appended by (collect ...), one column per collected expression (vectors expand).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vnt {

/// A cell is missing (the row collected nothing for its column) or holds a value, which may itself be NaN.
class Draws {
 public:
  /// Appends one row; columns not seen before are added (earlier rows get empty cells).
  void add_row(const std::vector<std::pair<std::string, double>>& cells);
  /// Drops the rows after the first `rows` (columns that then have no value are dropped too).
  void truncate(size_t rows);

  size_t rows() const { return rows_; }
  const std::vector<std::string>& columns() const { return columns_; }
  /// The values of a column (NaN where a row had no cell for it, as well as for a NaN draw).
  const std::vector<double>& column(size_t i) const { return data_[i]; }
  /// Whether row `row` has a value in column `i`.
  bool has(size_t i, size_t row) const { return filled_[i][row]; }
  /// The values of a column in the rows that have one, NaN draws included.
  std::vector<double> present(size_t i) const;

  /// A header line, then one line per row: empty where a row has no value, "nan" for a NaN draw. Nothing at all
  /// without columns (nothing collected, or only empty vectors): a CSV line cannot hold a row of no values.
  void write_csv(std::ostream& out) const;

 private:
  std::vector<std::string> columns_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::vector<double>> data_;
  std::vector<std::vector<bool>> filled_;  // NaN cannot mark a missing cell: a collected value may be NaN
  size_t rows_ = 0;
};

}  // namespace vnt
