// A Dirichlet process mixture written with make_crp and mem: the partition of the data points and the mean of a
// point's component, against the exact posterior over all 203 partitions of six points (the CRP's Ewens prior times
// each cluster's marginal likelihood, the component means integrated out).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "tests/support/partitions.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

namespace vnt::test::crp_tests {
namespace {

// y_i ~ N(mu_{z_i}, 1), mu_k ~ N(0, 3), z ~ CRP(alpha): two groups and a point between them.
constexpr std::array<double, 6> kY = {-2.1, -1.7, 0.4, 2.2, 2.9, -2.6};
constexpr double kPriorSd = 3;
constexpr size_t kN = kY.size(), kBurnIn = 200;

/// log of the marginal density of a cluster's points, mu integrated out: N(0, I + kPriorSd^2 11').
double log_marginal(const std::vector<size_t>& cluster) {
  const auto n = static_cast<double>(cluster.size());
  double s = 0, q = 0;
  for (size_t i : cluster) s += kY[i], q += kY[i] * kY[i];
  const double v = kPriorSd * kPriorSd;
  return -0.5 * n * std::log(2 * std::numbers::pi) - 0.5 * std::log1p(v * n) - 0.5 * (q - v * s * s / (1 + v * n));
}

/// What the checks read off a partition (as cluster ids per point).
struct Events {
  static constexpr size_t kCount = 6;
  static std::array<bool, kCount> of(const std::array<double, kN>& z) {
    const size_t k = distinct_labels(z);
    return {z[0] == z[1], z[3] == z[4], z[0] == z[3], z[0] == z[2], k == 2, k == 3};
  }
  static constexpr std::array<std::string_view, kCount> kNames = {"z0 = z1", "z3 = z4", "z0 = z3",
                                                             "z0 = z2", "2 clusters", "3 clusters"};
};

struct Exact {
  std::array<double, Events::kCount> p{};  // the events' probabilities
  Moments mu_z0;                           // the mean of point 0's component
};

/// The posterior by enumeration of the partitions; given one, point 0's component mean is normal with mean
/// v s / (1 + v n) and variance v / (1 + v n) (v the prior variance; n, s the count and sum of its cluster).
Exact exact(double alpha) {
  Exact out;
  std::array<double, Events::kCount>& p = out.p;
  double total = 0, m1 = 0, m2 = 0;
  for_each_partition(kN, [&](const Partition& q) {
    double lw = static_cast<double>(q.size()) * std::log(alpha);
    std::array<double, kN> z{};
    for (size_t c = 0; c < q.size(); ++c) {
      lw += std::lgamma(static_cast<double>(q[c].size())) + log_marginal(q[c]);
      for (size_t i : q[c]) z[i] = static_cast<double>(c);
    }
    const double w = std::exp(lw);
    total += w;
    const auto e = Events::of(z);
    for (size_t k = 0; k < Events::kCount; ++k) p[k] += e[k] ? w : 0;
    const std::vector<size_t>& c0 = q[static_cast<size_t>(z[0])];
    double s = 0;
    for (size_t i : c0) s += kY[i];
    const double v = kPriorSd * kPriorSd, n = static_cast<double>(c0.size());
    const double mean = v * s / (1 + v * n), var = v / (1 + v * n);
    m1 += w * mean;
    m2 += w * (var + mean * mean);
  });
  for (double& x : p) x /= total;
  out.mu_z0 = {total, m1 / total, std::sqrt(m2 / total - (m1 / total) * (m1 / total))};
  return out;
}

/// With alpha ~ gamma(1, 1) too: the Ewens weight alpha^K Gamma(alpha) / Gamma(alpha + n) integrated over alpha for
/// each number of tables K (adaptive quadrature), and alpha's posterior moments.
struct ExactRandomAlpha {
  std::array<double, Events::kCount> p{};
  Moments alpha;
};

ExactRandomAlpha exact_random_alpha() {
  const double n = static_cast<double>(kN);
  auto log_ewens = [&](double a, size_t k) {
    return -a + static_cast<double>(k) * std::log(a) + std::lgamma(a) - std::lgamma(a + n);
  };
  std::array<double, kN + 1> mass{}, m1{}, m2{};  // by K: the integral of the weight, times alpha, times alpha^2
  for (size_t k = 1; k <= kN; ++k) {
    mass[k] = integrate([&](double a) { return std::exp(log_ewens(a, k)); }, 0, INFINITY);
    m1[k] = integrate([&](double a) { return a * std::exp(log_ewens(a, k)); }, 0, INFINITY);
    m2[k] = integrate([&](double a) { return a * a * std::exp(log_ewens(a, k)); }, 0, INFINITY);
  }
  ExactRandomAlpha out;
  double total = 0, a1 = 0, a2 = 0;
  for_each_partition(kN, [&](const Partition& q) {
    double lw = 0;
    std::array<double, kN> z{};
    for (size_t c = 0; c < q.size(); ++c) {
      lw += std::lgamma(static_cast<double>(q[c].size())) + log_marginal(q[c]);
      for (size_t i : q[c]) z[i] = static_cast<double>(c);
    }
    const double base = std::exp(lw), w = base * mass[q.size()];
    total += w;
    a1 += base * m1[q.size()];
    a2 += base * m2[q.size()];
    const auto e = Events::of(z);
    for (size_t k = 0; k < Events::kCount; ++k) out.p[k] += e[k] ? w : 0;
  });
  for (double& x : out.p) x /= total;
  out.alpha = {total, a1 / total, std::sqrt(a2 / total - (a1 / total) * (a1 / total))};
  return out;
}

/// The events' indicators over the draws of the collected (z i).
std::array<std::vector<double>, Events::kCount> indicators(ProgramRun& run) {
  std::array<std::vector<double>, kN> z;
  for (size_t i = 0; i < kN; ++i) z[i] = run.column(fmt::format("(z {})", i), kBurnIn);
  std::array<std::vector<double>, Events::kCount> ind;
  for (size_t r = 0; r < z[0].size(); ++r) {
    std::array<double, kN> row{};
    for (size_t i = 0; i < kN; ++i) row[i] = z[i][r];
    const auto e = Events::of(row);
    for (size_t k = 0; k < Events::kCount; ++k) ind[k].push_back(e[k] ? 1 : 0);
  }
  return ind;
}

/// The mixture with concentration `alpha` (an expression) and the points observed.
std::string mixture(const std::string& alpha) {
  std::string text = fmt::format(R"(
[assume alpha {}]
[assume crp (make_crp alpha)]
[assume z (mem (lambda (i) (scope_include 'z i (crp))))]
[assume mu (mem (lambda (k) (scope_include 'mu k (normal 0 3))))]
[assume y (lambda (i) (normal (mu (z i)) 1))]
)",
                                 alpha);
  for (size_t i = 0; i < kN; ++i) text += fmt::format("[observe (y {}) {}]\n", i, kY[i]);
  return text;
}

std::string program(const std::string& z_kernel, const std::string& mu_kernel) {
  return mixture("1") + fmt::format("[infer (repeat 20000 (do {} {} (collect (z 0) (z 1) (z 2) (z 3) (z 4) (z 5) "
                                    "(mu (z 0)))))]\n",
                                    z_kernel, mu_kernel);
}

/// The events' indicators over the draws, checked against the exact posterior; and against the posterior for
/// alpha = 2, what weighing a new table twice (a customer alone offered its own table and a fresh one) resembles.
void check_partitions(ProgramRun& run) {
  const std::array<std::vector<double>, Events::kCount> ind = indicators(run);
  const Exact e = exact(1), wrong = exact(2);
  bool any_rejected = false;
  for (size_t k = 0; k < Events::kCount; ++k) {
    MESSAGE(Events::kNames[k] << ": exact " << e.p[k] << " (alpha 2: " << wrong.p[k] << ")");
    check_probability(ind[k], e.p[k]);
    any_rejected = any_rejected || !evaluate_probability(ind[k], wrong.p[k]).ok;
  }
  CHECK_MESSAGE(any_rejected, "no check tells the posterior for alpha = 2 apart");
  const std::vector<double> mu = run.column("(mu (z 0))", kBurnIn);
  MESSAGE("mu of point 0's component: exact " << e.mu_z0.mean << " +- " << e.mu_z0.sd);
  check_mean(mu, e.mu_z0.mean, e.mu_z0.sd);
  check_sd(mu, e.mu_z0.sd);
}

}  // namespace

TEST_CASE("crp mixture: gibbs, mh and pgibbs on the assignments, with mh or subsampled_mh on the tables' means") {
  struct Kernel {
    std::string_view z, mu;
    uint64_t seed;
  };
  // gibbs: a customer alone is offered its own table (with its mean) as the new one, Neal's algorithm 8 with one
  // auxiliary table; offering a fresh table besides (a new table weighed twice for a customer alone) put two of these
  // checks 4.6 and 6 standard errors off (tried). mh: proposals from the CRP's conditional. pgibbs: each particle
  // seats its customers after those of the groups before (the CRP's sequential form), without drawing ancestors
  // (tests/runtime/infer/pgibbs_test.cpp): a customer's density reads every other's table. subsampled_mh (eps 0) on
  // one table's mean: one border per table, as many as the tables the assignments open (the paper's joint DPM);
  // a table of one customer has N = 1 and is moved by exact mh.
  constexpr std::string_view kDrift = "(mh mu one 'drift 0.5 4)";
  for (const Kernel& k : {Kernel{"(gibbs z one 6)", kDrift, 91}, Kernel{"(mh z one 6)", kDrift, 92},
                          Kernel{"(pgibbs z ordered 4 1)", kDrift, 93},
                          Kernel{"(gibbs z one 6)", "(subsampled_mh mu one 2 0 'drift 0.5 4)", 94}}) {
    CAPTURE(k.z);
    CAPTURE(k.mu);
    ProgramRun run(program(std::string(k.z), std::string(k.mu)), k.seed);
    check_partitions(run);
  }
}

TEST_CASE("crp with a random alpha: the maker absorbs a move of it") {
  // Observed customers at tables of 3, 2, 2 and 1: alpha | seating is proportional to e^-a a^4 Gamma(a) / Gamma(a + 8).
  // (Until the thirty-seventh session a move of alpha made the restaurant again, and the observed customers stopped
  // the program.)
  {
    ProgramRun run(R"(
[assume alpha (gamma 1 1)]
[assume crp (make_crp alpha)]
[observe (crp) 0] [observe (crp) 0] [observe (crp) 1] [observe (crp) 2] [observe (crp) 1] [observe (crp) 0]
[observe (crp) 3] [observe (crp) 2]
[infer (repeat 20000 (do (mh default one 1) (collect alpha)))]
)",
                   95);
    const Moments exact = moments_1d(
        [](double a) { return -a + 4 * std::log(a) + std::lgamma(a) - std::lgamma(a + 8); }, 0, INFINITY);
    const std::vector<double> alpha = run.column("alpha", kBurnIn);
    MESSAGE("alpha given the seating: exact " << exact.mean << " +- " << exact.sd);
    check_mean(alpha, exact.mean, exact.sd);
    check_sd(alpha, exact.sd);
    expect_rejected(evaluate_mean(alpha, 1.0, exact.sd));  // the prior's mean
  }
  // A mixture whose alpha, assignments and means move together ((mh default all 1): the maker is attached before
  // the assignments it seats are drawn again, detached after), or one at a time.
  const ExactRandomAlpha exact = exact_random_alpha();
  for (const auto& [kernels, seed] :
       {std::pair{"(mh default all 1) (mh alpha all 'drift 0.5 2) (gibbs z one 6) (mh mu one 'drift 0.5 4)", 96},
        std::pair{"(mh alpha all 'drift 0.5 2) (mh default one 12)", 97}}) {
    CAPTURE(kernels);
    const std::string infer =
        fmt::format("[infer (repeat 20000 (do {} (collect alpha (z 0) (z 1) (z 2) (z 3) (z 4) (z 5))))]\n", kernels);
    ProgramRun run(mixture("(scope_include 'alpha 0 (gamma 1 1))") + infer, seed);
    const std::array<std::vector<double>, Events::kCount> ind = indicators(run);
    for (size_t k = 0; k < Events::kCount; ++k) {
      MESSAGE(Events::kNames[k] << ": exact " << exact.p[k]);
      check_probability(ind[k], exact.p[k]);
    }
    const std::vector<double> alpha = run.column("alpha", kBurnIn);
    MESSAGE("alpha: exact " << exact.alpha.mean << " +- " << exact.alpha.sd);
    check_mean(alpha, exact.alpha.mean, exact.alpha.sd);
    check_sd(alpha, exact.alpha.sd);
  }
}

}  // namespace vnt::test::crp_tests
