// Moments, type-7 quantiles, Geyer ESS, the summary table, and the stat_checks helpers built on them.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/mcmc_stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "tests/support/stat_checks.hpp"

namespace vnt::mcmc_stats_tests {
namespace {

std::vector<double> iid_normals(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> xs(n);
  for (double& x : xs) x = rng.normal();
  return xs;
}

// Stationary AR(1) with unit marginal variance: x_t = phi x_{t-1} + sqrt(1 - phi^2) e_t.
std::vector<double> ar1(size_t n, double phi, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> xs(n);
  double x = rng.normal();
  for (double& v : xs) {
    x = phi * x + std::sqrt(1 - phi * phi) * rng.normal();
    v = x;
  }
  return xs;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST_CASE("mean and sample_sd") {
  std::vector<double> xs = {1, 2, 3, 4};
  CHECK(mean(xs) == 2.5);
  CHECK(sample_sd(xs) == doctest::Approx(std::sqrt(5.0 / 3.0)));
  CHECK(std::isnan(mean(std::vector<double>{})));
  CHECK(std::isnan(sample_sd(std::vector<double>{7})));
}

TEST_CASE("mean, sd and ESS of huge finite draws are finite (the sum and the squares overflowed)") {
  const std::vector<double> xs = {1e308, 1.5e308, 1.2e308, 0.9e308, 1.4e308, 1.1e308};
  const std::vector<double> unit = {1.0, 1.5, 1.2, 0.9, 1.4, 1.1};
  CHECK(mean(xs) == doctest::Approx(mean(unit) * 1e308));
  CHECK(sample_sd(xs) == doctest::Approx(sample_sd(unit) * 1e308));
  CHECK(effective_sample_size(xs) == doctest::Approx(effective_sample_size(unit)));
  const std::vector<double> spread = {1e200, 1e200 + 1e190, 1e200 - 1e190};  // deviations whose squares overflow
  CHECK(sample_sd(spread) == doctest::Approx(1e190));
  CHECK(std::isfinite(effective_sample_size(spread)));
  CHECK(std::isnan(sample_sd(std::vector<double>{1.0, NAN, 1.0})));
  CHECK(std::isnan(sample_sd(std::vector<double>{INFINITY, INFINITY})));
  CHECK(sample_sd(std::vector<double>{3.0, 3.0}) == 0.0);
}

TEST_CASE("quantile is R's type 7 and leaves its input alone") {
  // R: quantile(c(10, 3, 1, 4, 2), c(0, .05, .25, .5, .9, 1)) = 1, 1.2, 2, 3, 7.6, 10
  const std::vector<double> xs = {10, 3, 1, 4, 2};
  CHECK(quantile(xs, 0.0) == 1.0);
  CHECK(quantile(xs, 0.05) == doctest::Approx(1.2));
  CHECK(quantile(xs, 0.25) == 2.0);
  CHECK(quantile(xs, 0.5) == 3.0);
  CHECK(quantile(xs, 0.9) == doctest::Approx(7.6));
  CHECK(quantile(xs, 1.0) == 10.0);
  CHECK(xs == std::vector<double>{10, 3, 1, 4, 2});
  CHECK(quantile(std::vector<double>{5}, 0.3) == 5.0);
  CHECK(quantile(std::vector<double>{0, 1}, 0.3) == doctest::Approx(0.3));
  CHECK(std::isnan(quantile(std::vector<double>{}, 0.5)));
  CHECK(std::isnan(quantile(std::vector<double>{1, std::nan(""), 2}, 0.5)));
  // Infinite draws (collected (/ 1 0)): inf - inf must not make the quantiles NaN.
  CHECK(quantile(std::vector<double>{INFINITY, INFINITY, INFINITY}, 0.5) == INFINITY);
  CHECK(quantile(std::vector<double>{-INFINITY, 1}, 0.3) == -INFINITY);
  CHECK(quantile(std::vector<double>{1, INFINITY}, 0.3) == INFINITY);
  CHECK(quantile(std::vector<double>{2, 2}, 0.3) == 2.0);
  try {
    quantile(xs, 1.5);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kDomain);
    CHECK(e.message() == "quantile: probability 1.5 is not in [0, 1]");
  }
}

TEST_CASE("ESS of iid normals is about n") {
  const auto xs = iid_normals(10000, 11);
  CHECK(effective_sample_size(xs) == doctest::Approx(10000).epsilon(0.15));
  CHECK(mcse_mean(xs) == doctest::Approx(sample_sd(xs) / 100).epsilon(0.1));
}

TEST_CASE("ESS of an AR(1) chain is n (1 - phi) / (1 + phi)") {
  const size_t n = 100000;
  const double phi = 0.9;
  const auto xs = ar1(n, phi, 12);
  CHECK(effective_sample_size(xs) == doctest::Approx(n * (1 - phi) / (1 + phi)).epsilon(0.2));
}

TEST_CASE("ESS of an antithetic chain is capped at n log10 n") {
  const auto xs = ar1(1000, -0.9, 13);
  const double ess = effective_sample_size(xs);
  CHECK(ess > 1000);
  CHECK(ess <= 3000.0 + 1e-9);
}

TEST_CASE("ESS is NaN when undefined, finite for tiny chains") {
  CHECK(std::isnan(effective_sample_size(std::vector<double>(500, 2.5))));
  CHECK(std::isnan(effective_sample_size(std::vector<double>{})));
  CHECK(std::isnan(effective_sample_size(std::vector<double>{1})));
  CHECK(std::isnan(effective_sample_size(std::vector<double>{1, INFINITY, 2})));
  CHECK(std::isnan(mcse_mean(std::vector<double>(10, 1.0))));
  for (const std::vector<double>& xs : {std::vector<double>{0, 1}, {0, 1, 0.5}, {3, 1, 2}, {1, 1, 2}}) {
    const double ess = effective_sample_size(xs);
    CHECK(ess > 0);
    CHECK(ess <= static_cast<double>(xs.size()));
  }
}

TEST_CASE("summarize fills every field") {
  const std::vector<double> xs = {10, 3, 1, 4, 2};
  const ColumnSummary s = summarize("x", xs);
  CHECK(s.name == "x");
  CHECK(s.n == 5);
  CHECK(s.mean == 4.0);
  CHECK(s.sd == doctest::Approx(std::sqrt(12.5)));
  CHECK(s.q05 == doctest::Approx(1.2));
  CHECK(s.q50 == 3.0);
  CHECK(s.q95 == doctest::Approx(8.8));
  CHECK(s.ess == effective_sample_size(xs));
  const ColumnSummary empty = summarize("e", std::vector<double>{});
  CHECK(empty.n == 0);
  CHECK(std::isnan(empty.mean));
  CHECK(std::isnan(empty.q50));
  CHECK(std::isnan(empty.ess));
}

TEST_CASE("format_summary_table aligns columns") {
  const double nan = std::nan("");
  const std::vector<ColumnSummary> rows = {
      {"mu", 1000, 1.00234, 0.100312, 0.837, 1.0021, 1.16712, 3856.4, {}},
      {"a_long_name[10]", 1000, -12345.678, 0.5, -0.00001234567, 0.0, 1e6, nan, {}},
  };
  CHECK(format_summary_table(rows) ==
        "name                   mean      sd          5%    50%    95%   ess\n"
        "mu                    1.002  0.1003       0.837  1.002  1.167  3856\n"
        "a_long_name[10]  -1.235e+04     0.5  -1.235e-05      0  1e+06   nan\n");
  CHECK(format_summary_table({}) == "name  mean  sd  5%  50%  95%  ess\n");
  // A name is shown on one line (an expression written over several lines), escaped, and padded by the cells it
  // takes, not its bytes: each line of the table stays aligned.
  const std::vector<ColumnSummary> names = {
      {"(+ x\n     1)", 1, 1, 0, 1, 1, 1, 1, {}},
      {"\xC3\xA9\xE6\x97\xA5", 1, 2, 0, 2, 2, 2, 1, {}},
      {"a\x1b", 1, 3, 0, 3, 3, 3, 1, {}}};
  CHECK(format_summary_table(names) ==
        "name     mean  sd  5%  50%  95%  ess\n"
        "(+ x 1)     1   0   1    1    1    1\n"
        "\xC3\xA9\xE6\x97\xA5         2   0   2    2    2    1\n"
        "a\\x1b       3   0   3    3    3    1\n");
  const ColumnSummary inf = summarize("inf", std::vector<double>(5, INFINITY));
  CHECK(format_summary_table({&inf, 1}) ==
        "name  mean   sd   5%  50%  95%  ess\n"
        "inf    inf  nan  inf  inf  inf  nan\n");
}

TEST_CASE("format_summary_table shows R-hat, with 3 decimals, when a row has one (several chains)") {
  const std::vector<ColumnSummary> rows = {{"mu", 4000, 1.5, 0.25, 1.1, 1.5, 1.9, 3800, 1.00049},
                                           {"z", 4000, 0.5, 0.5, 0, 0, 1, 12, INFINITY},
                                           {"c", 4000, 2, 0, 2, 2, 2, NAN, NAN}};
  CHECK(format_summary_table(rows) ==
        "name  mean    sd   5%  50%  95%   ess   rhat\n"
        "mu     1.5  0.25  1.1  1.5  1.9  3800  1.000\n"
        "z      0.5   0.5    0    0    1    12    inf\n"
        "c        2     0    2    2    2   nan    nan\n");
}

TEST_CASE("stat checks pass on correct draws") {
  const auto iid = iid_normals(4000, 21);
  const auto chain = ar1(20000, 0.8, 22);
  for (const auto* xs : {&iid, &chain}) {
    test::check_mean(*xs, 0.0, 1.0);
    test::check_sd(*xs, 1.0);
    test::check_ks(*xs, normal_cdf);
    std::vector<double> positive(xs->size());
    for (size_t i = 0; i < xs->size(); ++i) positive[i] = (*xs)[i] > 0 ? 1.0 : 0.0;
    test::check_probability(positive, 0.5);
  }
  test::check_mean(std::vector<double>(100, 3.0), 3.0, 0.0);  // a point mass
}

TEST_CASE("stat checks reject wrong targets and too few draws") {
  const auto chain = ar1(20000, 0.8, 23);
  CHECK_FALSE(test::evaluate_mean(chain, 0.2, 1.0).ok);
  CHECK_FALSE(test::evaluate_sd(chain, 1.15).ok);
  CHECK_FALSE(test::evaluate_ks(chain, [](double x) { return normal_cdf(x - 0.2); }).ok);
  std::vector<double> positive(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) positive[i] = chain[i] > 0 ? 1.0 : 0.0;
  CHECK_FALSE(test::evaluate_probability(positive, 0.45).ok);
  const std::vector<double> stuck(100, 3.0);  // ESS NaN, so the checks use n = 100
  CHECK_FALSE(test::evaluate_mean(stuck, 3.5, 1.0).ok);
  CHECK_FALSE(test::evaluate_sd(stuck, 1.0).ok);

  const test::CheckResult few = test::evaluate_mean(std::vector<double>{0.1, -0.2, 0.3}, 0.0, 1.0);
  CHECK_FALSE(few.ok);
  CHECK(few.message.find("too few effective draws") != std::string::npos);
  const test::CheckResult off = test::evaluate_mean(chain, 0.2, 1.0);
  CHECK(off.message.find("z-score") != std::string::npos);
  CHECK(off.message.find("ESS") != std::string::npos);
}

}  // namespace
}  // namespace vnt::mcmc_stats_tests
