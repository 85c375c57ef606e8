// Moments, quantiles and the autocorrelation-based effective sample size of MCMC draws.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/mcmc_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/source_text.hpp"

namespace vnt {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool all_finite(std::span<const double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return std::isfinite(x); });
}

// Type-7 quantile of already sorted draws.
double sorted_quantile(const std::vector<double>& sorted, double q) {
  double h = static_cast<double>(sorted.size() - 1) * q;
  auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double a = sorted[lo], b = sorted[lo + 1], t = h - static_cast<double>(lo);
  // a + t (b - a) is NaN for a = b = inf and for a = -inf below a finite b, where the quantile is a.
  if (t == 0.0 || a == b || (std::isinf(a) && std::isfinite(b))) return a;
  return a + t * (b - a);
}

void check_probability_arg(double q) {
  if (!(q >= 0.0 && q <= 1.0)) raise(ErrorKind::kDomain, "quantile: probability {} is not in [0, 1]", q);
}

// The largest |x - m|: deviations divided by it have squares that cannot overflow, however large the draws.
double largest_deviation(std::span<const double> xs, double m) {
  double scale = 0.0;
  for (double x : xs) scale = std::max(scale, std::abs(x - m));
  return scale;
}

// The autocovariances of xs, deviations above 1e100 (whose sums of squares could overflow) divided by the largest
// one: the ESS does not depend on the scale.
std::vector<double> scaled_autocovariance(std::span<const double> xs) {
  const double largest = largest_deviation(xs, mean(xs));
  return autocovariance(xs, largest > 1e100 ? largest : 1.0);
}

}  // namespace

double mean(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  const double n = static_cast<double>(xs.size());
  const double m = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  // The sum of finite draws can overflow (draws near 1e308 had the mean inf); the sum of x / n cannot.
  if (std::isinf(m) && all_finite(xs))
    return std::accumulate(xs.begin(), xs.end(), 0.0, [n](double sum, double x) { return sum + x / n; });
  return m;
}

double sample_sd(std::span<const double> xs) {
  if (xs.size() < 2) return kNaN;
  const double m = mean(xs);
  double ss = 0.0;
  for (double x : xs) ss += (x - m) * (x - m);
  const double scale = std::isinf(ss) && std::isfinite(m) ? largest_deviation(xs, m) : 0.0;
  if (std::isfinite(scale) && scale > 0.0) {  // squares of deviations above 1e154 overflowed: divide by the largest
    ss = 0.0;
    for (double x : xs) ss += ((x - m) / scale) * ((x - m) / scale);
    return scale * std::sqrt(ss / static_cast<double>(xs.size() - 1));
  }
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

double quantile(std::span<const double> xs, double q) {
  check_probability_arg(q);
  if (xs.empty() || std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); })) return kNaN;
  std::vector<double> sorted(xs.begin(), xs.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_quantile(sorted, q);
}

double effective_sample_size(std::span<const double> xs) {
  const size_t n = xs.size();
  if (n < 2 || !all_finite(xs)) return kNaN;
  if (std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs[0]; })) return kNaN;
  const std::vector<double> acov = scaled_autocovariance(xs);
  if (!(acov[0] > 0.0)) return kNaN;  // variance lost to rounding: treat as constant

  // Geyer (1992), initial monotone positive sequence: the pair sums Gamma_k = rho_2k + rho_2k+1 of a
  // reversible chain are positive and decreasing, so sum them up to the first non-positive one, each
  // clipped to its predecessor. tau = 1 + 2 sum_{t>=1} rho_t = -1 + 2 sum_k Gamma_k.
  double sum = 0.0;
  double prev = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t + 1 < n; t += 2) {
    double gamma = (acov[t] + acov[t + 1]) / acov[0];
    if (gamma <= 0.0) break;
    prev = std::min(prev, gamma);
    sum += prev;
  }
  const double dn = static_cast<double>(n);
  // Stan's floor on tau: keeps antithetic (or short) chains from claiming an unbounded ESS.
  const double tau = std::max(-1.0 + 2.0 * sum, 1.0 / std::max(1.0, std::log10(dn)));
  return dn / tau;
}

