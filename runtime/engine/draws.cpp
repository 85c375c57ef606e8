// Collected draws and their CSV form.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/draws.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/core/csv.hpp"

namespace vnt {

void Draws::add_row(const std::vector<std::pair<std::string, double>>& cells) {
  constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [name, v] : cells) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, columns_.size()).first;
      columns_.push_back(name);
      data_.emplace_back(rows_, kMissing);
      filled_.emplace_back(rows_, false);
    }
  }
  for (auto& col : data_) col.push_back(kMissing);
  for (auto& col : filled_) col.push_back(false);
  for (const auto& [name, v] : cells) {
    const size_t c = index_[name];
    data_[c].back() = v;
    filled_[c].back() = true;
  }
  ++rows_;
}

void Draws::truncate(size_t rows) {
  if (rows >= rows_) return;
  for (auto& col : data_) col.resize(rows);
  for (auto& col : filled_) col.resize(rows);
  rows_ = rows;
  size_t keep = 0;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (std::find(filled_[c].begin(), filled_[c].end(), true) == filled_[c].end()) continue;
    if (keep != c) {  // a vector moved onto itself may come out empty
      columns_[keep] = std::move(columns_[c]);
      filled_[keep] = std::move(filled_[c]);
      data_[keep] = std::move(data_[c]);
    }
    ++keep;
  }
  columns_.resize(keep);
  data_.resize(keep);
  filled_.resize(keep);
  index_.clear();
  for (size_t c = 0; c < columns_.size(); ++c) index_[columns_[c]] = c;
}

std::vector<double> Draws::present(size_t i) const {
  std::vector<double> out;
  for (size_t r = 0; r < rows_; ++r)
    if (filled_[i][r]) out.push_back(data_[i][r]);
  return out;
}

void Draws::write_csv(std::ostream& out) const {
  if (columns_.empty()) return;
  for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "," : "") << csv_header_cell(columns_[c]);
  out << '\n';
  for (size_t r = 0; r < rows_; ++r) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) out << ',';
      if (!filled_[c][r]) continue;
      // "nan" whatever the sign bit (inf - inf gives -nan), as values print; read back as NaN by csv.hpp.
      const double v = data_[c][r];
      out << (std::isnan(v) ? std::string("nan") : fmt::format("{}", v));
    }
    out << '\n';
  }
}

}  // namespace vnt
