// Collected draws and their CSV form.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/draws.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace vnt {

void Draws::add_row(const std::vector<std::pair<std::string, double>>& cells) {
  constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [name, v] : cells) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, columns_.size()).first;
      columns_.push_back(name);
      data_.emplace_back(rows_, kMissing);
    }
  }
  for (auto& col : data_) col.push_back(kMissing);
  for (const auto& [name, v] : cells) data_[index_[name]].back() = v;
  ++rows_;
}

void Draws::truncate(size_t rows) {
  if (rows >= rows_) return;
  for (auto& col : data_) col.resize(rows);
  rows_ = rows;
  size_t keep = 0;
  for (size_t c = 0; c < columns_.size(); ++c) {
    bool any = false;
    for (double v : data_[c]) any |= !std::isnan(v);
    if (!any) continue;
    columns_[keep] = columns_[c];
    data_[keep++] = std::move(data_[c]);
  }
  columns_.resize(keep);
  data_.resize(keep);
  index_.clear();
  for (size_t c = 0; c < columns_.size(); ++c) index_[columns_[c]] = c;
}

std::vector<double> Draws::present(size_t i) const {
  std::vector<double> out;
  for (double v : data_[i])
    if (!std::isnan(v)) out.push_back(v);
  return out;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void Draws::write_csv(std::ostream& out) const {
  for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "," : "") << csv_field(columns_[c]);
  out << '\n';
  for (size_t r = 0; r < rows_; ++r) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) out << ',';
      double v = data_[c][r];
      if (!std::isnan(v)) out << fmt::format("{}", v);
    }
    out << '\n';
  }
}

}  // namespace vnt
