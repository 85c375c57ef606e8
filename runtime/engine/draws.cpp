// Collected draws and their CSV form.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/draws.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "runtime/core/csv.hpp"
#include "runtime/core/make_room.hpp"

namespace vnt {

void Draws::add_row(const std::vector<std::pair<std::string, double>>& cells) {
  // What allocates comes before anything changes: out of memory leaves the draws as they were.
  constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
  std::vector<size_t> column(cells.size());
  std::vector<std::string> added;  // names not seen before, in order: columns_.size() + k
  std::unordered_map<std::string_view, size_t> added_at;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string& name = cells[i].first;
    if (auto it = index_.find(name); it != index_.end()) {
      column[i] = it->second;
      continue;
    }
    auto [at, fresh] = added_at.try_emplace(name, columns_.size() + added.size());
    if (fresh) added.push_back(name);
    column[i] = at->second;
  }
  const size_t total = columns_.size() + added.size();
  std::vector<std::vector<double>> new_data(added.size());
  std::vector<std::vector<bool>> new_filled(added.size());
  for (size_t k = 0; k < added.size(); ++k) {
    new_data[k].reserve(rows_ + 1);
    new_data[k].assign(rows_, kMissing);
    new_filled[k].reserve(rows_ + 1);
    new_filled[k].assign(rows_, false);
  }
  columns_.reserve(total);
  data_.reserve(total);
  filled_.reserve(total);
  for (auto& col : data_) make_room(col);
  for (auto& col : filled_) make_room(col);
  size_t indexed = 0;
  try {
    for (; indexed < added.size(); ++indexed) index_.emplace(added[indexed], columns_.size() + indexed);
  } catch (...) {
    while (indexed > 0) index_.erase(added[--indexed]);
    throw;
  }
  for (size_t k = 0; k < added.size(); ++k) {
    columns_.push_back(std::move(added[k]));
    data_.push_back(std::move(new_data[k]));
    filled_.push_back(std::move(new_filled[k]));
  }
  for (auto& col : data_) col.push_back(kMissing);
  for (auto& col : filled_) col.push_back(false);
  for (size_t i = 0; i < cells.size(); ++i) {
    data_[column[i]].back() = cells[i].second;
    filled_[column[i]].back() = true;
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
