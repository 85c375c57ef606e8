// Observations whose random choice a proposal makes again (in the brush of the move), against the exact posterior.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <string>

#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

// Tolerance: P(c) within 4 sqrt(p (1 - p) / ESS) (check_probability).

namespace vnt::test::observed_brush_tests {
namespace {

constexpr size_t kBurnIn = 500;

// c ~ flip, and an observation of 0.3 from normal(0.5, 1) if c, normal(0.5, 2) if not: P(c | y) = r / (1 + r) with
// the likelihood ratio r = n(0.3; 0.5, 1) / n(0.3; 0.5, 2) (0.663); `share` of the log ratio only gives r^share.
double p_c(double share = 1) {
  const double r = std::exp(share * (log_normal_pdf(0.3, 0.5, 1) - log_normal_pdf(0.3, 0.5, 2)));
  return r / (1 + r);
}

TEST_CASE("exact mh through local sections: a read of the parameter in a body joins its call's section") {
  // c is read twice: as the argument of (b_of c) and inside b_of's body. The border is c and the partitioned path
  // of exact mh scores each read as a section. The body's read reaches the call's output through the body (its
  // requested family), and the call's output reads c's other lookup: one section. Grouped from the body's read
  // only, not from the argument's, a transition visiting the argument first scored half the move.
  const std::string program = R"(
[assume c (flip)]
[assume b_of (lambda (x) (if c (normal 0.5 1) (normal 0.5 2)))]
[observe (b_of c) 0.3]
[infer (repeat 20000 (do (mh default all 1) (collect c)))]
)";
  ProgramRun run(program, 51);
  const std::vector<double> c = run.column("c", kBurnIn);
  check_probability(c, p_c());
  expect_rejected(evaluate_probability(c, p_c(0.5)));
}

}  // namespace
}  // namespace vnt::test::observed_brush_tests
