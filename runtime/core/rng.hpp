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

  /// The stream named by (seed, a, b): the same names give the same numbers, whatever else has been drawn. Its state
  /// and its increment are both hashed from the names (pcg streams that differ in the increment alone are correlated).
  static Rng keyed(uint64_t seed, uint64_t a, uint64_t b) {
    const uint64_t h = mix(mix(mix(seed) ^ a) ^ b);
    auto word = [h](uint64_t k) { return pcg_extras::pcg128_t(mix(h ^ k)) << 64 | mix(h ^ (k + 1)); };
    Rng r;
    r.engine_ = Engine(word(1), word(3));
    return r;
  }

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
  /// splitmix64's finaliser: a bijection of 64-bit words whose output bits each depend on every input bit.
  static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  Engine engine_;
};

}  // namespace vnt