// By the Wiener-Khinchin theorem: zero-padding to >= 2n turns the FFT's circular correlation into a linear one.
std::vector<double> autocovariance(std::span<const double> xs, double scale) {
  const size_t n = xs.size();
  if (n == 0) return {};
  const double m = mean(xs);
  size_t nfft = 1;
  while (nfft < 2 * n) nfft *= 2;
  std::vector<double> padded(nfft, 0.0);
  for (size_t i = 0; i < n; ++i) padded[i] = (xs[i] - m) / scale;

  Eigen::FFT<double> fft;
  std::vector<std::complex<double>> freq;
  fft.fwd(freq, padded);
  for (auto& f : freq) f = std::norm(f);
  std::vector<double> acov;
  fft.inv(acov, freq);
  acov.resize(n);
  for (double& a : acov) a /= static_cast<double>(n);
  return acov;
}

double mcse_mean(std::span<const double> xs) { return sample_sd(xs) / std::sqrt(effective_sample_size(xs)); }

ColumnSummary summarize(std::string name, std::span<const double> xs) {
  ColumnSummary s;
  s.name = std::move(name);
  s.n = xs.size();
  s.mean = mean(xs);
  s.sd = sample_sd(xs);
  s.q05 = s.q50 = s.q95 = kNaN;
  if (!xs.empty() && std::none_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); })) {
    std::vector<double> sorted(xs.begin(), xs.end());
    std::sort(sorted.begin(), sorted.end());
    s.q05 = sorted_quantile(sorted, 0.05);
    s.q50 = sorted_quantile(sorted, 0.50);
    s.q95 = sorted_quantile(sorted, 0.95);
  }
  s.ess = effective_sample_size(xs);
  return s;
}

namespace {

/// A column's name as the table shows it: on one line (a name is its expression's source text, which may span
/// lines: each run of white space becomes one space), escaped as messages are, and the cells it takes.
std::pair<std::string, size_t> table_name(std::string_view name) {
  std::string one_line;
  for (size_t i = 0; i < name.size(); ++i) {
    const bool space = name[i] == ' ' || name[i] == '\t' || name[i] == '\n' || name[i] == '\r';
    if (!space)
      one_line += name[i];
    else if (one_line.empty() || one_line.back() != ' ')
      one_line += ' ';
  }
  return {shown_text(one_line), shown_text_width(one_line)};
}

}  // namespace

std::string format_summary_table(std::span<const ColumnSummary> rows) {
  constexpr size_t kCols = 8;
  const bool rhat = std::any_of(rows.begin(), rows.end(), [](const ColumnSummary& r) { return r.rhat.has_value(); });
  const size_t shown = rhat ? kCols : kCols - 1;
  // NaN prints as "nan" whatever its sign bit (inf - inf gives -nan), as values print.
  auto number = [](double x) {
    return x == 0.0 ? std::string("0") : std::isnan(x) ? std::string("nan") : fmt::format("{:.4g}", x);
  };
  auto count = [](double x) { return std::isfinite(x) ? fmt::format("{:.0f}", x) : fmt::format("{}", x); };

  std::vector<std::array<std::string, kCols>> cells;
  std::vector<size_t> name_cells;  // a name's width in terminal cells, which its bytes are not (é, 日, escapes)
  auto ratio = [](std::optional<double> x) {
    return !x ? std::string() : std::isnan(*x) ? std::string("nan") : fmt::format("{:.3f}", *x);
  };
  cells.push_back({"name", "mean", "sd", "5%", "50%", "95%", "ess", "rhat"});
  name_cells.push_back(4);
  for (const ColumnSummary& r : rows) {
    auto [name, name_width] = table_name(r.name);
    cells.push_back({std::move(name), number(r.mean), number(r.sd), number(r.q05), number(r.q50), number(r.q95),
                     count(r.ess), ratio(r.rhat)});
    name_cells.push_back(name_width);
  }
  std::array<size_t, kCols> width{};
  for (size_t i = 0; i < cells.size(); ++i) {
    width[0] = std::max(width[0], name_cells[i]);
    for (size_t c = 1; c < shown; ++c) width[c] = std::max(width[c], cells[i][c].size());
  }
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& line = cells[i];
    out += line[0] + std::string(width[0] - name_cells[i], ' ');
    for (size_t c = 1; c < shown; ++c) out += fmt::format("  {:>{}}", line[c], width[c]);
    out += '\n';
  }
  return out;
}

}  // namespace vnt
