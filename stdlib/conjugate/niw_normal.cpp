// make_niw_normal(m0, k0, v0, S0): a collapsed multivariate normal whose mean and covariance,
// mu | Sigma ~ multivariate_normal(m0, Sigma / k0) and Sigma ~ inverse_wishart(v0, S0), are integrated out; each draw
// is from the multivariate Student-t posterior predictive. The paper's joint DPM calls it
// make_collapsed_multivariate_normal.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"
#include "stdlib/support/exact_sum.hpp"
#include "stdlib/support/large_gamma.hpp"
#include "stdlib/support/made_sp.hpp"
#include "stdlib/support/spd_factor.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kNiwMakerName = "make_niw_normal";
constexpr std::string_view kNiwName = "niw_normal";
// Beyond this an element's square would overflow the sums of products: such a value has density 0, and m0's
// elements must be within.
constexpr double kNiwMaxAbs = 1e150;
const double kNiwMaxDraw = std::nextafter(kNiwMaxAbs, 0.0);

struct NiwParams {
  Eigen::VectorXd m;
  double k = 0, v = 0;
  Eigen::MatrixXd s;
  bool operator==(const NiwParams& o) const {
    return m.size() == o.m.size() && m == o.m && k == o.k && v == o.v && s == o.s;
  }
};

Eigen::Index dim(const NiwParams& p) { return p.m.size(); }
size_t packed(Eigen::Index d) { return static_cast<size_t>(d * (d + 1) / 2); }

/// The posterior given the draws: mean m', pseudo-count k', degrees of freedom v' and scale S' (as its factor).
struct NiwPosterior {
  Eigen::VectorXd m;
  double k, v;
  Eigen::LLT<Eigen::MatrixXd> llt;
  double log_det = 0;
  double log_norm = 0;  // the predictive's normalising constant (log_predictive)
  bool ok = false;      // S' factorised (it always does unless S0 is near singular and the draws cancel it)
};

NiwPosterior posterior(const class NiwAux& aux, const NiwParams& p);

// The draws' count, elementwise sum and sum of outer products (its upper triangle, row by row), all exact sums: a
// rejected move restores them bit for bit. And the prior's parameters (the maker's arguments, here so that a move of
// them reaches every draw without making the procedure again). The posterior under them is kept until either changes:
// collapsed Gibbs scores every table at each move, and only two of them changed since the last (a factor is O(D^3)).
class NiwAux final : public SpAux {
 public:
  explicit NiwAux(NiwParams p)
      : sum(static_cast<size_t>(dim(p))), outer(packed(dim(p))), prior_(std::move(p)) {}

  double n = 0;
  std::vector<ExactSum> sum, outer;

  const NiwParams& prior() const { return prior_; }
  void set_prior(NiwParams p) {
    prior_ = std::move(p);
    posterior_.reset();
  }
  /// The posterior under the prior held.
  const NiwPosterior& current() const {
    if (!posterior_) posterior_ = std::make_shared<const NiwPosterior>(posterior(*this, prior_));
    return *posterior_;
  }

  std::unique_ptr<SpAux> clone() const override { return std::make_unique<NiwAux>(*this); }
  bool equals(const SpAux& other) const override {
    const auto* o = dynamic_cast<const NiwAux*>(&other);
    return o && o->prior_ == prior_ && o->n == n && o->sum == sum && o->outer == outer;
  }
  std::string to_string() const override {
    return fmt::format("n {}, sum {}", vnt::to_string(Value(n)), vnt::to_string(make_vector(sums())));
  }

  Eigen::VectorXd sums() const {
    Eigen::VectorXd s(dim(prior_));
    for (Eigen::Index i = 0; i < s.size(); ++i) s[i] = sum[static_cast<size_t>(i)].value();
    return s;
  }
  Eigen::MatrixXd outer_sums() const {
    const Eigen::Index d = dim(prior_);
    Eigen::MatrixXd q(d, d);
    size_t at = 0;
    for (Eigen::Index i = 0; i < d; ++i)
      for (Eigen::Index j = i; j < d; ++j) q(i, j) = q(j, i) = outer[at++].value();
    return q;
  }
  void add(const Eigen::VectorXd& x, double sign) {
    posterior_.reset();
    n += sign;
    size_t at = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      sum[static_cast<size_t>(i)].add(sign * x[i]);
      for (Eigen::Index j = i; j < x.size(); ++j) outer[at++].add(sign * (x[i] * x[j]));
    }
  }

 private:
  NiwParams prior_;
  mutable std::shared_ptr<const NiwPosterior> posterior_;  // shared by clones: it is never changed, only dropped
};

