// Runs a .vnt program text through an Engine with a fixed seed and fetches collected columns by name.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/engine/engine.hpp"
#include "tests/support/stat_seed.hpp"

namespace vnt::test {

/// An engine that has run one program; its collected draws stay available.
class ProgramRun {
 public:
  /// Runs every directive of `text` on an Engine seeded with stat_seed(`seed`): `seed` plus the value of the
  /// environment variable VNT_STAT_SEED_OFFSET if set (stat_seed.hpp). A vnt::Error fails the test case
  /// (doctest FAIL) with the rendered diagnostic, so a broken program never reaches a statistical check.
  ProgramRun(std::string_view text, uint64_t seed, std::string name = "stat.vnt")
      : engine_(std::make_unique<Engine>(stat_seed(seed))) {
    auto file = std::make_shared<const SourceFile>(SourceFile{std::move(name), std::string(text)});
    try {
      engine_->run_source(file);
    } catch (const Error& e) {
      FAIL(render_error(e));
    }
  }

  Engine& engine() { return *engine_; }

  /// The values of the collected column `name` (the expression's source text, e.g. "(f 1)") in the rows
  /// from `burn_in` on; rows with no cell for it are skipped. An unknown name fails the test case and
  /// lists the known columns.
  std::vector<double> column(std::string_view name, size_t burn_in = 0) {
    const Draws& d = engine_->draws();
    const auto& names = d.columns();
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) FAIL(fmt::format("no collected column '{}' (columns: {})", name, fmt::join(names, ", ")));
    const std::vector<double>& all = d.column(static_cast<size_t>(it - names.begin()));
    std::vector<double> out;
    for (size_t r = std::min(burn_in, all.size()); r < all.size(); ++r)
      if (!std::isnan(all[r])) out.push_back(all[r]);
    return out;
  }

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace vnt::test
