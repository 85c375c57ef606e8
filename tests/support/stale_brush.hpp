// Stale local sections with brush, for the tests of their repairs. No subsampled_mh kernel leaves one stale: each
// transition looks for one before it draws (exact with 'fallback 'mh, an error without). Without that look
// (SubsampledState::unchecked_for_tests), an approximate move that accepts without drawing such a section leaves it
// stale, as kernels did before the look was made by every transition.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "runtime/core/error.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"

namespace vnt::test {

/// One transition on `spec` as a kernel with 'fallback 'mh made it before it looked for sections with brush: an
/// approximate move unless it draws one, else exact mh through the partition (with the same drift). Called without
/// [infer]'s check, and without the look. Returns whether it accepted.
inline bool unchecked_fallback_move(Trace& trace, const BlockSpec& spec, SubsampledOptions so,
                                    SubsampledState& state) {
  so.fallback_to_mh = false;
  state.unchecked_for_tests = true;
  try {
    return subsampled_mh_transition(trace, spec, so, state);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("a local section changes the structure of the trace") == std::string::npos &&
        what.find("a local section that changes the structure of the trace is stale") == std::string::npos)
      throw;
  }
  MhOptions exact;
  exact.drift_sigma = so.drift_sigma;
  return mh_transition(trace, spec, exact);
}

}  // namespace vnt::test