NiwPosterior posterior(const NiwAux& aux, const NiwParams& p) {
  NiwPosterior q{p.m, p.k, p.v, {}, 0, false};
  Eigen::MatrixXd s = p.s;
  if (aux.n > 0) {
    const double n = aux.n;
    const Eigen::VectorXd total = aux.sums(), mean = total / n;
    q.k = p.k + n;
    q.v = p.v + n;
    q.m = (p.k * p.m + total) / q.k;
    // The scatter about the draws' mean, then the mean's distance from m0: no difference of large terms beyond the
    // scatter's own.
    const Eigen::VectorXd shift = mean - p.m;
    s += aux.outer_sums() - total * mean.transpose() + (p.k * n / q.k) * shift * shift.transpose();
  }
  q.llt.compute(s);
  q.ok = q.llt.info() == Eigen::Success;
  if (!q.ok) return q;
  q.log_det = 2 * q.llt.matrixLLT().diagonal().array().log().sum();
  // The multivariate t's, its degrees of freedom cancelled from the shape's terms: lgamma((df + D) / 2) -
  // lgamma(df / 2) - D/2 log(pi (k' + 1) / k') - log|S'| / 2.
  const double d = static_cast<double>(q.m.size()), df = q.v - d + 1;
  q.log_norm = std::lgamma((df + d) / 2) - std::lgamma(df / 2) -
               d / 2 * (std::log(std::numbers::pi) + std::log1p(1 / q.k)) - q.log_det / 2;
  return q;
}

/// log Gamma_D(a), the multivariate gamma function.
double log_multi_gamma(Eigen::Index d, double a) {
  double r = static_cast<double>(d * (d - 1)) / 4 * std::log(std::numbers::pi);
  for (Eigen::Index j = 0; j < d; ++j) r += std::lgamma(a - static_cast<double>(j) / 2);
  return r;
}

const Eigen::VectorXd* in_support(const Value& x, Eigen::Index d) {
  const auto* v = std::get_if<VectorPtr>(&x);
  if (v == nullptr || (*v)->size() != d || !((*v)->array().abs() < kNiwMaxAbs).all()) return nullptr;
  return v->get();
}

// Applications are exchangeable: each one sees the posterior predictive given the draws in the aux, a multivariate
// Student-t with v' - D + 1 degrees of freedom, location m' and shape S' (k' + 1) / (k' (v' - D + 1)).
class NiwNormal final : public Sp {
 public:
  std::string_view name() const override { return kNiwName; }
  bool is_random() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const NiwPosterior& q = state(args).current();
    if (!q.ok) raise(ErrorKind::kDomain, "{}: the posterior scale matrix is not positive definite", kNiwName);
    // x = m' + L z sqrt((k' + 1) / k') / sqrt(chi^2_df), the chi-square as 2 df g, g ~ gamma(df / 2) / (df / 2),
    // the scale in logarithms (a tiny df draws a g that underflows).
    const double df = q.v - static_cast<double>(q.m.size()) + 1;
    const double log_g = std::log(unit_gamma_draw(rng, df / 2)) + std::log(df);
    const double scale = std::exp(0.5 * (std::log1p(1 / q.k) - log_g));
    Eigen::VectorXd z(q.m.size());
    for (Eigen::Index i = 0; i < z.size(); ++i) z[i] = rng.normal();
    Eigen::VectorXd x = q.llt.matrixL() * z;
    x = q.m + scale * x;
    for (Eigen::Index i = 0; i < x.size(); ++i)
      x[i] = std::isnan(x[i]) ? q.m[i] : std::clamp(x[i], -kNiwMaxDraw, kNiwMaxDraw);
    return make_vector(std::move(x));
  }

  double log_density(const Value& x, const Args& args) const override {
    const NiwAux& aux = state(args);
    const Eigen::VectorXd* y = in_support(x, dim(aux.prior()));
    if (y == nullptr) return kNegInf;
    const NiwPosterior& q = aux.current();
    return q.ok ? log_predictive(q, *y) : kNegInf;
  }

  /// The multivariate t's log density: its normalising constant - (df + D) / 2 log(1 + r), with df = v' - D + 1 and
  /// r = (x - m')^T S'^-1 (x - m') k' / (k' + 1).
  static double log_predictive(const NiwPosterior& q, const Eigen::VectorXd& x) {
    const double d = static_cast<double>(q.m.size()), df = q.v - d + 1;
    const double r = q.llt.matrixL().solve(x - q.m).squaredNorm() * (q.k / (q.k + 1));
    return q.log_norm - (df + d) / 2 * std::log1p(r);
  }

  void incorporate(const Value& x, const Args& args) const override {
    NiwAux& aux = state(args);
    const Eigen::VectorXd* y = in_support(x, dim(aux.prior()));
    if (y != nullptr) aux.add(*y, 1);  // otherwise scored -inf and undone, never counted
  }

  void unincorporate(const Value& x, const Args& args) const override {
    NiwAux& aux = state(args);
    const Eigen::VectorXd* y = in_support(x, dim(aux.prior()));
    if (y == nullptr) return;
    VNT_ASSERT(aux.n > 0, "{}: unincorporating {} that was never incorporated", kNiwName, to_string(x));
    aux.add(*y, -1);
  }

 private:
  static NiwAux& state(const Args& args) { return made_state<NiwAux>(args, kNiwName, "statistics"); }
};

