// Elementary functions: exp, log, powers, rounding, trigonometry, min/max, logistic/logit and logsumexp.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <limits>

#include "runtime/core/logistic.hpp"
#include "runtime/sp/registry.hpp"
#include "stdlib/support/elementwise.hpp"

namespace vnt::stdlib {
namespace {

// Clearly invalid input (log of a negative number) is a kDomain error rather than a silent NaN; boundary values
// keep their IEEE limits (log 0 = -inf, logit 1 = inf). NaN passes through unchanged.
bool non_negative(double x) { return !(x < 0.0); }
bool at_least_minus_one(double x) { return !(x < -1.0); }
bool probability(double x) { return !(x < 0.0 || x > 1.0); }

// Unary functions that accept a number, vector or matrix and keep its shape.
template <class F>
std::shared_ptr<const Sp> unary(std::string name, F f) {
  return make_function_sp(std::move(name), 1, 1, [f](const Call& c) { return map_elementwise(c, 0, f); });
}

template <class F, class Ok>
std::shared_ptr<const Sp> unary_checked(std::string name, F f, Ok ok, std::string_view requirement) {
  return make_function_sp(std::move(name), 1, 1,
                          [f, ok, requirement](const Call& c) { return map_checked(c, 0, f, ok, requirement); });
}

// log p - log(1 - p), with log1p keeping precision for small p.
double logit(double p) { return std::log(p) - std::log1p(-p); }

// A negative base needs an integral exponent, otherwise the real power does not exist (std::pow gives NaN).
Value power(const Call& c) {
  double base = c.number(0);
  double exponent = c.number(1);
  if (base < 0.0 && std::isfinite(exponent) && exponent != std::floor(exponent))
    raise(ErrorKind::kDomain, "pow: argument 2 is {}, but must be an integer when argument 1 ({}) is negative",
          to_string(c[1]), to_string(c[0]));
  return std::pow(base, exponent);
}

// The numbers to reduce: either one vector operand or one or more numbers.
Eigen::VectorXd reduction_operands(const Call& c) {
  if (c.size() == 1 && is_vector(c[0])) return c.vector(0);
  Eigen::VectorXd xs(static_cast<Eigen::Index>(c.size()));
  for (size_t i = 0; i < c.size(); ++i) {
    if (!is_number(c[i]) && !is_bool(c[i])) c.fail_type(i, c.size() == 1 ? "a number or a vector" : "a number");
    xs[static_cast<Eigen::Index>(i)] = c.number(i);
  }
  return xs;
}

// min/max propagate NaN (a NaN operand makes the result NaN, whatever its position).
template <class Better>
Value extremum(const Call& c, Better better) {
  Eigen::VectorXd xs = reduction_operands(c);
  if (xs.size() == 0) c.fail_domain(0, "must be non-empty");
  double best = xs[0];
  for (double x : xs) {
    if (std::isnan(x)) return x;
    if (better(x, best)) best = x;
  }
  return best;
}

// log Σ e^x_i, shifted by the maximum so that no term overflows. An empty sum is -inf; an inf operand gives inf.
Value logsumexp(const Call& c) {
  Eigen::VectorXd xs = reduction_operands(c);
  if (xs.size() == 0) return -std::numeric_limits<double>::infinity();
  // Looks for NaN element by element: the sum is NaN for inf and -inf too, whose logsumexp is inf.
  if (xs.array().isNaN().any()) return std::numeric_limits<double>::quiet_NaN();
  Eigen::Index at = 0;
  const double m = xs.maxCoeff(&at);
  if (std::isinf(m)) return m;
  // m + log1p(the other terms): log of 1 + e^-40 rounded to 0, where the answer is 4.2e-18.
  double rest = 0;
  for (Eigen::Index i = 0; i < xs.size(); ++i)
    if (i != at) rest += std::exp(xs[i] - m);
  return m + std::log1p(rest);
}

}  // namespace

void register_elementary(SpRegistry& r) {
  r.add(unary("exp", [](double x) { return std::exp(x); }));
  r.add(unary("expm1", [](double x) { return std::expm1(x); }));
  auto log_e = [](double x) { return std::log(x); };
  auto log_1p = [](double x) { return std::log1p(x); };
  auto square_root = [](double x) { return std::sqrt(x); };
  r.add(unary_checked("log", log_e, non_negative, "must be non-negative"));
  r.add(unary_checked("log1p", log_1p, at_least_minus_one, "must be at least -1"));
  r.add(unary_checked("sqrt", square_root, non_negative, "must be non-negative"));
  r.add(unary("abs", [](double x) { return std::fabs(x); }));
  r.add(unary("floor", [](double x) { return std::floor(x); }));
  r.add(unary("ceil", [](double x) { return std::ceil(x); }));
  // Halves round away from zero: (round 2.5) is 3, (round -2.5) is -3.
  r.add(unary("round", [](double x) { return std::round(x); }));
  r.add(unary("sin", [](double x) { return std::sin(x); }));
  r.add(unary("cos", [](double x) { return std::cos(x); }));
  r.add(unary("tan", [](double x) { return std::tan(x); }));
  r.add(unary("logistic", logistic));
  r.add(unary_checked("logit", logit, probability, "must be in [0, 1]"));
  r.add(make_function_sp("pow", 2, 2, power));
  r.add(make_function_sp("atan2", 2, 2, [](const Call& c) { return Value(std::atan2(c.number(0), c.number(1))); }));
  r.add(make_function_sp("min", 1, kVariadic,
                         [](const Call& c) { return extremum(c, [](double x, double y) { return x < y; }); }));
  r.add(make_function_sp("max", 1, kVariadic,
                         [](const Call& c) { return extremum(c, [](double x, double y) { return x > y; }); }));
  r.add(make_function_sp("logsumexp", 1, kVariadic, logsumexp));
}

}  // namespace vnt::stdlib
