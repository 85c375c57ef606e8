// make_niw_normal: the multivariate Student-t predictive (against the textbook marginal likelihood and, in one
// dimension, make_nig_normal), exchangeability, draws, exact statistics, absorbing a change of the prior, errors.
// SPDX-License-Identifier: Apache-2.0
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <algorithm>
#include <vector>

#include "tests/support/dist_conformance.hpp"
#include "tests/support/niw_reference.hpp"

namespace vnt::test {
namespace {

struct Niw {
  Value proc;
  const Sp& sp() const { return procedure(proc).sp(); }
  SpAux& aux() const { return *procedure(proc).aux(); }
  Call call() const { return Call(sp(), {}, &aux()); }
  void add(const Eigen::VectorXd& x) const { sp().incorporate(make_vector(x), call().args()); }
  void remove(const Eigen::VectorXd& x) const { sp().unincorporate(make_vector(x), call().args()); }
  double score(const Eigen::VectorXd& x) const { return call().log_density(make_vector(x)); }
};

Params args_of(const NiwPrior& p) { return {make_vector(p.m), num(p.k), num(p.v), make_matrix(p.s)}; }

Niw make_niw(const NiwPrior& p) {
  Rng rng(kSeed);
  return {Call(builtin_sp("make_niw_normal"), args_of(p)).simulate(rng)};
}

NiwPrior prior_3d() {
  Eigen::MatrixXd s(3, 3);
  s << 2.0, 0.3, -0.2, 0.3, 1.5, 0.4, -0.2, 0.4, 1.0;
  return {Eigen::Vector3d(0.5, -1.0, 2.0), 0.7, 4.5, s};
}

std::vector<Eigen::VectorXd> points_3d() {
  return {Eigen::Vector3d(1.2, -0.3, 2.5), Eigen::Vector3d(0.9, 1.1, 3.0), Eigen::Vector3d(-1.4, 0.2, 1.7),
          Eigen::Vector3d(0.4, -2.0, 2.2), Eigen::Vector3d(2.1, 0.6, 0.8)};
}

/// A multivariate t projected on a direction: a univariate t (the draws' check).
struct ProjectedT {
  double nu, loc, scale;
  friend double cdf(const ProjectedT& t, double x) {
    return boost::math::cdf(boost::math::students_t_distribution<double>(t.nu), (x - t.loc) / t.scale);
  }
};

/// The predictive after xs, projected on `a`: v' - D + 1 degrees of freedom, location a^T m', scale^2
/// a^T S' a (k' + 1) / (k' (v' - D + 1)).
ProjectedT projected(const NiwPrior& p, const std::vector<Eigen::VectorXd>& xs, const Eigen::VectorXd& a) {
  const double n = static_cast<double>(xs.size()), kn = p.k + n, vn = p.v + n;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(p.m.size());
  for (const Eigen::VectorXd& x : xs) mean += x / n;
  Eigen::MatrixXd sn = p.s;
  for (const Eigen::VectorXd& x : xs) sn += (x - mean) * (x - mean).transpose();
  sn += (p.k * n / kn) * (mean - p.m) * (mean - p.m).transpose();
  const double df = vn - static_cast<double>(p.m.size()) + 1;
  const Eigen::VectorXd mn = (p.k * p.m + n * mean) / kn;
  return {df, a.dot(mn), std::sqrt(a.dot(sn * a) * (kn + 1) / (kn * df))};
}

}  // namespace

TEST_CASE("niw_normal predictive: each density is a ratio of textbook marginal likelihoods, in any order") {
  const NiwPrior p = prior_3d();
  const std::vector<Eigen::VectorXd> xs = points_3d();
  Niw g = make_niw(p);
  CHECK_FALSE(builtin_sp("make_niw_normal").is_random());
  CHECK(g.sp().is_random());
  auto fresh = g.aux().clone();
  std::vector<Eigen::VectorXd> seen;
  double sequential = 0;
  for (const Eigen::VectorXd& x : xs) {
    std::vector<Eigen::VectorXd> with = seen;
    with.push_back(x);
    const double expected = niw_log_marginal(p, with) - niw_log_marginal(p, seen);
    CHECK(g.score(x) == doctest::Approx(expected).epsilon(1e-12));
    sequential += g.score(x);
    g.add(x);
    seen = with;
  }
  CHECK(sequential == doctest::Approx(niw_log_marginal(p, xs)).epsilon(1e-12));
  // The doubles' exact sum, correctly rounded (-0.3 + 1.1 + 0.2 - 2.0 + 0.6 in decimal would be -0.4).
  CHECK(g.aux().to_string() == "n 5, sum [3.2 -0.3999999999999999 10.2]");
  // Taken away in another order, the statistics are exactly as they were.
  for (size_t i : {3, 0, 4, 2, 1}) g.remove(xs[i]);
  CHECK(g.aux().equals(*fresh));
  // Not a vector of three finite numbers below 1e150: density 0, never counted.
  for (const Value& x : {num(1), vec({1, 2}), vec({1, 2, 3, 4}), vec({1, kInf, 0}), vec({0, std::nan(""), 0}),
                         vec({1e200, 0, 0}), mat(1, 3, {1, 2, 3})}) {
    CAPTURE(to_string(x));
    CHECK(g.call().log_density(x) == -kInf);
    g.sp().incorporate(x, g.call().args());
    CHECK(g.aux().equals(*fresh));
  }
}

// In one dimension the model is make_nig_normal's: Sigma ~ IW(v, S) is sigma^2 ~ inv_gamma(v / 2, S / 2), and
// mu | sigma^2 ~ N(m, sigma^2 / k) has V = 1 / k.
TEST_CASE("niw_normal in one dimension is nig_normal with V = 1/k0, a = v0/2, b = S0/2") {
  Niw g = make_niw({Eigen::VectorXd::Constant(1, 0.4), 2.5, 3.0, Eigen::MatrixXd::Constant(1, 1, 1.8)});
  Rng rng(kSeed);
  const Value nig = Call(builtin_sp("make_nig_normal"), {num(0.4), num(1 / 2.5), num(1.5), num(0.9)}).simulate(rng);
  const Call nig_call(procedure(nig).sp(), {}, procedure(nig).aux());
  for (double x : {1.3, -0.7, 2.2, 0.1, 5.0, -3.5}) {
    CAPTURE(x);
    const Eigen::VectorXd y = Eigen::VectorXd::Constant(1, x);
    CHECK(g.score(y) == doctest::Approx(nig_call.log_density(num(x))).epsilon(1e-12));
    g.add(y);
    procedure(nig).sp().incorporate(num(x), nig_call.args());
  }
}

TEST_CASE("niw_normal draws follow the multivariate t predictive, and its density integrates to 1") {
  Eigen::MatrixXd s(2, 2);
  s << 1.0, 0.6, 0.6, 2.0;
  const NiwPrior p{Eigen::Vector2d(-1, 0.5), 0.5, 2.5, s};
  const std::vector<Eigen::VectorXd> xs{Eigen::Vector2d(0.4, 1.9), Eigen::Vector2d(1.3, -0.2)};
  Niw g = make_niw(p);
  for (const Eigen::VectorXd& x : xs) g.add(x);
  // Over the plane, as nested integrals.
  boost::math::quadrature::tanh_sinh<double> quad;
  auto inner = [&](double a) {
    return quad.integrate([&](double b) { return std::exp(g.score(Eigen::Vector2d(a, b))); }, -kInf, kInf);
  };
  CHECK(quad.integrate(inner, -kInf, kInf) == doctest::Approx(1.0).epsilon(1e-5));
  const std::vector<Value> ds = draws(g.sp(), {}, &g.aux());
  for (const Eigen::Vector2d& a : {Eigen::Vector2d(1, 0), Eigen::Vector2d(0, 1), Eigen::Vector2d(1, -1)}) {
    CAPTURE(a.transpose());
    std::vector<double> along;
    for (const Value& v : ds) along.push_back(a.dot(*std::get<VectorPtr>(v)));
    std::sort(along.begin(), along.end());
    const ProjectedT t = projected(p, xs, a);
    CHECK(ks_p_value(along, t) > kMinPValue);
    ProjectedT wider = t;  // a scale 30% too wide fails
    wider.scale *= 1.3;
    CHECK(ks_p_value(along, wider) < kMinPValue);
  }
}

TEST_CASE("niw_normal with degrees of freedom barely above D - 1 draws finite values and scores them") {
  Niw g = make_niw({Eigen::Vector2d(0, 0), 1e-3, 1.0001, Eigen::MatrixXd::Identity(2, 2)});
  Rng rng(kSeed);
  for (int i = 0; i < 200; ++i) {
    const Value x = g.call().simulate(rng);
    CAPTURE(to_string(x));
    REQUIRE(std::get<VectorPtr>(x)->allFinite());
    CHECK((std::get<VectorPtr>(x)->array().abs() < 1e150).all());
    CHECK(std::isfinite(g.call().log_density(x)));
  }
}

TEST_CASE("make_niw_normal absorbs a change of its parameters: it weighs the draws at once and sets them") {
  const Sp& maker = builtin_sp("make_niw_normal");
  for (size_t i = 0; i < 4; ++i) CHECK(maker.can_absorb(i));
  const NiwPrior p = prior_3d();
  const std::vector<Eigen::VectorXd> xs = points_3d();
  Niw g = make_niw(p);
  for (const Eigen::VectorXd& x : xs) g.add(x);
  NiwPrior q = p;
  q.m = Eigen::Vector3d(-1, 0, 1);
  q.k = 2;
  q.v = 7;
  q.s *= 3;
  CHECK(Call(maker, args_of(q)).log_density(g.proc) == doctest::Approx(niw_log_marginal(q, xs)).epsilon(1e-12));
  NiwPrior bad = q;
  bad.v = 2;  // not above D - 1
  CHECK(Call(maker, args_of(bad)).log_density(g.proc) == -kInf);
  NiwPrior other_dim{Eigen::Vector2d(0, 0), 1, 3, Eigen::MatrixXd::Identity(2, 2)};
  CHECK(Call(maker, args_of(other_dim)).log_density(g.proc) == -kInf);
  auto before = g.aux().clone();
  const Eigen::VectorXd y = Eigen::Vector3d(0.3, 0.1, -0.4);
  const double under_p = g.score(y);  // the posterior under p, kept by the procedure: a move must drop it
  maker.incorporate(g.proc, Call(maker, args_of(q)).args());
  std::vector<Eigen::VectorXd> with = xs;
  with.push_back(y);
  CHECK(g.score(y) == doctest::Approx(niw_log_marginal(q, with) - niw_log_marginal(q, xs)).epsilon(1e-12));
  maker.incorporate(g.proc, Call(maker, args_of(p)).args());  // a rejected move puts them back
  CHECK(g.aux().equals(*before));
  CHECK(g.score(y) == under_p);
  Niw empty = make_niw(p);
  CHECK(Call(maker, args_of(q)).log_density(empty.proc) == 0);
}

TEST_CASE("niw_normal errors") {
  Rng rng(kSeed);
  const Sp& maker = builtin_sp("make_niw_normal");
  const Value id2 = mat(2, 2, {1, 0, 0, 1});
  auto make = [&](Params ps) { Call(maker, std::move(ps)).simulate(rng); };
  check_error([&] { make({vec({}), num(1), num(3), mat(0, 0, {})}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 1 (m0) is empty, but must have at least one element");
  check_error([&] { make({vec({0, 1e200}), num(1), num(3), id2}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 1 (m0) is [0 1e+200], but its elements must be between -1e150 and 1e150");
  check_error([&] { make({vec({0, 0}), num(0), num(3), id2}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 2 (k0) is 0, but must be positive");
  check_error([&] { make({vec({0, 0}), num(1), num(1), id2}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 3 (v0) is 1, but must be finite and greater than 1 (the dimension less "
              "one)");
  check_error([&] { make({vec({0, 0}), num(1), num(3), mat(2, 3, {1, 0, 0, 0, 1, 0})}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 4 (S0) is 2x3, but must be 2x2 to match argument 1 (m0)");
  check_error([&] { make({vec({0, 0}), num(1), num(3), mat(2, 2, {1, 2, 2, 1})}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 4 (S0) is not positive definite, but must be symmetric positive definite");
  check_error([&] { make({vec({0, 0}), num(1), num(3), mat(2, 2, {1, 0.5, 0, 1})}); }, ErrorKind::kDomain,
              "make_niw_normal: argument 4 (S0) is not symmetric, but must be symmetric positive definite");
  check_error([&] { make({vec({0, 0}), num(1), num(3)}); }, ErrorKind::kArity,
              "make_niw_normal: expected 4 arguments, got 3");
  check_error([&] { make({num(0), num(1), num(3), id2}); }, ErrorKind::kType,
              "make_niw_normal: argument 1 (m0) must be a vector, got a number");
  check_error([&] { make({vec({0, 0}), num(1), num(3), vec({1, 1})}); }, ErrorKind::kType,
              "make_niw_normal: argument 4 (S0) must be a matrix, got a vector");
  Niw g = make_niw({Eigen::Vector2d(0, 0), 1, 3, Eigen::MatrixXd::Identity(2, 2)});
  check_error([&] { Call(g.sp(), {num(1)}, &g.aux()).simulate(rng); }, ErrorKind::kArity,
              "niw_normal: expected 0 arguments, got 1");
  try {  // unincorporating a draw that was never incorporated is a bug in the caller, not a user error
    g.remove(Eigen::Vector2d(1, 1));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInternal);
  }
}

}  // namespace vnt::test
