// Conformance harness for distributions: normalisation, agreement with a reference pdf/cdf, sample quality
// (KS or chi-squared at fixed seeds) and exact error messages. Each tests/stdlib/dist/*_test.cpp feeds it tables.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt::test {

using Params = std::vector<Value>;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr size_t kDraws = 20000;
inline constexpr uint64_t kSeed = 20240611;
inline constexpr double kMinPValue = 1e-3;  // the fixed seeds make this stable; real bugs give p ~ 0

inline Value num(double x) { return Value(x); }
inline Value vec(std::vector<double> xs) {
  return make_vector(Eigen::Map<Eigen::VectorXd>(xs.data(), std::ssize(xs)));
}
inline Value mat(Eigen::Index rows, Eigen::Index cols, std::vector<double> row_major) {
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = row_major.at(static_cast<size_t>(i * cols + j));
  return make_matrix(std::move(m));
}

inline std::string show(const Params& p) { return to_string(make_list(p)); }

/// A procedure value as the SpProcedure (SP and aux) it must be.
inline const SpProcedure& procedure(const Value& v) {
  auto* p = is_procedure(v) ? dynamic_cast<const SpProcedure*>(std::get<ProcPtr>(v).get()) : nullptr;
  REQUIRE_MESSAGE(p, to_string(v), " is not an SP procedure");
  return *p;
}
/// The SP a builtin name is bound to after register_stdlib() (so registration is tested too).
inline const Sp& builtin_sp(std::string_view name) {
  static const SpRegistry registry = [] {
    SpRegistry r;
    register_stdlib(r);
    return r;
  }();
  const Value* v = registry.find(name);
  REQUIRE_MESSAGE(v, "no builtin ", name);
  return procedure(*v).sp();
}

/// Calls into an Sp with (a copy of) a parameter list and an optional aux, as the trace would.
class Call {
 public:
  Call(const Sp& sp, Params params, SpAux* aux = nullptr) : sp_(sp), params_(std::move(params)), aux_(aux) {}
  Args args() const {
    ptrs_.clear();
    for (const Value& v : params_) ptrs_.push_back(&v);
    return Args(ptrs_, aux_);
  }
  Value simulate(Rng& rng) const { return sp_.simulate(args(), rng); }
  double log_density(const Value& x) const { return sp_.log_density(x, args()); }

 private:
  const Sp& sp_;
  Params params_;
  SpAux* aux_;
  mutable std::vector<const Value*> ptrs_;
};

/// How many of n draws of sp(params) have a log density that is not finite: a draw that underflowed or rounded onto
/// an endpoint where the density is +inf (or outside the support). A draw must stay where its density is finite, or
/// the first move from it would fail (docs/inference.md, "States of infinite density").
inline int draws_of_infinite_density(const Sp& sp, Params params, int n, Rng& rng) {
  const Call call(sp, std::move(params));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += std::isfinite(call.log_density(call.simulate(rng))) ? 0 : 1;
  return bad;
}

/// Runs f, which must throw a vnt::Error of `kind` with exactly `message` and no source position.
template <class F>
void check_error(F&& f, ErrorKind kind, std::string_view message) {
  try {
    f();
    FAIL("no error thrown; expected: ", message);
  } catch (const Error& e) {
    CHECK(e.message() == message);
    CHECK(e.kind() == kind);
    CHECK_FALSE(e.has_span());
  }
}

/// Invalid parameter values: simulate throws kDomain with `message`; log_density(x) is -inf, not an error.
inline void check_invalid(const Sp& sp, const Params& params, const Value& x, std::string_view message) {
  CAPTURE(show(params));
  Call call(sp, params);
  Rng rng(kSeed);
  check_error([&] { call.simulate(rng); }, ErrorKind::kDomain, message);
  CHECK(call.log_density(x) == -kInf);
}

/// Malformed arguments (arity, type): simulate and log_density both throw `message`.
inline void check_malformed(const Sp& sp, const Params& params, const Value& x, ErrorKind kind,
                            std::string_view message) {
  CAPTURE(show(params));
  Call call(sp, params);
  Rng rng(kSeed);
  check_error([&] { call.simulate(rng); }, kind, message);
  check_error([&] { call.log_density(x); }, kind, message);
}

/// kDraws samples at the fixed seed; checks they are reproducible and inside the support (finite density).
inline std::vector<Value> draws(const Sp& sp, const Params& params, SpAux* aux = nullptr) {
  Call call(sp, params, aux);
  Rng rng(kSeed), again(kSeed);
  std::vector<Value> xs;
  for (size_t i = 0; i < kDraws; ++i) {
    xs.push_back(call.simulate(rng));
    double ld = call.log_density(xs.back());
    if (!std::isfinite(ld)) FAIL_CHECK("sample ", to_string(xs.back()), " has log density ", ld);
  }
  for (size_t i = 0; i < 10; ++i) CHECK(values_equal(call.simulate(again), xs[i]));
  return xs;
}

