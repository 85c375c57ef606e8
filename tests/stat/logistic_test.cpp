// A non-conjugate model: Bayesian logistic regression with two weights on 20 points. Resimulation MH,
// drift MH and a vector-valued drift all reach the posterior computed by 2-D numeric quadrature.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerances: each weight's mean within 4 posterior sd / sqrt(ESS) of the quadrature mean, and its sd
// within 4 standard errors of the quadrature sd. The quadrature (nested adaptive Gauss-Kronrod, relative
// tolerance 1e-11, on [-8, 8]^2 where the normal(0, 1) prior leaves mass below 1e-14 outside) is exact to
// far below these tolerances.

namespace vnt::test::logistic_tests {
namespace {

struct Point {
  double x;
  bool label;
};

// Generated once from w = (1, -1.5) and frozen; not separable, so the posterior is proper and curved (its
// means are about (0.62, -0.75), sds about 0.5).
const std::vector<Point> kData = {
    {2.3, true},  {2.2, true},  {-2.2, true}, {-2.1, true}, {1.7, false}, {1.2, false},  {0.8, false},
    {-1.0, true}, {0.5, true},  {0.5, true},  {0.4, true},  {-1.7, true}, {-0.3, true},  {-0.5, false},
    {1.1, false}, {2.5, false}, {2.2, false}, {0.2, false}, {-0.3, true}, {-1.2, true}};

// log p(w0, w1 | data) up to a constant: normal(0, 1) priors and log logistic(+-(w0 + w1 x)), computed as
// -log1p(exp(-s z)) in a form that cannot overflow.
double log_posterior(double w0, double w1, std::span<const Point> data) {
  double lp = -0.5 * (w0 * w0 + w1 * w1);
  for (const Point& p : data) {
    const double sz = (p.label ? 1 : -1) * (w0 + w1 * p.x);
    lp -= sz > 0 ? std::log1p(std::exp(-sz)) : -sz + std::log1p(std::exp(sz));
  }
  return lp;
}

Moments2d exact_posterior(std::span<const Point> data) {
  const double shift = log_posterior(0, 0, data);  // keeps exp() of order 1 near the mode
  return moments_2d([&](double w0, double w1) { return log_posterior(w0, w1, data) - shift; }, -8, 8);
}

// The observe directives, through a procedure `label` of one input.
std::string observations() {
  std::string out;
  for (const Point& p : kData) out += fmt::format("[observe (label {}) {}]\n", p.x, p.label ? "true" : "false");
  return out;
}

const std::string kScalarModel = R"(
[assume w0 (normal 0 1)]
[assume w1 (normal 0 1)]
[assume label (lambda (x) (flip (logistic (+ w0 (* w1 x)))))]
)";

constexpr size_t kBurnIn = 1000;

void check_weights(const std::vector<double>& w0, const std::vector<double>& w1) {
  static const Moments2d exact = exact_posterior(kData);
  MESSAGE("quadrature: w0 " << exact.x.mean << " +- " << exact.x.sd << ", w1 " << exact.y.mean << " +- "
                            << exact.y.sd);
  check_mean(w0, exact.x.mean, exact.x.sd);
  check_sd(w0, exact.x.sd);
  check_mean(w1, exact.y.mean, exact.y.sd);
  check_sd(w1, exact.y.sd);
  // What would fail: the prior means (0, 0); and the posterior given the data without its first point, i.e.
  // a sampler that lost one observation's factor (w1 moves from -0.75 to -1.0).
  static const Moments2d dropped = exact_posterior(std::span(kData).subspan(1));
  MESSAGE("without the first point: w0 " << dropped.x.mean << ", w1 " << dropped.y.mean);
  expect_rejected(evaluate_mean(w0, 0, exact.x.sd));
  expect_rejected(evaluate_mean(w1, 0, exact.y.sd));
  expect_rejected(evaluate_mean(w1, dropped.y.mean, exact.y.sd));
}

TEST_CASE("logistic regression: resimulation MH matches the 2-D quadrature posterior") {
  ProgramRun run(kScalarModel + observations() + "[infer (repeat 20000 (do (mh default one 2) (collect w0 w1)))]",
                 61);
  check_weights(run.column("w0", kBurnIn), run.column("w1", kBurnIn));
}

TEST_CASE("logistic regression: drift MH matches the same posterior") {
  ProgramRun run(kScalarModel + observations() +
                     "[infer (repeat 20000 (do (mh default one 'drift 0.6 2) (collect w0 w1)))]",
                 62);
  check_weights(run.column("w0", kBurnIn), run.column("w1", kBurnIn));
}

TEST_CASE("logistic regression: a vector weight with block drift matches the same posterior") {
  // w ~ multivariate_normal(0, I) is one random choice; drift perturbs both elements at once, and
  // linear_logistic treats w[0] as the bias since w has one element more than (vector x).
  const std::string model = R"(
[assume w (multivariate_normal (zeros 2) (id_matrix 2))]
[assume label (lambda (x) (flip (linear_logistic w (vector x))))]
)";
  ProgramRun run(model + observations() + "[infer (repeat 20000 (do (mh default one 'drift 0.4 2) (collect w)))]",
                 63);
  check_weights(run.column("w[0]", kBurnIn), run.column("w[1]", kBurnIn));
}

}  // namespace
}  // namespace vnt::test::logistic_tests
