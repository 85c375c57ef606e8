// The cost of repairing a stale local section when something reads it (refresh_section, as ensure_fresh calls it):
// in place (SectionDag) against a detach and a regen of its scaffold, the way every section was repaired before.
// Two models: one read of w per datum (a chain), and three reads that meet (one section with three roots). An
// approximate subsampled move that visits few sections leaves the others stale; each is then repaired one way, and
// after another such move the other way, so both repair the same kind of section from the same kind of state.
// Usage: bench_stale_repair [N=20000] [rounds=5]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/trace/trace.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Approximate moves on w until one is accepted that leaves sections stale; the border.
vnt::Node* make_stale(vnt::Engine& e, vnt::SubsampledState& state) {
  const vnt::BlockSpec spec{
      .scope = "w", .mode = vnt::BlockSpec::Mode::kAll, .block = {}, .span = {}, .kernel = "subsampled_mh"};
  vnt::SubsampledOptions so;
  so.batch = 20;
  so.epsilon = 0.45;
  so.drift_sigma = 0.02;
  for (int i = 0; i < 1000; ++i) {
    subsampled_mh_transition(e.trace(), spec, so, state);
    if (!e.trace().stale_borders().empty()) return e.trace().stale_borders().begin()->first;
  }
  return nullptr;
}

/// Repairs every stale child of `border`, in place or by regen; returns {seconds, sections repaired}.
std::pair<double, size_t> repair(vnt::Engine& e, vnt::Node* border, bool in_place) {
  const std::vector<vnt::Node*> children(border->children.begin(), border->children.end());
  size_t repaired = 0;
  const auto t0 = Clock::now();
  for (vnt::Node* c : children) {
    if (c->version == border->version) continue;
    if (in_place) {
      vnt::refresh_section(e.trace(), border, c);
    } else {
      vnt::BorderReach reach(border);
      std::optional<vnt::SectionGroup> g = vnt::section_group(e.trace(), reach, c);
      vnt::refresh_section(e.trace(), border, g->roots, g->scaffold);
    }
    ++repaired;
  }
  return {since(t0), repaired};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n < 100 || rounds < 1) {
    fmt::print(stderr, "usage: bench_stale_repair [N >= 100] [rounds >= 1]\n");
    return 2;
  }
  const std::vector<std::pair<std::string, std::string>> models{
      {"one read per datum (a chain)", "(bernoulli (linear_logistic w (vector x0 x1)))"},
      {"three reads per datum (3 roots)",
       "(bernoulli (logistic (+ (lookup w 0) (* (lookup w 1) x0) (* (lookup w 2) x1))))"}};
  fmt::print("N = {}, {} rounds of each way; us per section repaired\n", n, rounds);
  fmt::print("{:<34}  {:>10}  {:>10}\n", "model", "in place", "regen");
  for (const auto& [name, body] : models) {
    vnt::Engine e(1);
    std::string program =
        "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
        "[assume y_x (lambda (x0 x1) " + body + ")]";
    vnt::Rng rng(7);
    for (int i = 0; i < n; ++i)
      program += fmt::format("[observe (y_x {} {}) {}]", rng.normal(), rng.normal(), rng.uniform() < 0.5);
    e.run_source(std::make_shared<const vnt::SourceFile>(vnt::SourceFile{"bench.vnt", program}));
    vnt::SubsampledState state;
    double seconds[2] = {0, 0};
    size_t sections[2] = {0, 0};
    for (int r = 0; r < rounds; ++r)
      for (int way = 0; way < 2; ++way) {
        vnt::Node* border = make_stale(e, state);
        if (border == nullptr) {
          fmt::print(stderr, "bench_stale_repair: no move left sections stale\n");
          return 1;
        }
        const auto [s, k] = repair(e, border, way == 0);
        seconds[way] += s;
        sections[way] += k;
      }
    fmt::print("{:<34}  {:>10.3f}  {:>10.3f}\n", name, seconds[0] / static_cast<double>(sections[0]) * 1e6,
               seconds[1] / static_cast<double>(sections[1]) * 1e6);
  }
  return 0;
}
