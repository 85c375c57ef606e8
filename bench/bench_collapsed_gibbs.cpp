// Collapsed Gibbs on a Dirichlet process mixture of collapsed normals, against a hand-written sampler doing the same
// arithmetic in the same process: z ~ CRP(1), each table's mean and variance integrated out (make_nig_normal 0 4 2 1),
// N points from three clusters. The runtime moves (z i) with (gibbs z one R); the hand-written loop removes the
// point from its table's statistics (exact sums, as the runtime keeps them), weighs every occupied table and a new one
// by the CRP's counts and the Student-t predictive, draws one and adds the point there. Prints microseconds per
// transition and per table weighed for both, and their ratio.
// Usage: bench_collapsed_gibbs [N=1000] [R=20000]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <random>
#include <set>
#include <vector>

#include "stdlib/support/exact_sum.hpp"
#include "vnt/vnt.hpp"

namespace {

constexpr double kM = 0, kV = 4, kA = 2, kB = 1, kAlpha = 1;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> data(int n) {
  std::mt19937_64 gen(1);
  std::normal_distribution<double> noise(0, 0.5);
  std::uniform_int_distribution<int> cluster(0, 2);
  std::vector<double> ys;
  for (int i = 0; i < n; ++i) ys.push_back(3.0 * (cluster(gen) - 1) + noise(gen));
  return ys;
}

struct Table {
  double n = 0;
  vnt::stdlib::ExactSum sum, sum_sq;
};

/// log of the Student-t predictive of y given a table's statistics (the runtime's formula).
double log_predictive(const Table& t, double y) {
  double m = kM, v = kV, a = kA, b = kB;
  if (t.n > 0) {
    const double s = t.sum.value(), mean = s / t.n;
    v = kV / (1 + t.n * kV);
    m = v * (kM / kV + s);
    a = kA + t.n / 2;
    const double shift = mean - kM;
    b = kB + 0.5 * std::max(0.0, t.sum_sq.value() - s * mean) + 0.5 * t.n / (1 + t.n * kV) * shift * shift;
  }
  const double nu = 2 * a, scale_sq = b * (1 + v) / a, z = y - m;
  return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * std::numbers::pi * scale_sq) -
         (nu + 1) / 2 * std::log1p(z * z / (nu * scale_sq));
}

struct HandWritten {
  std::vector<double> ys;
  std::vector<size_t> z;
  std::vector<Table> tables;  // by label; an empty one is free
  std::mt19937_64 gen{2};
  double weighed = 0;

  /// Seated as `labels` (table labels, small integers) says.
  HandWritten(std::vector<double> data, const std::vector<size_t>& labels) : ys(std::move(data)), z(labels) {
    for (size_t i = 0; i < ys.size(); ++i) {
      if (z[i] >= tables.size()) tables.resize(z[i] + 1);
      add(z[i], ys[i]);
    }
  }
  void add(size_t k, double y) {
    tables[k].n += 1;
    tables[k].sum.add(y);
    tables[k].sum_sq.add(y * y);
  }
  void remove(size_t k, double y) {
    tables[k].n -= 1;
    tables[k].sum.add(-y);
    tables[k].sum_sq.add(-(y * y));
  }
  void move(size_t i) {
    remove(z[i], ys[i]);
    std::vector<double> logw;
    size_t fresh = tables.size();
    for (size_t k = 0; k < tables.size(); ++k) {
      if (tables[k].n == 0) {
        if (fresh == tables.size()) fresh = k;
        logw.push_back(-INFINITY);
        continue;
      }
      logw.push_back(std::log(tables[k].n) + log_predictive(tables[k], ys[i]));
    }
    if (fresh == tables.size()) tables.emplace_back(), logw.push_back(0);
    logw[fresh] = std::log(kAlpha) + log_predictive(Table{}, ys[i]);
    double top = -INFINITY, total = 0;
    for (double w : logw) top = std::max(top, w);
    for (double& w : logw) total += (w = std::exp(w - top));
    double u = std::uniform_real_distribution<double>(0, total)(gen);
    size_t pick = 0;
    for (; pick + 1 < logw.size() && u >= logw[pick]; ++pick) u -= logw[pick];
    weighed += static_cast<double>(std::count_if(tables.begin(), tables.end(), [](const Table& t) { return t.n > 0; }) +
                                   1);
    z[i] = pick;
    add(pick, ys[i]);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int r = argc > 2 ? std::atoi(argv[2]) : 20000;
  const std::vector<double> ys = data(n);

  vnt::Options opts;
  opts.seed = 1;
  vnt::Runtime rt(opts);
  rt.execute(
      "[assume crp (make_crp 1)]"
      "[assume z (mem (lambda (i) (scope_include 'z i (crp))))]"
      "[assume component (mem (lambda (k) (make_nig_normal 0 4 2 1)))]"
      "[assume y (lambda (i) ((component (z i))))]");
  for (int i = 0; i < n; ++i) rt.observe_apply("y", {vnt::Datum(i)}, vnt::Datum(ys[static_cast<size_t>(i)]));
  rt.infer(fmt::format("(gibbs z one {})", r / 10));  // the tables settle
  auto t0 = std::chrono::steady_clock::now();
  rt.infer(fmt::format("(gibbs z one {})", r));
  const double runtime_us = seconds_since(t0) / r * 1e6;
  std::vector<size_t> seating;
  std::set<size_t> labels;
  for (int i = 0; i < n; ++i) {
    seating.push_back(static_cast<size_t>(rt.sample(fmt::format("(z {})", i)).as_double()));
    labels.insert(seating.back());
  }

  // From the runtime's seating, so that both weigh about as many tables: single-site Gibbs merges and splits
  // tables slowly, and the count it holds depends on where it started.
  HandWritten hw(ys, seating);
  std::mt19937_64 pick(3);
  auto t1 = std::chrono::steady_clock::now();
  for (int s = 0; s < r; ++s) hw.move(std::uniform_int_distribution<size_t>(0, ys.size() - 1)(pick));
  const double hand_us = seconds_since(t1) / r * 1e6;
  const double hand_tables = hw.weighed / r;
  const double runtime_tables = static_cast<double>(labels.size()) + 1;

  fmt::print("N = {}, {} transitions of gibbs on one assignment\n", n, r);
  fmt::print("{:>12}  {:>14}  {:>14}  {:>10}\n", "", "us/transition", "tables weighed", "us/table");
  fmt::print("{:>12}  {:>14.2f}  {:>14.1f}  {:>10.3f}\n", "vnt", runtime_us, runtime_tables,
             runtime_us / runtime_tables);
  fmt::print("{:>12}  {:>14.2f}  {:>14.1f}  {:>10.3f}\n", "hand-written", hand_us, hand_tables, hand_us / hand_tables);
  fmt::print("ratio per table weighed: {:.0f}\n", (runtime_us / runtime_tables) / (hand_us / hand_tables));
  return 0;
}
