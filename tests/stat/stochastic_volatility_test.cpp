// The stochastic volatility model of the sublinear-MH paper's section 4.3, h_0 = 0, h_t ~ N(phi h_{t-1}, sig),
// x_t ~ N(0, exp(h_t / 2)), with the paper's pairing of kernels: pgibbs on the states, subsampled_mh on phi and sig.
// The observations are not Gaussian in h, so no Kalman filter: the ground truth is a forward recursion on a grid of
// h for each (phi, sig) of a quadrature grid.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "runtime/core/rng.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/stat_extra.hpp"

namespace vnt::test::stochastic_volatility_tests {
namespace {

/// phi ~ beta(phi_a, phi_b), sig^2 ~ inv_gamma(shape, scale).
struct Prior {
  double phi_a, phi_b, shape, scale;
};

struct Resolution {
  double cells_per_sig = 2;  // h grid spacing sig / cells_per_sig
  size_t log_sig_points = 48;
};

struct Posterior {
  Moments phi, sig, h_last;
  double edge_mass = 0;  // the share of the outermost log-sig cells: small when the grid holds the posterior
};

struct Filtered {
  double log_lik = 0, h_mean = 0, h_var = 0;  // log p(x | phi, sig) and the moments of h_T given x
};

/// The forward recursion on a grid of h: alpha_t(h_j) = p(x_t | h_j) sum_i alpha_{t-1}(h_i) N(h_j; phi h_i, sig) dh,
/// normalised at each step (the normalisers' logs sum to the likelihood). The grid spans 8 prior sds of the widest
/// state, h_T; a Riemann sum of a Gaussian of sd sig with spacing sig / 2 is exact to about 1e-34 (its error is
/// 2 exp(-2 pi^2 (sig / spacing)^2)), and each alpha_t is a Gaussian mixture at least that wide times a smooth
/// likelihood.
Filtered grid_filter(double phi, double sig, std::span<const double> x, const Resolution& r) {
  double var_last = 0;  // prior variance of h_T: sig^2 (1 + phi^2 + ... + phi^{2(T-1)})
  for (size_t t = 0; t < x.size(); ++t) var_last = phi * phi * var_last + sig * sig;
  const double half = 8 * std::sqrt(var_last);
  const auto g = static_cast<Eigen::Index>(std::ceil(2 * half / sig * r.cells_per_sig));
  const double dh = 2 * half / static_cast<double>(g);
  Eigen::VectorXd h(g);
  for (Eigen::Index j = 0; j < g; ++j) h[j] = -half + (static_cast<double>(j) + 0.5) * dh;
  Eigen::MatrixXd k(g, g);  // k(j, i) = N(h_j; phi h_i, sig) dh
  for (Eigen::Index i = 0; i < g; ++i)
    for (Eigen::Index j = 0; j < g; ++j) k(j, i) = std::exp(log_normal_pdf(h[j], phi * h[i], sig)) * dh;
  Filtered out;
  Eigen::VectorXd alpha(g);
  for (Eigen::Index j = 0; j < g; ++j) alpha[j] = std::exp(log_normal_pdf(h[j], 0, sig)) * dh;  // h_1 | h_0 = 0
  for (size_t t = 0; t < x.size(); ++t) {
    if (t > 0) alpha = k * alpha;
    for (Eigen::Index j = 0; j < g; ++j) alpha[j] *= std::exp(log_normal_pdf(x[t], 0, std::exp(h[j] / 2)));
    const double mass = alpha.sum();
    out.log_lik += std::log(mass);
    alpha /= mass;
  }
  out.h_mean = alpha.dot(h);
  out.h_var = alpha.dot(h.cwiseProduct(h)) - out.h_mean * out.h_mean;
  return out;
}

/// Posterior moments of phi, sig and h_T: Gauss-Legendre (40 nodes) over phi in (0, 1), where the beta prior is a
/// polynomial times the likelihood; the midpoint rule over log sig in [lo, hi], where the density falls to nothing
/// at both ends (edge_mass says how nearly).
Posterior grid_posterior(std::span<const double> x, const Prior& p, double sig_lo, double sig_hi, const Resolution& r) {
  using Gauss = boost::math::quadrature::gauss<double, 40>;
  std::vector<double> phis, phi_weights;
  for (size_t i = 0; i < Gauss::abscissa().size(); ++i)
    for (double sign : {-1.0, 1.0}) {
      if (Gauss::abscissa()[i] == 0 && sign > 0) continue;  // an odd rule's centre node, listed once
      phis.push_back(0.5 + 0.5 * sign * Gauss::abscissa()[i]);
      phi_weights.push_back(0.5 * Gauss::weights()[i]);
    }
  const double du = (std::log(sig_hi) - std::log(sig_lo)) / static_cast<double>(r.log_sig_points);
  struct Cell {
    double phi, sig, log_w;
    Filtered f;
    bool edge;
  };
  std::vector<Cell> cells;
  double top = -INFINITY;
  for (size_t a = 0; a < phis.size(); ++a)
    for (size_t b = 0; b < r.log_sig_points; ++b) {
      const double u = std::log(sig_lo) + (static_cast<double>(b) + 0.5) * du, sig = std::exp(u), s2 = sig * sig;
      // Priors in (phi, u = log sig): beta density, and inv_gamma's in sig^2 times d sig^2 / du = 2 sig^2.
      const double log_prior = (p.phi_a - 1) * std::log(phis[a]) + (p.phi_b - 1) * std::log1p(-phis[a]) -
                               (p.shape + 1) * std::log(s2) - p.scale / s2 + std::log(2 * s2);
      Cell c{phis[a], sig, 0, grid_filter(phis[a], sig, x, r), b == 0 || b + 1 == r.log_sig_points};
      c.log_w = log_prior + c.f.log_lik + std::log(phi_weights[a]);
      top = std::max(top, c.log_w);
      cells.push_back(c);
    }
  double m0 = 0, phi1 = 0, phi2 = 0, sig1 = 0, sig2 = 0, h1 = 0, h2 = 0, edge = 0;
  for (const Cell& c : cells) {
    const double w = std::exp(c.log_w - top);
    m0 += w;
    phi1 += w * c.phi, phi2 += w * c.phi * c.phi;
    sig1 += w * c.sig, sig2 += w * c.sig * c.sig;
    h1 += w * c.f.h_mean, h2 += w * (c.f.h_var + c.f.h_mean * c.f.h_mean);
    if (c.edge) edge += w;
  }
  auto moments = [&](double s1, double s2) {
    const double mean = s1 / m0;
    return Moments{m0, mean, std::sqrt(s2 / m0 - mean * mean)};
  };
  return {moments(phi1, phi2), moments(sig1, sig2), moments(h1, h2), edge / m0};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The x column of a t,x CSV.
std::vector<double> read_series(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> x;
  while (std::getline(in, line)) x.push_back(std::stod(line.substr(line.find(',') + 1)));
  return x;
}

constexpr Prior kPaperPrior{5, 1, 5, 0.05};

/// h_0 = 0, h_t = phi h_{t-1} + sig N(0, 1), x_t = exp(h_t / 2) N(0, 1).
std::vector<double> simulate(size_t n, double phi, double sig, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  double h = 0;
  for (double& xt : x) {
    h = phi * h + sig * rng.normal();
    xt = std::exp(h / 2) * rng.normal();
  }
  return x;
}

std::string program(const Prior& p, std::span<const double> x) {
  std::string text = fmt::format(R"(
[assume sig (scope_include 'sig 0 (sqrt (inv_gamma {} {})))]
[assume phi (scope_include 'phi 0 (beta {} {}))]
[assume h (mem (lambda (t) (scope_include 'h t (if (<= t 0) 0 (normal (* phi (h (- t 1))) sig)))))]
[assume x (lambda (t) (normal 0 (exp (/ (h t) 2))))]
)",
                                 p.shape, p.scale, p.phi_a, p.phi_b);
  for (size_t t = 0; t < x.size(); ++t) text += fmt::format("[observe (x {}) {}]\n", t + 1, x[t]);
  return text + fmt::format("[assume h_last (h {})]\n", x.size());
}

}  // namespace

TEST_CASE("examples/stochastic_volatility.vnt states the grid posterior of its data") {
  // tests/cli/examples.sh checks the example's summary against the numbers its comment states; this checks that
  // they are the posterior, computed here, and that a grid twice as fine changes no printed digit.
  const std::vector<double> x = read_series(VNT_SOURCE_DIR "/examples/data/stochastic_volatility.csv");
  REQUIRE(x.size() == 50);
  const Posterior post = grid_posterior(x, kPaperPrior, 0.02, 0.8, Resolution{});
  const Posterior fine = grid_posterior(x, kPaperPrior, 0.02, 0.8, Resolution{4, 96});
  MESSAGE(fmt::format("phi {:.4f} +- {:.4f}, sig {:.4f} +- {:.4f}, h_50 {:.4f} +- {:.4f} (edge mass {:.1e})",
                      post.phi.mean, post.phi.sd, post.sig.mean, post.sig.sd, post.h_last.mean, post.h_last.sd,
                      post.edge_mass));
  CHECK(post.edge_mass < 1e-8);
  for (auto [a, b] : {std::pair{post.phi, fine.phi}, {post.sig, fine.sig}, {post.h_last, fine.h_last}}) {
    CHECK(std::abs(a.mean - b.mean) < 1e-6);
    CHECK(std::abs(a.sd - b.sd) < 1e-6);
  }
  const std::string text = read_file(VNT_SOURCE_DIR "/examples/stochastic_volatility.vnt");
  const std::regex stated(R"(phi ([0-9.]+) \+- ([0-9.]+), sig ([0-9.]+) \+- ([0-9.]+), )"
                          R"(h_50 (-?[0-9.]+) \+- ([0-9.]+))");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(text, m, stated), "the example's comment states no reference");
  const double values[] = {post.phi.mean, post.phi.sd, post.sig.mean, post.sig.sd, post.h_last.mean, post.h_last.sd};
  for (size_t i = 0; i < 6; ++i) CHECK(std::abs(std::stod(m[i + 1].str()) - values[i]) <= 0.5e-4 + 1e-9);
}

TEST_CASE("stochastic volatility: pgibbs on the states with subsampled_mh (eps 0) on phi and sig matches the grid") {
  // The paper's sig = 0.1 makes h so flat that 40 observations barely move phi from its prior; with sig = 0.8, h
  // wanders over about +-2 and they pin phi down (a uniform prior; posterior sd 0.12). With eps 0 every kernel of
  // the cycle is exact: the draws must match the grid posterior within 4 standard errors of their ESS.
  constexpr Prior kPrior{1, 1, 3, 1.5};
  const std::vector<double> x = simulate(40, 0.9, 0.8, 17);
  const Posterior post = grid_posterior(x, kPrior, 0.02, 4, Resolution{});
  MESSAGE(fmt::format("grid: phi {:.4f} +- {:.4f}, sig {:.4f} +- {:.4f}, h_40 {:.4f} +- {:.4f} (edge mass {:.1e})",
                      post.phi.mean, post.phi.sd, post.sig.mean, post.sig.sd, post.h_last.mean, post.h_last.sd,
                      post.edge_mass));
  REQUIRE(post.edge_mass < 1e-8);
  ProgramRun run(program(kPrior, x) + R"(
[infer (repeat 3000 (do (pgibbs h ordered 5 1)
                        (subsampled_mh sig 0 10 0 'drift 0.1 3)
                        (subsampled_mh phi 0 10 0 'drift 0.05 3)
                        (collect phi sig h_last)))]
)",
                 61);
  constexpr size_t kBurnIn = 300;
  const std::vector<double> phi = run.column("phi", kBurnIn), sig = run.column("sig", kBurnIn),
                            h_last = run.column("h_last", kBurnIn);
  check_mean(phi, post.phi.mean, post.phi.sd);
  check_sd(phi, post.phi.sd);
  check_mean(sig, post.sig.mean, post.sig.sd);
  check_sd(sig, post.sig.sd);
  check_mean(h_last, post.h_last.mean, post.h_last.sd);
  check_sd(h_last, post.h_last.sd);
  // The posterior given the first 20 observations (phi 0.62, sig 0.96): what a chain that lost half the data gives.
  const Posterior first = grid_posterior(std::span(x).first(20), kPrior, 0.02, 4, Resolution{});
  expect_rejected(evaluate_mean(phi, first.phi.mean, post.phi.sd));
  expect_rejected(evaluate_mean(sig, first.sig.mean, post.sig.sd));
}

}  // namespace vnt::test::stochastic_volatility_tests