/// One-sample KS p-value: Kolmogorov's limiting distribution with Stephens' small-sample correction
/// (Boost.Math 1.74 has no KS distribution). `xs` must be sorted.
template <class D>
double ks_p_value(const std::vector<double>& xs, const D& ref) {
  double n = static_cast<double>(xs.size()), d = 0, q = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double f = cdf(ref, xs[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  if (lambda < 0.2) return 1.0;  // the series converges slowly there, and Q is 1 to many digits
  for (int k = 1; k <= 100; ++k) q += 2 * (k % 2 ? 1 : -1) * std::exp(-2.0 * k * k * lambda * lambda);
  return std::clamp(q, 0.0, 1.0);
}

/// A continuous distribution on [lo, hi] (infinite ends allowed): the density integrates to 1, matches the pdf
/// of `ref` (a Boost.Math distribution), its partial integrals match ref's cdf, and samples pass a KS test.
/// Integrals are split at `split`, if given: a kink (tanh-sinh assumes a smooth integrand) or a narrow peak that
/// the quadrature of an infinite range would miss.
template <class D>
void check_continuous(const Sp& sp, const Params& params, const D& ref, double lo, double hi,
                      double split = std::numeric_limits<double>::quiet_NaN()) {
  CAPTURE(show(params));
  Call call(sp, params);
  auto density = [&](double x) { return std::exp(call.log_density(num(x))); };
  boost::math::quadrature::tanh_sinh<double> quad;
  auto integral = [&](double a, double b) {
    return split > a && split < b ? quad.integrate(density, a, split) + quad.integrate(density, split, b)
                                  : quad.integrate(density, a, b);
  };
  CHECK(integral(lo, hi) == doctest::Approx(1.0).epsilon(1e-6));

  std::vector<double> xs;
  for (const Value& v : draws(sp, params)) xs.push_back(std::get<double>(v));
  std::sort(xs.begin(), xs.end());
  double p = ks_p_value(xs, ref);
  CAPTURE(p);
  CHECK(p > kMinPValue);
  for (double q : {0.1, 0.5, 0.9}) {
    double t = xs[static_cast<size_t>(q * static_cast<double>(xs.size()))];
    CAPTURE(t);
    CHECK(density(t) == doctest::Approx(pdf(ref, t)).epsilon(1e-9));
    CHECK(integral(lo, t) == doctest::Approx(cdf(ref, t)).epsilon(1e-6));
  }
}

inline double as_number(const Value& v) {
  return is_bool(v) ? (std::get<bool>(v) ? 1.0 : 0.0) : std::get<double>(v);
}
inline std::vector<Value> count_range(int lo, int hi) {
  std::vector<Value> out;
  for (int k = lo; k <= hi; ++k) out.push_back(num(k));
  return out;
}

/// A discrete distribution: the probabilities over `support` (all but a negligible tail) sum to 1 and match
/// `pmf`, enumerate() (if any) lists the support, and samples pass a chi-squared test (bins with < 5 expected
/// merged). `aux` is the state of a made SP.
inline void check_discrete(const Sp& sp, const Params& params, const std::vector<Value>& support,
                           const std::function<double(double)>& pmf, SpAux* aux = nullptr) {
  CAPTURE(show(params));
  Call call(sp, params, aux);
  double total = 0;
  std::unordered_map<Value, size_t, KeyHash, KeyEqual> bin_of;
  std::vector<double> expected;
  for (const Value& x : support) {
    double prob = std::exp(call.log_density(x));
    CHECK(prob == doctest::Approx(pmf(as_number(x))).epsilon(1e-9));
    total += prob;
    bin_of.emplace(x, expected.size());
    expected.push_back(prob * kDraws);
  }
  CHECK(total == doctest::Approx(1.0).epsilon(1e-9));
  if (auto listed = sp.enumerate(call.args())) {
    REQUIRE(listed->size() == support.size());
    for (size_t i = 0; i < support.size(); ++i) CHECK(values_equal((*listed)[i], support[i]));
  }

  std::vector<double> observed(expected.size() + 1, 0.0);  // the last bin: values outside `support`
  expected.push_back(std::max(0.0, 1.0 - total) * kDraws);
  for (const Value& x : draws(sp, params, aux)) {
    auto it = bin_of.find(x);
    observed[it == bin_of.end() ? expected.size() - 1 : it->second] += 1;
  }
  // Merge consecutive bins until each expects at least 5; a short last group joins the previous one.
  std::vector<double> o_bins, e_bins;
  double o = 0, e = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    o += observed[i];
    e += expected[i];
    if (e >= 5) o_bins.push_back(o), e_bins.push_back(e), o = e = 0;
  }
  if (!o_bins.empty()) o_bins.back() += o, e_bins.back() += e;
  if (o_bins.size() < 2) return;  // a point mass: the draws already had to be in the support
  double chi2 = 0;
  for (size_t i = 0; i < o_bins.size(); ++i) chi2 += (o_bins[i] - e_bins[i]) * (o_bins[i] - e_bins[i]) / e_bins[i];
  boost::math::chi_squared_distribution<double> dist(static_cast<double>(o_bins.size() - 1));
  double p = cdf(complement(dist, chi2));
  CAPTURE(chi2);
  CAPTURE(p);
  CHECK(p > kMinPValue);
}

}  // namespace vnt::test
