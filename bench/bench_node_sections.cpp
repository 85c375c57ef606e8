// The cost of a local section stored as trace nodes rather than as a plate row: Bayesian logistic regression
// written with one `observe` per datum (as the paper's programs are), so each of the N sections is a lookup of
// w, a linear_logistic and an observed bernoulli, scored from values alone (runtime/infer/section_chain.cpp).
// Prints the load time, the time per transition and per section touched, for subsampled_mh, exact mh, and
// subsampled_mh cycled with mh on a hyperparameter outside the sections (whose moves must not cost the cached
// section chains); then, in a second trace, two subsampled kernels cycled on two weights with N/2 data each (one
// border per cluster, as in the joint DPM: neither may cost the other its cached chains); then the same model
// with each datum reading the weights three times, (lookup w 0), (lookup w 1) and (lookup w 2): one section with
// three roots per datum, evaluated in place (runtime/regen/section_dag.cpp). Its N is 3 children per datum, so
// its us/section is per child: three times that per datum.
// Usage: bench_node_sections [N] [transitions]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "vnt/vnt.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int transitions = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (n < 2 || transitions < 1) {
    fmt::print(stderr, "usage: bench_node_sections [N >= 2] [transitions >= 1]\n");
    return 2;
  }
  vnt::Options opts;
  opts.seed = 1;
  vnt::Runtime rt(opts);
  rt.execute(
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
      "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]"
      "[assume s (scope_include 's 0 (normal 0 1))] [observe (normal s 1) 0.5]");
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  auto datum = [&] {  // features and label of one datum, from the weights (0.3, 0.8, -0.6)
    const double x0 = normal(gen), x1 = normal(gen);
    return std::tuple{x0, x1, unif(gen) < 1 / (1 + std::exp(-(0.3 + 0.8 * x0 - 0.6 * x1)))};
  };
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const auto [x0, x1, y] = datum();
    rt.observe(fmt::format("(y_x (vector {} {}))", x0, x1), vnt::Datum(y));
  }
  fmt::print("N = {}: load {:.2f} s ({} node observations)\n", n, seconds_since(t0), n);
  fmt::print("{:<34}  {:>11}  {:>8}  {:>17}  {:>10}\n", "kernel", "transitions", "accepted", "sections touched",
             "us/section");
  const std::pair<const char*, int> runs[] = {
      {"(subsampled_mh w all 100 0.05 'drift 0.05 {})", transitions},
      {"(mh w all 'drift 0.05 {})", std::max(1, transitions / 20)},
      {"(repeat {} (do (subsampled_mh w all 100 0.05 'drift 0.05 1) (mh s all 'drift 0.5 1)))", transitions}};
  for (const auto& [form, count] : runs) {
    const std::string program = fmt::format(fmt::runtime(form), count);
    auto t1 = std::chrono::steady_clock::now();
    rt.infer(program);
    const double s = seconds_since(t1);  // the cycle's mh steps on s cost about 1 us each: left in
    const std::vector<vnt::KernelReport> reports = rt.kernel_reports();
    const bool cycle = std::string_view(form).starts_with("(repeat");
    const vnt::KernelReport r = reports[reports.size() - (cycle ? 2 : 1)];
    // Exact mh reads every section once per transition (its scaffold holds them all).
    const double sections = r.kernel == "subsampled_mh" ? static_cast<double>(r.sections_visited)
                                                        : static_cast<double>(r.transitions) * n;
    fmt::print("{:<34}  {:>11}  {:>8.3f}  {:>17.0f}  {:>10.3f}\n", cycle ? "subsampled_mh, cycled with mh on s" : r.kernel,
               r.transitions,
               static_cast<double>(r.accepted) / static_cast<double>(r.transitions),
               sections / static_cast<double>(r.transitions), s / sections * 1e6);
  }

  vnt::Runtime two(opts);
  two.execute(
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
      "[assume u (scope_include 'u 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
      "[assume y_w (lambda (x) (bernoulli (linear_logistic w x)))]"
      "[assume y_u (lambda (x) (bernoulli (linear_logistic u x)))]");
  for (int i = 0; i < n; ++i) {
    const auto [x0, x1, y] = datum();
    two.observe(fmt::format("({} (vector {} {}))", i % 2 == 0 ? "y_w" : "y_u", x0, x1), vnt::Datum(y));
  }
  auto t2 = std::chrono::steady_clock::now();
  two.infer(fmt::format("(cycle ((subsampled_mh w all 100 0.05 'drift 0.05 1) "
                        "(subsampled_mh u all 100 0.05 'drift 0.05 1)) {})",
                        std::max(1, transitions / 2)));
  const double s = seconds_since(t2);
  double sections = 0, accepted = 0, count = 0;
  for (const vnt::KernelReport& r : two.kernel_reports()) {
    sections += static_cast<double>(r.sections_visited);
    accepted += static_cast<double>(r.accepted);
    count += static_cast<double>(r.transitions);
  }
  fmt::print("{:<34}  {:>11.0f}  {:>8.3f}  {:>17.0f}  {:>10.3f}\n", "two borders (N/2 each), cycled", count,
             accepted / count, sections / count, s / sections * 1e6);

  vnt::Runtime reads(opts);
  reads.execute(
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]"
      "[assume y_x (lambda (x0 x1) (bernoulli (logistic (+ (lookup w 0) (* (lookup w 1) x0) "
      "(* (lookup w 2) x1)))))]");
  for (int i = 0; i < n; ++i) {
    const auto [x0, x1, y] = datum();
    reads.observe(fmt::format("(y_x {} {})", x0, x1), vnt::Datum(y));
  }
  auto t3 = std::chrono::steady_clock::now();
  reads.infer(fmt::format("(subsampled_mh w all 100 0.05 'drift 0.05 {})", std::max(1, transitions / 10)));
  const double s3 = seconds_since(t3);
  const vnt::KernelReport r = reads.kernel_reports().back();
  fmt::print("{:<34}  {:>11}  {:>8.3f}  {:>17.0f}  {:>10.3f}\n", "three reads per datum (3N children)",
             r.transitions, static_cast<double>(r.accepted) / static_cast<double>(r.transitions),
             static_cast<double>(r.sections_visited) / static_cast<double>(r.transitions),
             s3 / static_cast<double>(r.sections_visited) * 1e6);
  return 0;
}
