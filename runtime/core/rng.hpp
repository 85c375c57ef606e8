// The one random stream of a trace: pcg64, sampled through Boost.Random (portable across libraries).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <pcg_random.hpp>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cstdint>

namespace vnt {

class Rng {
 public:
  using Engine = pcg64;

  explicit Rng(uint64_t seed = 0) : engine_(seed) {}

  Engine& engine() { return engine_; }

  /// Uniform on [0, 1).
  double uniform() { return boost::random::uniform_01<double>()(engine_); }
  /// Standard normal.
  double normal() { return boost::random::normal_distribution<double>(0.0, 1.0)(engine_); }
  /// Uniform integer in [0, n), n > 0.
  uint64_t below(uint64_t n) { return boost::random::uniform_int_distribution<uint64_t>(0, n - 1)(engine_); }
  /// An independent stream derived from this one (for particles and chains).
  Rng split() { return Rng(engine_()); }

 private:
  Engine engine_;
};

}  // namespace vnt
