// Mixtures of collapsed coins (and categoricals, normals, bivariate normals, Poissons): each observed flip is of the coin its latent key
// picks (`((coins (z i)))`), so a move of the key takes the observation from one coin to another. Against the exact posterior: all 2^6 assignments of a
// two-coin mixture, all 203 partitions of a Dirichlet process mixture (the CRP's Ewens prior times each table's
// beta-binomial marginal likelihood, the coins' weights integrated out), and a key that switches an observation
// between a primitive and a compound procedure.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/niw_reference.hpp"
#include "tests/support/partitions.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

namespace vnt::test::collapsed_mixture_tests {
namespace {

constexpr std::array<bool, 6> kX = {true, true, true, false, false, true};
constexpr size_t kN = kX.size(), kBurnIn = 200;
constexpr double kA = 0.5, kB = 0.5;  // each coin's weight ~ beta(kA, kB), integrated out

double log_beta_fn(double x, double y) { return std::lgamma(x) + std::lgamma(y) - std::lgamma(x + y); }

/// log of a coin's marginal likelihood of the points `members` flipped with it.
double log_marginal(const std::vector<size_t>& members) {
  double heads = 0, tails = 0;
  for (size_t i : members) (kX[i] ? heads : tails) += 1;
  return log_beta_fn(kA + heads, kB + tails) - log_beta_fn(kA, kB);
}

/// What the checks read off an assignment (component keys per point, any labels).
struct Events {
  static constexpr size_t kCount = 6;
  static std::array<bool, kCount> of(const std::array<double, kN>& z) {
    const size_t k = distinct_labels(z);
    return {z[0] == z[1], z[3] == z[4], z[0] == z[3], z[0] == z[5], k == 1, k == 2};
  }
  static constexpr std::array<std::string_view, kCount> kNames = {"z0 = z1", "z3 = z4",   "z0 = z3",
                                                                  "z0 = z5", "1 cluster", "2 clusters"};
};

using Probabilities = std::array<double, Events::kCount>;

/// Adds the events of one assignment, weighted by exp(log_weight); returns the weight.
double add_events(Probabilities& p, const std::array<double, kN>& z, double log_weight) {
  const double w = std::exp(log_weight);
  const auto e = Events::of(z);
  for (size_t k = 0; k < Events::kCount; ++k) p[k] += e[k] ? w : 0;
  return w;
}

/// Two components, keys z_i ~ flip(0.5): every assignment is equally likely a priori.
using LogMarginal = std::function<double(const std::vector<size_t>&)>;

Probabilities exact_two_components(const LogMarginal& log_marginal_of) {
  Probabilities p{};
  double total = 0;
  for (unsigned bits = 0; bits < (1U << kN); ++bits) {
    std::array<std::vector<size_t>, 2> members;
    std::array<double, kN> z{};
    for (size_t i = 0; i < kN; ++i) {
      z[i] = (bits >> i) & 1U;
      members[(bits >> i) & 1U].push_back(i);
    }
    total += add_events(p, z, log_marginal_of(members[0]) + log_marginal_of(members[1]));
  }
  for (double& x : p) x /= total;
  return p;
}

/// z ~ CRP(alpha): the Ewens weight alpha^K prod (n_k - 1)! times each table's marginal likelihood.
Probabilities exact_crp(double alpha, const LogMarginal& log_marginal_of) {
  Probabilities p{};
  double total = 0;
  for_each_partition(kN, [&](const Partition& q) {
    double lw = static_cast<double>(q.size()) * std::log(alpha);
    std::array<double, kN> z{};
    for (size_t c = 0; c < q.size(); ++c) {
      lw += std::lgamma(static_cast<double>(q[c].size())) + log_marginal_of(q[c]);
      for (size_t i : q[c]) z[i] = static_cast<double>(c);
    }
    total += add_events(p, z, lw);
  });
  for (double& x : p) x /= total;
  return p;
}

std::string observations() {
  std::string text;
  for (size_t i = 0; i < kN; ++i) text += fmt::format("[observe ((coins (z {}))) {}]\n", i, kX[i]);
  return text;
}

std::string collect_z() {
  std::string text = "(collect";
  for (size_t i = 0; i < kN; ++i) text += fmt::format(" (z {})", i);
  return text + ")";
}

/// The events' indicators over the collected draws, checked against `exact`; `wrong`, a posterior the checks must
/// tell apart, is rejected by at least one of them.
void check_events(ProgramRun& run, const Probabilities& exact, const Probabilities& wrong) {
  std::array<std::vector<double>, kN> z;
  for (size_t i = 0; i < kN; ++i) z[i] = run.column(fmt::format("(z {})", i), kBurnIn);
  bool any_rejected = false;
  for (size_t k = 0; k < Events::kCount; ++k) {
    std::vector<double> ind;
    for (size_t r = 0; r < z[0].size(); ++r) {
      std::array<double, kN> row{};
      for (size_t i = 0; i < kN; ++i) row[i] = z[i][r];
      ind.push_back(Events::of(row)[k] ? 1 : 0);
    }
    MESSAGE(Events::kNames[k] << ": exact " << exact[k] << " (wrong: " << wrong[k] << ")");
    check_probability(ind, exact[k]);
    any_rejected = any_rejected || !evaluate_probability(ind, wrong[k]).ok;
  }
  CHECK_MESSAGE(any_rejected, "no check tells the wrong posterior apart");
}

/// The posterior of independent coins of weight 0.5 (each flip's probability fixed, nothing collapsed): what the
/// keys would follow if a move of one did not take its observation to the other coin's counts.
Probabilities uninformed() {
  Probabilities p{};
  double total = 0;
  for (unsigned bits = 0; bits < (1U << kN); ++bits) {
    std::array<double, kN> z{};
    for (size_t i = 0; i < kN; ++i) z[i] = (bits >> i) & 1U;
    total += add_events(p, z, 0);
  }
  for (double& x : p) x /= total;
  return p;
}

struct Kernel {
  std::string_view text;
  uint64_t seed;
};

/// A Dirichlet process mixture (make_crp 1) whose table k's component is `maker` (collapsed), point i observed as
/// `ys[i]` (the value's text) drawn from its table's: gibbs (seed) and mh (seed + 1) on the seats against all
/// partitions.
void check_dpm_of(const std::string& maker, const std::array<std::string, kN>& ys, const LogMarginal& log_marginal_of,
                  uint64_t seed) {
  std::string model = fmt::format(R"(
[assume crp (make_crp 1)]
[assume z (mem (lambda (i) (scope_include 'z i (crp))))]
[assume component (mem (lambda (k) {}))]
)",
                                  maker);
  for (size_t i = 0; i < kN; ++i) model += fmt::format("[observe ((component (z {}))) {}]\n", i, ys[i]);
  const Probabilities exact = exact_crp(1, log_marginal_of), wrong = exact_crp(4, log_marginal_of);
  for (const Kernel& k : {Kernel{"(gibbs z one 6)", seed}, Kernel{"(mh z one 6)", seed + 1}}) {
    CAPTURE(k.text);
    ProgramRun run(model + fmt::format("[infer (repeat 20000 (do {} {}))]\n", k.text, collect_z()), k.seed);
    check_events(run, exact, wrong);
  }
}

std::array<std::string, kN> texts(const std::array<double, kN>& ys) {
  std::array<std::string, kN> out;
  for (size_t i = 0; i < kN; ++i) out[i] = fmt::format("{}", ys[i]);
  return out;
}

/// The draws of a hyperparameter (column `name` of `run`) against its posterior, `log_post` normalised over (lo, hi):
/// mean and sd; the posterior is told apart from the prior, whose mean is `prior_mean`.
template <class LogPost>
void check_hyperparameter(ProgramRun& run, const std::string& name, const LogPost& log_post, double lo, double hi,
                          double prior_mean) {
  const Moments exact = moments_1d(log_post, lo, hi);
  const std::vector<double> x = run.column(name, kBurnIn);
  MESSAGE(name << " given the draws: exact " << exact.mean << " +- " << exact.sd);
  check_mean(x, exact.mean, exact.sd);
  check_sd(x, exact.sd);
  expect_rejected(evaluate_mean(x, prior_mean, exact.sd));
}

}  // namespace

// Until the thirty-eighth session a move of a key stopped the [infer] with "this proposal would change an observed
// value ... the procedure it applies depends on the proposal". Now the observation is taken from the old coin
// (its density there is in the reverse weight) and given to the new one (its density there in the forward weight).
TEST_CASE("two collapsed coins picked by latent keys: mh, gibbs and pgibbs move the observations with the keys") {
  const Probabilities exact = exact_two_components(log_marginal), wrong = uninformed();
  const std::string model = fmt::format(R"(
[assume z (mem (lambda (i) (scope_include 'z i (flip 0.5))))]
[assume coins (mem (lambda (k) (make_beta_bernoulli {} {})))]
{})",
                                        kA, kB, observations());
  for (const Kernel& k : {Kernel{"(mh z one 6)", 101}, Kernel{"(gibbs z one 6)", 102},
                          Kernel{"(pgibbs z ordered 3 1)", 103}}) {
    CAPTURE(k.text);
    ProgramRun run(model + fmt::format("[infer (repeat 20000 (do {} {}))]\n", k.text, collect_z()), k.seed);
    check_events(run, exact, wrong);
  }
}

// A Dirichlet process mixture with collapsed components: gibbs on the assignments is Neal's (2000) algorithm 3 (the
// components' parameters integrated out), a customer offered the occupied tables and a new one with a fresh coin.
TEST_CASE("a Dirichlet process mixture of collapsed coins: the assignments' posterior over all partitions") {
  const Probabilities exact = exact_crp(1, log_marginal), wrong = exact_crp(4, log_marginal);
  const std::string model = fmt::format(R"(
[assume crp (make_crp 1)]
[assume z (mem (lambda (i) (scope_include 'z i (crp))))]
[assume coins (mem (lambda (k) (make_beta_bernoulli {} {})))]
{})",
                                        kA, kB, observations());
  // mh default all: every key at once, from the CRP's sequential form (cycled with gibbs, which mixes better).
  for (const Kernel& k : {Kernel{"(gibbs z one 6)", 104}, Kernel{"(mh z one 6)", 105},
                          Kernel{"(pgibbs z ordered 3 1)", 106}, Kernel{"(mh default all 1) (gibbs z one 6)", 107}}) {
    CAPTURE(k.text);
    ProgramRun run(model + fmt::format("[infer (repeat 20000 (do {} {}))]\n", k.text, collect_z()), k.seed);
    check_events(run, exact, wrong);
  }
}

// The same with collapsed categoricals (make_sym_dir_cat) over three categories: each key's component draws its
// points from a categorical whose probabilities, dirichlet(0.5, 0.5, 0.5), are integrated out.
TEST_CASE("two collapsed categoricals picked by latent keys: the assignments' posterior over all of them") {
  constexpr std::array<int, kN> kCategory = {0, 0, 2, 1, 1, 0};
  constexpr double kAlpha = 0.5;
  auto log_marginal_die = [&](const std::vector<size_t>& members) {
    std::array<double, 3> counts{};
    for (size_t i : members) counts[static_cast<size_t>(kCategory[i])] += 1;
    double w = std::lgamma(3 * kAlpha) - std::lgamma(3 * kAlpha + static_cast<double>(members.size()));
    for (double n : counts) w += std::lgamma(kAlpha + n) - std::lgamma(kAlpha);
    return w;
  };
  const Probabilities exact = exact_two_components(log_marginal_die);
  std::string model = fmt::format(R"(
[assume z (mem (lambda (i) (scope_include 'z i (flip 0.5))))]
[assume dice (mem (lambda (k) (make_sym_dir_cat {} 3)))]
)",
                                  kAlpha);
  for (size_t i = 0; i < kN; ++i) model += fmt::format("[observe ((dice (z {}))) {}]\n", i, kCategory[i]);
  for (const Kernel& k : {Kernel{"(gibbs z one 6)", 109}, Kernel{"(mh z one 6)", 110}}) {
    CAPTURE(k.text);
    ProgramRun run(model + fmt::format("[infer (repeat 20000 (do {} {}))]\n", k.text, collect_z()), k.seed);
    check_events(run, exact, uninformed());
  }
}

// A random concentration: make_sym_dir_cat absorbs a move of it. Draws 0, 0, 0, 2, 0, 1, 0 observed: a | draws is
// proportional to e^-a Gamma(3a) / Gamma(3a + 7) Gamma(a + 5) Gamma(a + 1)^2 / Gamma(a)^3.
TEST_CASE("a collapsed categorical with a random concentration: the maker absorbs a move of it") {
  ProgramRun run(R"(
[assume a (gamma 1 1)]
[assume die (make_sym_dir_cat a 3)]
[observe (die) 0] [observe (die) 0] [observe (die) 0] [observe (die) 2] [observe (die) 0] [observe (die) 1]
[observe (die) 0]
[infer (repeat 20000 (do (mh default one 1) (collect a (die))))]
)",
                 111);
  auto log_post = [](double a) {
    return -a + std::lgamma(3 * a) - std::lgamma(3 * a + 7) + std::lgamma(a + 5) + 2 * std::lgamma(a + 1) -
           3 * std::lgamma(a);
  };
  check_hyperparameter(run, "a", log_post, 0, INFINITY, 1.0);  // the prior's mean 1
  // The next draw is 0 with probability E[(a + 5) / (3a + 7)].
  const double m0 = integrate([&](double x) { return std::exp(log_post(x)); }, 0, INFINITY);
  const double p0 = integrate([&](double x) { return (x + 5) / (3 * x + 7) * std::exp(log_post(x)); }, 0, INFINITY) / m0;
  MESSAGE("P(next draw = 0): exact " << p0);
  check_probability(indicator(run.column("(die)", kBurnIn), 0), p0);
}

// A Dirichlet process mixture of Gaussians with unknown means and variances, both integrated out (make_nig_normal):
// the components' marginal likelihoods in closed form, against all 203 partitions.
TEST_CASE("a Dirichlet process mixture of collapsed normals (normal-inverse-gamma): all partitions") {
  constexpr std::array<double, kN> kY = {-2.1, -1.7, 0.4, 2.2, 2.9, -2.6};
  constexpr double kM = 0, kV = 4, kShape = 2, kScale = 1;
  auto log_marginal_nig = [&](const std::vector<size_t>& members) {
    double n = 0, s = 0, q = 0;
    for (size_t i : members) n += 1, s += kY[i], q += kY[i] * kY[i];
    const double vn = 1 / (1 / kV + n), mn = vn * (kM / kV + s), an = kShape + n / 2;
    const double bn = kScale + 0.5 * (q + kM * kM / kV - mn * mn / vn);
    return std::lgamma(an) - std::lgamma(kShape) + kShape * std::log(kScale) - an * std::log(bn) +
           0.5 * std::log(vn / kV) - n / 2 * std::log(2 * std::numbers::pi);
  };
  check_dpm_of(fmt::format("(make_nig_normal {} {} {} {})", kM, kV, kShape, kScale), texts(kY), log_marginal_nig,
               112);
}

// A random prior mean: make_nig_normal absorbs a move of it. m | draws is proportional to N(m; 0, 2) p(draws | m).
TEST_CASE("a collapsed normal with a random prior mean: the maker absorbs a move of it") {
  ProgramRun run(R"(
[assume m (scope_include 'm 0 (normal 0 2))]
[assume g (make_nig_normal m 0.5 2 1)]
[observe (g) 1.9] [observe (g) 2.6] [observe (g) 1.4] [observe (g) 2.2]
[infer (repeat 20000 (do (mh m one 'drift 1 1) (collect m)))]
)",
                 114);
  const std::array<double, 4> ys = {1.9, 2.6, 1.4, 2.2};
  auto log_post = [&](double m) {
    const double v = 0.5, a = 2, b = 1, n = 4;
    double s = 0, q = 0;
    for (double y : ys) s += y, q += y * y;
    const double vn = 1 / (1 / v + n), mn = vn * (m / v + s), bn = b + 0.5 * (q + m * m / v - mn * mn / vn);
    return log_normal_pdf(m, 0, 2) - (a + n / 2) * std::log(bn);  // the terms free of m dropped
  };
  check_hyperparameter(run, "m", log_post, -30, 30, 0.0);  // the prior's mean 0
}

TEST_CASE("a Dirichlet process mixture of collapsed Poissons (gamma-Poisson): all partitions") {
  constexpr std::array<double, kN> kCounts = {0, 1, 7, 9, 2, 8};
  constexpr double kShape = 2, kRate = 0.5;
  auto log_marginal_gp = [&](const std::vector<size_t>& members) {
    double n = 0, s = 0, log_fact = 0;
    for (size_t i : members) n += 1, s += kCounts[i], log_fact += std::lgamma(kCounts[i] + 1);
    return std::lgamma(kShape + s) - std::lgamma(kShape) + kShape * std::log(kRate) -
           (kShape + s) * std::log(kRate + n) - log_fact;
  };
  check_dpm_of(fmt::format("(make_gamma_poisson {} {})", kShape, kRate), texts(kCounts), log_marginal_gp, 116);
}

// A random prior rate: make_gamma_poisson absorbs a move of it. b | counts is proportional to
// gamma(b; 2, 1) b^3 / (b + n)^(3 + s).
TEST_CASE("a collapsed Poisson with a random prior rate: the maker absorbs a move of it") {
  ProgramRun run(R"(
[assume b (scope_include 'b 0 (gamma 2 1))]
[assume g (make_gamma_poisson 3 b)]
[observe (g) 4] [observe (g) 1] [observe (g) 6] [observe (g) 3] [observe (g) 2]
[infer (repeat 20000 (do (mh b one 'drift 0.5 1) (collect b)))]
)",
                 118);
  auto log_post = [&](double b) {
    const double n = 5, s = 16;
    return std::log(b) - b + 3 * std::log(b) - (3 + s) * std::log(b + n);  // gamma(2, 1) times the marginal
  };
  check_hyperparameter(run, "b", log_post, 1e-9, 60, 2.0);  // the prior's mean 2
}

// The same with collapsed bivariate normals, mean and covariance integrated out (make_niw_normal), the components'
// marginal likelihoods from the textbook update (tests/support/niw_reference.hpp).
TEST_CASE("a Dirichlet process mixture of collapsed bivariate normals (normal-inverse-Wishart): all partitions") {
  const std::array<Eigen::Vector2d, kN> kPoints = {Eigen::Vector2d(-2.1, 1.0), Eigen::Vector2d(-1.7, 1.6),
                                                   Eigen::Vector2d(0.4, -0.3), Eigen::Vector2d(2.2, -1.5),
                                                   Eigen::Vector2d(2.9, -0.8), Eigen::Vector2d(-2.6, 0.7)};
  Eigen::Matrix2d s;
  s << 1.0, 0.3, 0.3, 0.8;
  const NiwPrior prior{Eigen::Vector2d(0, 0), 0.25, 3, s};
  auto log_marginal_niw = [&](const std::vector<size_t>& members) {
    std::vector<Eigen::VectorXd> xs;
    for (size_t i : members) xs.emplace_back(kPoints[i]);
    return niw_log_marginal(prior, xs);
  };
  std::array<std::string, kN> values;
  for (size_t i = 0; i < kN; ++i) values[i] = fmt::format("(vector {} {})", kPoints[i][0], kPoints[i][1]);
  check_dpm_of("(make_niw_normal (vector 0 0) 0.25 3 (matrix (vector 1 0.3) (vector 0.3 0.8)))", values,
               log_marginal_niw, 120);
}

// A random prior mean: make_niw_normal absorbs a move of it. m | draws is proportional to N(m; 0, 2) times the
// marginal likelihood of the draws under m0 = (m, -m).
TEST_CASE("a collapsed bivariate normal with a random prior mean: the maker absorbs a move of it") {
  ProgramRun run(R"(
[assume m (scope_include 'm 0 (normal 0 2))]
[assume g (make_niw_normal (vector m (- 0 m)) 0.5 4 (id_matrix 2))]
[observe (g) (vector 1.9 -1.2)] [observe (g) (vector 2.6 -2.0)] [observe (g) (vector 1.4 -1.9)]
[infer (repeat 20000 (do (mh m one 'drift 1 1) (collect m)))]
)",
                 122);
  const std::vector<Eigen::VectorXd> xs = {Eigen::Vector2d(1.9, -1.2), Eigen::Vector2d(2.6, -2.0),
                                           Eigen::Vector2d(1.4, -1.9)};
  auto log_post = [&](double m) {
    return log_normal_pdf(m, 0, 2) +
           niw_log_marginal({Eigen::Vector2d(m, -m), 0.5, 4, Eigen::Matrix2d::Identity()}, xs);
  };
  check_hyperparameter(run, "m", log_post, -30, 30, 0.0);  // the prior's mean 0
}

// Rows of observe_csv are kept as families when the procedure is compound: each row's flip of the coin k picks
// follows a move of k like a single observation. p(k | rows) is proportional to the coins' marginal likelihoods.
TEST_CASE("observe_csv rows whose coin a latent key picks move with it") {
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / fmt::format("vnt_collapsed_rows_{}.csv", ::getpid());
  std::ofstream(csv) << "y\n1\n1\n0\n1\n";
  ProgramRun run(fmt::format(R"(
[assume k (flip 0.5)]
[assume coins (mem (lambda (i) (make_beta_bernoulli 1 1)))]
[assume f (lambda (x) ((coins k)))]
[observe_csv f "{}" y]
[observe ((coins true)) true]
[infer (repeat 20000 (do (mh default one 1) (collect k)))]
)",
                             csv.string()),
                 115);
  std::filesystem::remove(csv);
  // k true: one coin with 4 heads and 1 tail; k false: 3 heads and 1 tail on one coin, 1 head on the other.
  const double if_true = std::exp(log_beta_fn(5, 2)), if_false = std::exp(log_beta_fn(4, 2) + log_beta_fn(2, 1));
  const double exact = if_true / (if_true + if_false);
  const std::vector<double> k = run.column("k", kBurnIn);
  MESSAGE("p(k | rows): exact " << exact);
  check_probability(k, exact);
  expect_rejected(evaluate_probability(k, 0.5));
}

// The key picks a primitive procedure or a compound one: the observation moves between the application itself and
// the choice inside the compound procedure's body. p(k | y) is proportional to N(y; 0, 1) for k, N(y; 1, 1) otherwise.
TEST_CASE("an observation moved between a primitive and a compound procedure") {
  ProgramRun run(R"(
[assume k (flip 0.5)]
[assume f (if k normal (lambda (m s) (normal (+ m 1) s)))]
[observe (f 0 1) 0.3]
[observe (f 0 1) 0.9]
[infer (repeat 20000 (do (mh default one 1) (collect k)))]
)",
                 108);
  auto density = [](double shift) {
    return std::exp(log_normal_pdf(0.3, shift, 1) + log_normal_pdf(0.9, shift, 1));
  };
  const double exact = density(0) / (density(0) + density(1));
  const std::vector<double> k = run.column("k", kBurnIn);
  MESSAGE("p(k | y): exact " << exact);
  check_probability(k, exact);
  expect_rejected(evaluate_probability(k, 0.5));
}

}  // namespace vnt::test::collapsed_mixture_tests
