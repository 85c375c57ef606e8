// The seeds of the statistical tests: each test's fixed seed plus an offset taken from the environment.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstdlib>

namespace vnt::test {

/// The value of the environment variable VNT_STAT_SEED_OFFSET, 0 if unset. Every statistical test adds it to
/// the fixed seeds of its chains (not of its data), to re-run the suite on other seeds and measure how often a
/// correct sampler fails a check; unset, the suite uses its fixed seeds and stays deterministic.
inline uint64_t stat_seed_offset() {
  const char* s = std::getenv("VNT_STAT_SEED_OFFSET");
  return s == nullptr ? 0 : std::strtoull(s, nullptr, 10);
}

/// `seed` plus stat_seed_offset().
inline uint64_t stat_seed(uint64_t seed) { return seed + stat_seed_offset(); }

}  // namespace vnt::test
