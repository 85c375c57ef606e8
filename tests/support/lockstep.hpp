// Lockstep runs of exact mh (general scaffold path), subsampled_mh with eps = 0 and exact mh through the
// partition: the three must make the same decisions with the same random numbers.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::test {

/// The options of a lockstep pair: subsampled_mh with eps = 0 on one engine and exact mh on the general scaffold
/// path on the other, both with a drift of `sigma`, and plain mh for a second scope on both (not partitioned: a
/// partitioned move also moves the shape epoch).
struct Lockstep {
  SubsampledOptions sub;
  MhOptions exact;
  MhOptions other;
  MhOptions partitioned;  // exact mh through the partition, with the same drift
  Lockstep(size_t batch, double sigma) {
    sub.batch = batch;
    sub.epsilon = 0;
    sub.drift_sigma = sigma;
    exact.drift_sigma = sigma;
    exact.allow_partition = false;
    other.allow_partition = false;
    partitioned.drift_sigma = sigma;
  }
};

/// One program in three engines moved in lockstep: exact mh on the whole scaffold (`general`), subsampled_mh with
/// eps = 0 (`sub`) and exact mh through the partition (`part`).
struct ThreeWay {
  Engine general, sub, part;
  SubsampledState state;
  /// `prepare`, if given, runs on each engine after the program, before the engines start to differ.
  ThreeWay(uint64_t seed, const std::string& program, const std::function<void(Engine&)>& prepare = {})
      : general(seed), sub(seed), part(seed) {
    for (Engine* e : {&general, &sub, &part}) {
      run(*e, program);
      if (prepare) prepare(*e);
    }
    general.trace().rng().split();  // mirror the one draw subsampled_mh splits off for its section order
    part.trace().rng().split();
  }
  /// One transition on `spec` in each engine; requires the same decision and returns it.
  bool step(const BlockSpec& spec, const Lockstep& o) {
    const bool a = mh_transition(general.trace(), spec, o.exact);
    REQUIRE(a == subsampled_mh_transition(sub.trace(), spec, o.sub, state));
    REQUIRE(a == mh_transition(part.trace(), spec, o.partitioned));
    return a;
  }
  /// step(), then requires the three traces to be the same.
  bool step_same(const BlockSpec& spec, const Lockstep& o) {
    const bool a = step(spec, o);
    REQUIRE(fingerprint_of(general) == fingerprint_of(sub));
    REQUIRE(fingerprint_of(general) == fingerprint_of(part));
    return a;
  }
};

}  // namespace vnt::test
