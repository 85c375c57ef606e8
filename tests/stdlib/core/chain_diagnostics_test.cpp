// Rank-normalised split R-hat and multi-chain ESS: a reference computed independently, and what they must see in
// chains whose truth is known (iid, AR(1), shifted, of another scale, stuck).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/chain_diagnostics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "runtime/core/rng.hpp"

namespace vnt::chain_diagnostics_tests {
namespace {

using Chains = std::vector<std::vector<double>>;

// Stationary AR(1) with unit marginal variance, shifted by `shift` and scaled by `scale`; phi = 0 is iid.
std::vector<double> ar1(size_t n, double phi, uint64_t seed, double shift = 0, double scale = 1) {
  Rng rng(seed);
  std::vector<double> xs(n);
  double x = rng.normal();
  for (double& v : xs) {
    x = phi * x + std::sqrt(1 - phi * phi) * rng.normal();
    v = shift + scale * x;
  }
  return xs;
}

Chains chains_of(size_t m, size_t n, double phi, uint64_t seed) {
  Chains c;
  for (size_t i = 0; i < m; ++i) c.push_back(ar1(n, phi, seed + i));
  return c;
}

}  // namespace

// The values of a pure-Python transcription of the paper's formulas (statistics.NormalDist for Phi^-1), for three
// drifting chains of 11 draws with a tie (1.0 twice): the split drops each middle draw.
TEST_CASE("split R-hat and multi-chain ESS agree with an independent computation to rounding") {
  const Chains chains = {{0.0, 0.96, 0.52, -0.69, -0.88, 0.22, 1.0, 0.32, -0.83, -0.76, 0.42},
                         {1.01, 0.94, -0.43, -1.03, 0.1, 1.38, 1.0, -0.4, -0.7, 0.61, 1.69},
                         {1.27, -0.12, -1.19, -0.22, 1.51, 1.62, 0.09, -0.69, 0.57, 2.17, 1.91}};
  CHECK(split_rhat(chains) == doctest::Approx(0.96187051854559302).epsilon(1e-12));
  CHECK(basic_rhat(rank_normalize(split_chains(chains))) == doctest::Approx(0.96187051854559302).epsilon(1e-12));
  CHECK(multi_chain_ess(chains) == doctest::Approx(24.927895446080989).epsilon(1e-12));
  const Chains halves = split_chains(chains);
  REQUIRE(halves.size() == 6);
  CHECK(halves[0] == std::vector<double>{0.0, 0.96, 0.52, -0.69, -0.88});
  CHECK(halves[1] == std::vector<double>{1.0, 0.32, -0.83, -0.76, 0.42});
}

TEST_CASE("rank normalisation: ties share a rank, the result is symmetric about 0") {
  const Chains z = rank_normalize(Chains{{3, 1}, {2, 2}});
  // Ranks 4, 1 and 2.5 twice of S = 4 draws: Phi^-1((r - 3/8) / 4.25).
  CHECK(z[0][0] == doctest::Approx(1.0491313979639711));  // Phi^-1(0.853)
  CHECK(z[0][1] == doctest::Approx(-1.0491313979639711));
  CHECK(z[1][0] == doctest::Approx(0.0).scale(1));
  CHECK(z[1][1] == z[1][0]);
}

TEST_CASE("chains of one distribution have R-hat near 1, and iid or AR(1) chains the ESS their correlation gives") {
  // 4 x 2000 iid draws: R-hat - 1 is of order 1/n. The ESS of 8000 iid draws is 8000 give or take its own
  // estimation error (a few percent at this length).
  const Chains iid = chains_of(4, 2000, 0.0, 11);
  CHECK(split_rhat(iid) < 1.005);
  CHECK(multi_chain_ess(iid) == doctest::Approx(8000).epsilon(0.1));
  // AR(1) with phi = 0.6: tau = (1 + phi) / (1 - phi) = 4, so 20000 draws are worth 5000.
  const Chains ar = chains_of(4, 5000, 0.6, 21);
  CHECK(split_rhat(ar) < 1.01);
  CHECK(multi_chain_ess(ar) == doctest::Approx(5000).epsilon(0.15));
}

TEST_CASE("a chain elsewhere, of another scale, drifting or stuck raises R-hat and lowers the ESS") {
  Chains shifted = chains_of(4, 1000, 0.0, 31);
  shifted[3] = ar1(1000, 0.0, 99, 1.0);  // one chain a standard deviation away
  CHECK(split_rhat(shifted) > 1.05);
  CHECK(multi_chain_ess(shifted) < 0.5 * multi_chain_ess(chains_of(4, 1000, 0.0, 31)));

  // Same centre, three times the spread: the bulk does not see it, the folded (tail) R-hat does.
  Chains wide = chains_of(4, 1000, 0.0, 41);
  wide[3] = ar1(1000, 0.0, 98, 0.0, 3.0);
  CHECK(basic_rhat(rank_normalize(split_chains(wide))) < 1.01);
  CHECK(split_rhat(wide) > 1.1);

  // One chain that drifts from -2 to 2: its halves disagree, which splitting shows even for a single chain.
  std::vector<double> drift = ar1(2000, 0.0, 51);
  for (size_t i = 0; i < drift.size(); ++i) drift[i] += -2.0 + 4.0 * static_cast<double>(i) / 2000.0;
  CHECK(split_rhat(Chains{drift}) > 1.3);

  // Two chains stuck at different values: infinitely far from mixed; the ESS is about one per chain half.
  const Chains stuck = {std::vector<double>(10, 0.0), std::vector<double>(10, 1.0)};
  CHECK(std::isinf(split_rhat(stuck)));
  CHECK(multi_chain_ess(stuck) < 4.0);
}

TEST_CASE("undefined cases are NaN: draws all equal, too few, unequal lengths, a non-finite draw") {
  CHECK(std::isnan(split_rhat(Chains{std::vector<double>(10, 2.0), std::vector<double>(10, 2.0)})));
  CHECK(std::isnan(multi_chain_ess(Chains{std::vector<double>(10, 2.0), std::vector<double>(10, 2.0)})));
  CHECK(std::isnan(split_rhat(Chains{{1, 2, 3}, {2, 3, 4}})));  // halves of one draw have no variance
  CHECK(std::isnan(split_rhat(Chains{{1, 2, 3, 4}, {2, 3, 4, 5, 6}})));
  CHECK(std::isnan(multi_chain_ess(Chains{{1, 2, 3, 4}, {2, 3, 4, 5, 6}})));
  CHECK(std::isnan(split_rhat(Chains{{1, 2, 3, NAN}, {2, 3, 4, 5}})));
  CHECK(std::isnan(split_rhat(Chains{})));
  CHECK(std::isnan(basic_rhat(Chains{{1, 2, 3}})));  // one chain, unsplit
}

}  // namespace vnt::chain_diagnostics_tests
