// Adapter that turns a small struct with scalar parameters into an Sp, so a distribution is one file.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <tuple>

#include "runtime/core/error.hpp"
#include "runtime/sp/param_spec.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"

namespace vnt {

/// A scalar distribution: kName, kParams (ParamSpec array), kSupport, and static
///   double simulate(Rng&, double... params);  double log_density(double x, double... params);
/// Optional: `static std::vector<double> enumerate(double... params)` for finite supports, or returning a
/// std::optional of one, nullopt where the support is too large to list (as an SP without enumerate); and for a first
/// parameter that is a probability, `static bool rounded(double x, double p)` (whether the density of x has lost
/// accuracy to the rounding of p) with `static double log_density_logit(double x, double z)`, used when the
/// operand's log-odds z are known (Args::log_odds).
template <class D>
concept Distribution = requires {
  { D::kName } -> std::convertible_to<std::string_view>;
  { D::kSupport } -> std::convertible_to<Support>;
  std::size(D::kParams);
};

namespace detail {

template <class D, size_t... I>
double call_simulate(Rng& rng, const std::array<double, sizeof...(I)>& p, std::index_sequence<I...>) {
  return D::simulate(rng, p[I]...);
}
template <class D, size_t... I>
double call_log_density(double x, const std::array<double, sizeof...(I)>& p, std::index_sequence<I...>) {
  return D::log_density(x, p[I]...);
}
template <class D, size_t... I>
auto call_enumerate(const std::array<double, sizeof...(I)>& p, std::index_sequence<I...>)
    -> decltype(D::enumerate(p[I]...)) {  // SFINAE-visible, so the adapter can detect a missing enumerate
  return D::enumerate(p[I]...);
}

}  // namespace detail

template <Distribution D>
class DistributionSp final : public Sp {
  static constexpr size_t kArity = std::size(D::kParams);
  static constexpr size_t required_count() {
    size_t n = 0;
    for (const ParamSpec& p : D::kParams)
      if (std::isnan(p.default_value)) ++n;
    return n;
  }
  using Params = std::array<double, kArity>;
  using Seq = std::make_index_sequence<kArity>;

 public:
  std::string_view name() const override { return D::kName; }
  bool is_random() const override { return true; }
  bool real_valued() const override { return support_is_real(D::kSupport); }

  Value simulate(const Args& args, Rng& rng) const override {
    Params p;
    read_params(args, p, /*throw_on_domain=*/true);
    return to_value(detail::call_simulate<D>(rng, p, Seq{}));
  }

  double log_density(const Value& x, const Args& args) const override {
    Params p;
    if (!read_params(args, p, /*throw_on_domain=*/false)) return kNegInf;
    double v;
    if (!from_value(x, v)) return kNegInf;
    if constexpr (requires { D::rounded(0.0, 0.0); D::log_density_logit(0.0, 0.0); }) {
      // A probability computed as logistic(z) may have rounded away the answer: score from z then.
      if (D::rounded(v, p[0]))
        if (std::optional<double> z = args.log_odds(0)) return D::log_density_logit(v, *z);
    }
    return detail::call_log_density<D>(v, p, Seq{});
  }

  Value canonical(const Value& x) const override {
    double v, back;
    if (!from_value(x, v)) return x;
    // Only a value the SP's own form keeps: flip's 1 is true, but 2 stays 2, which has probability zero.
    const Value c = to_value(v);
    return from_value(c, back) && back == v ? c : x;
  }

  std::optional<std::vector<Value>> enumerate(const Args& args) const override {
    if constexpr (requires(Params p) { detail::call_enumerate<D>(p, Seq{}); }) {
      Params p;
      read_params(args, p, true);
      const std::optional<std::vector<double>> values = detail::call_enumerate<D>(p, Seq{});
      if (!values) return std::nullopt;
      std::vector<Value> out;
      out.reserve(values->size());
      for (double v : *values) out.push_back(to_value(v));
      return out;
    } else {
      return std::nullopt;
    }
  }

 private:
  // Reads and checks parameters. Domain violations throw (simulate) or report false (log_density).
  bool read_params(const Args& args, Params& p, bool throw_on_domain) const {
    check_arity(D::kName, args, required_count(), kArity);
    for (size_t i = 0; i < kArity; ++i) {
      const ParamSpec& spec = D::kParams[i];
      p[i] = i < args.size() ? as_double(args[i], ArgRef{D::kName, i + 1, spec.name}) : spec.default_value;
      if (!in_domain(spec.domain, p[i])) {
        if (!throw_on_domain) return false;
        raise(ErrorKind::kDomain, "{}: argument {} ({}) is {}, but {}", D::kName, i + 1, spec.name,
              to_string(Value(p[i])), domain_requirement(spec.domain, p[i]));
      }
    }
    return true;
  }

  static Value to_value(double v) {
    if constexpr (D::kSupport == Support::kBoolean) return Value(v != 0.0);
    return Value(v);
  }
  static bool from_value(const Value& x, double& v) {
    if (auto* d = std::get_if<double>(&x)) {
      v = *d;
      return !std::isnan(v);
    }
    if (auto* b = std::get_if<bool>(&x)) {
      v = *b ? 1.0 : 0.0;
      return true;
    }
    return false;
  }
};

template <Distribution D>
std::shared_ptr<const Sp> make_distribution_sp() {
  return std::make_shared<DistributionSp<D>>();
}

}  // namespace vnt
