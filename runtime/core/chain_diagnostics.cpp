// Rank-normalised split R-hat and multi-chain ESS (Vehtari et al. 2021).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/chain_diagnostics.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/core/mcmc_stats.hpp"

namespace vnt {
namespace {

constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

/// Chains the statistics are defined for: at least one, all of one length of at least `least`, all finite.
bool usable(std::span<const std::vector<double>> chains, size_t least) {
  if (chains.empty() || chains[0].size() < least) return false;
  for (const std::vector<double>& c : chains) {
    if (c.size() != chains[0].size()) return false;
    if (!std::all_of(c.begin(), c.end(), [](double x) { return std::isfinite(x); })) return false;
  }
  return true;
}

/// The draws of all chains in one vector.
std::vector<double> pooled(std::span<const std::vector<double>> chains) {
  std::vector<double> all;
  for (const std::vector<double>& c : chains) all.insert(all.end(), c.begin(), c.end());
  return all;
}

}  // namespace

std::vector<std::vector<double>> split_chains(std::span<const std::vector<double>> chains) {
  std::vector<std::vector<double>> halves;
  halves.reserve(2 * chains.size());
  for (const std::vector<double>& c : chains) {
    const size_t half = c.size() / 2;
    halves.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(half));
    halves.emplace_back(c.end() - static_cast<std::ptrdiff_t>(half), c.end());
  }
  return halves;
}

double basic_rhat(std::span<const std::vector<double>> chains) {
  if (chains.size() < 2 || !usable(chains, 2)) return kUndefined;
  const double n = static_cast<double>(chains[0].size()), m = static_cast<double>(chains.size());
  std::vector<double> means;
  double within = 0;
  for (const std::vector<double>& c : chains) {
    means.push_back(mean(c));
    const double sd = sample_sd(c);
    within += sd * sd / m;
  }
  const double sd_means = sample_sd(means);
  const double between_over_n = sd_means * sd_means;
  // Chains that never move: undefined if they agree, infinitely far from mixed if they do not.
  if (!(within > 0)) return between_over_n > 0 ? std::numeric_limits<double>::infinity() : kUndefined;
  return std::sqrt(((n - 1) / n * within + between_over_n) / within);
}

std::vector<std::vector<double>> rank_normalize(std::span<const std::vector<double>> chains) {
  struct Draw {
    double x;
    size_t chain, index;
  };
  std::vector<Draw> all;
  for (size_t c = 0; c < chains.size(); ++c)
    for (size_t i = 0; i < chains[c].size(); ++i) all.push_back({chains[c][i], c, i});
  std::sort(all.begin(), all.end(), [](const Draw& a, const Draw& b) { return a.x < b.x; });
  std::vector<std::vector<double>> z(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) z[c].resize(chains[c].size());
  const double s = static_cast<double>(all.size());
  const boost::math::normal standard;
  for (size_t lo = 0; lo < all.size();) {
    size_t hi = lo;
    while (hi + 1 < all.size() && all[hi + 1].x == all[lo].x) ++hi;
    const double rank = (static_cast<double>(lo + hi) / 2) + 1;  // ties share the average of their ranks
    const double q = boost::math::quantile(standard, (rank - 0.375) / (s + 0.25));
    for (size_t k = lo; k <= hi; ++k) z[all[k].chain][all[k].index] = q;
    lo = hi + 1;
  }
  return z;
}

double split_rhat(std::span<const std::vector<double>> chains) {
  if (!usable(chains, 4)) return kUndefined;
  const std::vector<std::vector<double>> halves = split_chains(chains);
  const double bulk = basic_rhat(rank_normalize(halves));
  // The tail: how far each draw is from the median of all of them.
  const double median = quantile(pooled(chains), 0.5);
  std::vector<std::vector<double>> folded = halves;
  for (std::vector<double>& c : folded)
    for (double& x : c) x = std::abs(x - median);
  const double tail = basic_rhat(rank_normalize(folded));
  if (std::isnan(bulk) || std::isnan(tail)) return std::isnan(bulk) ? tail : bulk;
  return std::max(bulk, tail);
}

double multi_chain_ess(std::span<const std::vector<double>> chains) {
  if (!usable(chains, 4)) return kUndefined;
  const std::vector<std::vector<double>> halves = split_chains(chains);
  const size_t n = halves[0].size();
  const double dn = static_cast<double>(n), m = static_cast<double>(halves.size());
  // One scale for all chains (deviations above 1e100 would overflow their squares); the ESS does not depend on it.
  const std::vector<double> all = pooled(halves);
  const double grand = mean(all);
  double largest = 0;
  for (double x : all) largest = std::max(largest, std::abs(x - grand));
  const double scale = largest > 1e100 ? largest : 1.0;

  std::vector<double> mean_acov(n, 0.0), scaled_means;
  for (const std::vector<double>& c : halves) {
    const std::vector<double> acov = autocovariance(c, scale);
    for (size_t t = 0; t < n; ++t) mean_acov[t] += acov[t] / m;
    scaled_means.push_back((mean(c) - grand) / scale);
  }
  const double within = mean_acov[0] * dn / (dn - 1);
  const double sd_means = sample_sd(scaled_means);
  const double var_plus = (dn - 1) / dn * within + sd_means * sd_means;
  if (!(var_plus > 0)) return kUndefined;  // every draw the same
  auto rho = [&](size_t t) { return t == 0 ? 1.0 : 1.0 - (within - mean_acov[t]) / var_plus; };

  // Geyer's initial monotone positive sequence over pair sums, as effective_sample_size does for one chain.
  double sum = 0.0;
  double prev = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t + 1 < n; t += 2) {
    const double gamma = rho(t) + rho(t + 1);
    if (gamma <= 0.0) break;
    prev = std::min(prev, gamma);
    sum += prev;
  }
  const double draws = m * dn;
  const double tau = std::max(-1.0 + 2.0 * sum, 1.0 / std::max(1.0, std::log10(draws)));
  return draws / tau;
}

}  // namespace vnt
