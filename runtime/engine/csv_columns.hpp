// observe_csv's value columns found in a table: the observed value of a row, and the cells left for its procedure.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "runtime/core/csv.hpp"
#include "runtime/syntax/analyze.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

class CsvColumns {
 public:
  /// Finds the value columns of observe_csv `d` in `table`, read from `path`. Throws kIo, at the directive (at the
  /// column for one of a list), for a name the header lacks or holds twice, an index out of range, or a column that
  /// a list gives twice.
  CsvColumns(const Directive& d, const CsvTable& table, const std::string& path);

  /// Whether the value is the one cell of a column written alone (not a vector, even of one cell).
  bool scalar() const { return !list_; }
  /// The observed value of `row`: its cell of the value column, or the vector of its value columns' cells in the
  /// order written.
  Value value(const std::vector<double>& row) const;
  /// The cells of `row` outside the value columns, in file order, into `out` (cleared first).
  void rest(const std::vector<double>& row, std::vector<double>& out) const;

 private:
  std::vector<size_t> value_;   // the value columns, in the order written
  std::vector<bool> is_value_;  // per column of the table
  bool list_ = false;
};

}  // namespace vnt
