// multivariate_normal: closed-form 2-D density, sample moments, cached factorisation, shape and PD messages.
// SPDX-License-Identifier: Apache-2.0
#include <numbers>

#include "tests/support/dist_conformance.hpp"

namespace vnt::test {

TEST_CASE("multivariate_normal matches the closed-form 2-D density") {
  const Sp& sp = builtin_sp("multivariate_normal");
  CHECK(sp.real_valued());
  double s1 = 2, s2 = 0.5, rho = -0.6, m1 = 1, m2 = -3, x1 = 2.5, x2 = -2.2;
  Params params{vec({m1, m2}), mat(2, 2, {s1 * s1, rho * s1 * s2, rho * s1 * s2, s2 * s2})};
  double z1 = (x1 - m1) / s1, z2 = (x2 - m2) / s2, q = (z1 * z1 - 2 * rho * z1 * z2 + z2 * z2) / (1 - rho * rho);
  double expected = -std::log(2 * std::numbers::pi * s1 * s2 * std::sqrt(1 - rho * rho)) - q / 2;
  CHECK(Call(sp, params).log_density(vec({x1, x2})) == doctest::Approx(expected).epsilon(1e-12));
  // An equal matrix under a different handle hits the cache by contents and gives the same answer.
  Params again{params[0], mat(2, 2, {s1 * s1, rho * s1 * s2, rho * s1 * s2, s2 * s2})};
  CHECK(Call(sp, again).log_density(vec({x1, x2})) == Call(sp, params).log_density(vec({x1, x2})));
  for (const Value& x : {vec({1}), vec({1, 2, 3}), num(1), vec({kInf, 0})})
    CHECK(Call(sp, params).log_density(x) == -kInf);
}

TEST_CASE("multivariate_normal samples have the right moments") {
  const Sp& sp = builtin_sp("multivariate_normal");
  Eigen::Vector3d mean(1, -2, 0.5);
  Eigen::Matrix3d cov{{2, 0.5, -0.3}, {0.5, 1, 0.2}, {-0.3, 0.2, 0.5}};
  std::vector<Value> xs = draws(sp, {make_vector(mean), make_matrix(cov)});
  Eigen::Vector3d m = Eigen::Vector3d::Zero();
  Eigen::Matrix3d c = Eigen::Matrix3d::Zero();
  for (const Value& x : xs) m += *std::get<VectorPtr>(x);
  m /= static_cast<double>(xs.size());
  for (const Value& x : xs) c += (*std::get<VectorPtr>(x) - m) * (*std::get<VectorPtr>(x) - m).transpose();
  c /= static_cast<double>(xs.size() - 1);
  CHECK((m - mean).cwiseAbs().maxCoeff() < 0.04);  // ~4 standard errors at 20000 draws
  CHECK((c - cov).cwiseAbs().maxCoeff() < 0.08);
}

TEST_CASE("multivariate_normal errors") {
  const Sp& sp = builtin_sp("multivariate_normal");
  const std::string prefix = "multivariate_normal: argument ";
  Value x = vec({0, 0});
  check_invalid(sp, {vec({0, 0}), mat(2, 2, {1, 2, 2, 1})}, x,
                prefix + "2 (cov) is not positive definite, but must be symmetric positive definite");
  check_invalid(sp, {vec({0, 0}), mat(2, 2, {1, 0.5, 0, 1})}, x,
                prefix + "2 (cov) is not symmetric, but must be symmetric positive definite");
  check_invalid(sp, {vec({0, 0}), mat(2, 2, {1, 0, 0, kInf})}, x,
                prefix + "2 (cov) has a non-finite entry, but must be symmetric positive definite");
  check_invalid(sp, {vec({0, 0}), mat(2, 3, {1, 0, 0, 0, 1, 0})}, x,
                prefix + "2 (cov) is 2x3, but must be square");
  check_invalid(sp, {vec({0, 0}), mat(3, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1})}, x,
                prefix + "2 (cov) is 3x3, but must be 2x2 to match argument 1 (mean)");
  check_invalid(sp, {vec({}), mat(0, 0, {})}, x, prefix + "1 (mean) is empty, but must have at least one element");
  check_invalid(sp, {vec({0, kInf}), mat(2, 2, {1, 0, 0, 1})}, x,
                prefix + "1 (mean) has a non-finite element, but must be finite");
  check_malformed(sp, {vec({0})}, x, ErrorKind::kArity, "multivariate_normal: expected 2 arguments, got 1");
  check_malformed(sp, {num(0), mat(1, 1, {1})}, x, ErrorKind::kType,
                  prefix + "1 (mean) must be a vector, got a number");
  check_malformed(sp, {vec({0}), vec({1})}, x, ErrorKind::kType,
                  prefix + "2 (cov) must be a matrix, got a vector");
}


// Symmetry is judged against sqrt(|c_ii c_jj|), the scale of entry (i, j): against the largest entry,
// [[1e10 0.5] [-0.5 1e-10]] passed (its correlations are +0.5 and -0.5) and was read from its lower triangle.
TEST_CASE("multivariate_normal: symmetry relative to the scale of each entry") {
  const Sp& sp = builtin_sp("multivariate_normal");
  check_invalid(sp, {vec({0, 0}), mat(2, 2, {1e10, 0.5, -0.5, 1e-10})}, vec({0, 0}),
                "multivariate_normal: argument 2 (cov) is not symmetric, but must be symmetric positive definite");
  // Rounding of a computed covariance passes.
  Rng rng(kSeed);
  const double c = 0.3 * std::sqrt(1e10 * 1e-10);
  CHECK_NOTHROW(Call(sp, {vec({0, 0}), mat(2, 2, {1e10, c, c * (1 + 1e-12), 1e-10})}).simulate(rng));
}
}  // namespace vnt::test