// Why (m0, k0, v0, S0) is no prior (a message's tail, naming the argument), or empty; log|S0| in `log_det`.
// Throws kArity and kType.
std::string niw_problem(const Args& args, NiwParams& p, double* log_det = nullptr) {
  check_arity(kNiwMakerName, args, 4);
  p.m = as_vector(args[0], ArgRef{kNiwMakerName, 1, "m0"});
  p.k = as_double(args[1], ArgRef{kNiwMakerName, 2, "k0"});
  p.v = as_double(args[2], ArgRef{kNiwMakerName, 3, "v0"});
  p.s = as_matrix(args[3], ArgRef{kNiwMakerName, 4, "S0"});
  const Eigen::Index d = p.m.size();
  if (d == 0) return "argument 1 (m0) is empty, but must have at least one element";
  if (!(p.m.array().abs() < kNiwMaxAbs).all())
    return fmt::format("argument 1 (m0) is {}, but its elements must be between -1e150 and 1e150",
                       to_string(args[0]));
  if (!in_domain(Domain::kPositive, p.k))
    return fmt::format("argument 2 (k0) is {}, but {}", to_string(args[1]),
                       domain_requirement(Domain::kPositive, p.k));
  if (!(p.v > static_cast<double>(d - 1) && std::isfinite(p.v)))
    return fmt::format("argument 3 (v0) is {}, but must be finite and greater than {} (the dimension less one)",
                       to_string(args[2]), d - 1);
  if (p.s.rows() != d || p.s.cols() != d)
    return fmt::format("argument 4 (S0) is {}x{}, but must be {}x{} to match argument 1 (m0)", p.s.rows(),
                       p.s.cols(), d, d);
  const auto f = factorise_spd(p.s);
  if (log_det != nullptr) *log_det = f->log_det;
  return f->problem.empty() ? std::string() : "argument 4 (S0) " + f->problem;
}

// Absorbs a change of m0, k0, v0 or S0 (absorbing at applications): the procedure and its draws stay, the parameters
// are set in its state, and the maker weighs all the draws at once by their marginal likelihood,
// pi^(-nD/2) Gamma_D(v'/2) / Gamma_D(v0/2) |S0|^(v0/2) / |S'|^(v'/2) (k0 / k')^(D/2).
class MakeNiwNormal final : public Sp {
 public:
  std::string_view name() const override { return kNiwMakerName; }
  bool can_absorb(size_t /*index*/) const override { return true; }

  Value simulate(const Args& args, Rng& /*rng*/) const override {
    NiwParams p;
    const std::string problem = niw_problem(args, p);
    if (!problem.empty()) raise(ErrorKind::kDomain, "{}: {}", kNiwMakerName, problem);
    return make_procedure(std::make_shared<NiwNormal>(), std::make_unique<NiwAux>(std::move(p)));
  }

  double log_density(const Value& made, const Args& args) const override {
    NiwParams p;
    double prior_log_det = 0;
    const NiwAux& aux = niw(made);
    if (!niw_problem(args, p, &prior_log_det).empty() || dim(p) != dim(aux.prior())) return kNegInf;
    if (aux.n == 0) return 0;
    const NiwPosterior q = posterior(aux, p);
    if (!q.ok) return kNegInf;
    const Eigen::Index d = dim(p);
    const double dd = static_cast<double>(d);
    const double w = -aux.n * dd / 2 * std::log(std::numbers::pi) + log_multi_gamma(d, q.v / 2) -
                     log_multi_gamma(d, p.v / 2) + p.v / 2 * prior_log_det - q.v / 2 * q.log_det +
                     dd / 2 * (std::log(p.k) - std::log(q.k));
    return std::isnan(w) ? kNegInf : w;
  }

  void incorporate(const Value& made, const Args& args) const override {
    NiwParams p;
    NiwAux& aux = niw(made);
    if (!niw_problem(args, p).empty() || dim(p) != dim(aux.prior())) return;  // scored -inf, and undone
    aux.set_prior(std::move(p));
  }

 private:
  static NiwAux& niw(const Value& made) { return state_of_made<NiwAux>(made, kNiwMakerName); }
};

}  // namespace

void register_niw_normal(SpRegistry& r) { r.add(std::make_shared<MakeNiwNormal>()); }

}  // namespace vnt::stdlib
