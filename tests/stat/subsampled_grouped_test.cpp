// subsampled_mh on a linear regression written as most users write it, each datum reading the weight vector twice
// ((lookup w 0) and (lookup w 1)): each datum's two reads are one local section with two roots. Conjugate, so the
// posterior is known exactly.
// SPDX-License-Identifier: Apache-2.0
#include <Eigen/Dense>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "runtime/core/rng.hpp"
#include "tests/support/engine_fixture.hpp"
#include "tests/support/stat_extra.hpp"
#include "tests/support/stat_seed.hpp"

// Tolerances: |mean - exact| <= 4 se + b and |sd - exact| <= 4 se(sd) + b (z = 4, a two-sided false-failure rate
// of about 6e-5 per check), se from the chain's ESS. b = 0.1 posterior sd allows for the bias of eps = 0.01:
// tests/stat/subsampled_logistic_test.cpp measures that bias with a replica of the chain at the same eps and
// Nbatch, and finds about 0.01 sd in the means and 1-2 % in the sds; b is several times that. With eps = 0 the
// grouped sections are exact (lockstep with exact mh in tests/runtime/infer/subsampled_mh_test.cpp).

namespace vnt::test::subsampled_grouped_tests {
namespace {

TEST_CASE("linear regression whose data read (lookup w 0) and (lookup w 1): subsampled_mh matches the posterior") {
  constexpr int kN = 100, kTransitions = 12000, kBurnIn = 1000;
  Rng rng(stat_seed(31));
  Eigen::MatrixXd x(kN, 2);
  Eigen::VectorXd y(kN);
  std::string program =
      "[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0) (id_matrix 2)))]"
      "[assume f (lambda (x) (normal (+ (lookup w 0) (* (lookup w 1) x)) 1))]";
  for (int i = 0; i < kN; ++i) {
    x(i, 0) = 1;
    x(i, 1) = rng.normal();
    y[i] = 0.5 + 1.5 * x(i, 1) + rng.normal();
    program += fmt::format("[observe (f {}) {}]", x(i, 1), y[i]);
  }
  // w ~ N(0, I), y ~ N(X w, I): the posterior is N(S X'y, S) with S = (I + X'X)^-1.
  const Eigen::Matrix2d s = (Eigen::Matrix2d::Identity() + x.transpose() * x).inverse();
  const Eigen::Vector2d mu = s * x.transpose() * y;
  Engine e(stat_seed(32));
  run(e, program);
  run(e, fmt::format("[infer (repeat {} (do (subsampled_mh w all 20 0.01 'drift 0.15 1) "
                     "(collect (lookup w 0) (lookup w 1))))]",
                     kTransitions));
  const Draws& d = e.draws();
  for (int k = 0; k < 2; ++k) {
    CAPTURE(k);
    const std::vector<double>& all = d.column(static_cast<size_t>(k));
    const std::vector<double> draws(all.begin() + kBurnIn, all.end());
    const Estimate est = estimate(draws);
    const double sd = std::sqrt(s(k, k));
    check_agree("posterior mean", est.mean, est.se_mean, mu[k], 0, 0.1 * sd);
    check_agree("posterior sd", est.sd, est.se_sd, sd, 0, 0.1 * sd);
  }
  // Decided by the test, from a part of the 2N children (about 0.6 of them at this small N).
  REQUIRE(e.kernel_reports().size() == 1);
  const auto& report = e.kernel_reports()[0];
  CHECK(report.subsampled_transitions == static_cast<uint64_t>(kTransitions));
  CHECK(report.sections_visited < report.sections_total);
}

}  // namespace
}  // namespace vnt::test::subsampled_grouped_tests
