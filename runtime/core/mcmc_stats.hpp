// Summary statistics of MCMC draws: moments, quantiles, effective sample size, the pprun summary table.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vnt {

/// Arithmetic mean; NaN for no draws.
double mean(std::span<const double> xs);

/// Sample standard deviation with divisor n-1; NaN for fewer than 2 draws.
double sample_sd(std::span<const double> xs);

/// Quantile q in [0, 1] by linear interpolation between order statistics (Hyndman & Fan type 7, R's
/// default): with h = (n-1)q, x_(floor h) + (h - floor h)(x_(floor h + 1) - x_(floor h)).
/// Does not modify xs. NaN for no draws or if any draw is NaN. Throws kDomain if q is not in [0, 1].
double quantile(std::span<const double> xs, double q);

/// Effective sample size of one chain: n / tau with tau = 1 + 2 sum_t rho_t, the autocorrelations
/// (from an FFT) summed over Geyer's (1992) initial monotone positive sequence. tau is floored so that
/// ESS <= n * max(1, log10 n) (antithetic chains may exceed n; the bound is Stan's).
/// NaN when ESS is undefined: fewer than 2 draws, a non-finite draw, or a constant chain (zero
/// variance, so no autocorrelation; a column that never moves is flagged rather than reported as n).
double effective_sample_size(std::span<const double> xs);

/// Biased autocovariances acov[t] = (1/n) sum_i y_i y_{i+t}, t = 0..n-1, of y = (x - mean(x)) / scale (a scale
/// above 1 keeps the sums of squares of huge draws finite). Empty for no draws.
std::vector<double> autocovariance(std::span<const double> xs, double scale = 1.0);

/// Monte Carlo standard error of the mean: sample_sd / sqrt(ESS); NaN where the ESS is NaN.
double mcse_mean(std::span<const double> xs);

/// One row of the summary table.
struct ColumnSummary {
  std::string name;
  size_t n = 0;
  double mean = 0, sd = 0, q05 = 0, q50 = 0, q95 = 0, ess = 0;
  std::optional<double> rhat;  ///< of several chains (split_rhat); none for one chain
};

/// Summarises a column of draws (NaN entries where a statistic is undefined, as above).
ColumnSummary summarize(std::string name, std::span<const double> xs);

/// An aligned text table, one line per column plus a header "name mean sd 5% 50% 95% ess", and "rhat" if a row has
/// one: names left-aligned, numbers right-aligned with 4 significant digits ("nan" where undefined), the ESS
/// rounded to an integer, R-hat with 3 decimals; columns separated by two spaces, each line ending in '\n'.
std::string format_summary_table(std::span<const ColumnSummary> rows);

}  // namespace vnt
