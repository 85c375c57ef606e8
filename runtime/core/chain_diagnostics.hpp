// Diagnostics of several MCMC chains of one quantity: the rank-normalised split R-hat and the multi-chain effective
// sample size of Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021), "Rank-normalization, folding, and
// localization: an improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <vector>

namespace vnt {

/// Each chain split into its first and second half (the middle draw of an odd length dropped): a chain that
/// drifts then disagrees with itself, which R-hat and the ESS then see.
std::vector<std::vector<double>> split_chains(std::span<const std::vector<double>> chains);

/// R-hat of equally long chains (Gelman et al., BDA3 eq. 11.4, with the divisor n - 1 for W): sqrt(var+ / W),
/// var+ = (n - 1)/n W + B/n. NaN for fewer than 2 chains, unequal lengths, fewer than 2 draws each, a non-finite
/// draw, or draws all equal; infinite for chains that each stay at one value but not all at the same one.
double basic_rhat(std::span<const std::vector<double>> chains);

/// The draws of every chain replaced by the normal quantiles of their ranks among all the draws (average ranks
/// for ties): z = Phi^-1((r - 3/8) / (S + 1/4)), S the number of draws. Same shapes as the input.
std::vector<std::vector<double>> rank_normalize(std::span<const std::vector<double>> chains);

/// The rank-normalised split R-hat: the larger of the bulk R-hat (basic_rhat of the rank-normalised split chains)
/// and the tail R-hat (the same of |x - median|, which sees chains of one location and different scales). Near 1
/// when the chains agree; above 1.01 says they have not mixed. Defined for one chain too (its halves); NaN for
/// chains of unequal lengths or of fewer than 4 draws, a non-finite draw, or draws all equal.
double split_rhat(std::span<const std::vector<double>> chains);

/// The multi-chain effective sample size of the split chains (Vehtari et al. 2021, eq. 10-11): the chains'
/// autocorrelations combined with the between-chain variance, summed over Geyer's initial monotone positive
/// sequence; tau floored as for one chain (effective_sample_size). Chains stuck apart have an ESS of about the
/// number of chains. NaN as split_rhat.
double multi_chain_ess(std::span<const std::vector<double>> chains);

}  // namespace vnt
