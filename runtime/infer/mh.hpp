// Single-site (or block) Metropolis-Hastings on the trace: resimulation from the prior or a Gaussian drift.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>

#include "runtime/infer/mix.hpp"

namespace vnt {

class Trace;

struct MhOptions {
  std::optional<double> drift_sigma;  // absent: propose by resimulation from the prior
  /// Tests force the decision to check exact restoration; inference always uses kMetropolis.
  enum class Decision { kMetropolis, kAccept, kReject } decision = Decision::kMetropolis;
  /// Use the partitioned scaffold when the block is one node with a border (same decisions, faster);
  /// tests turn it off to compare against the general path.
  bool allow_partition = true;
};

struct MhStats {
  size_t proposals = 0;
  size_t accepted = 0;
};

/// One MH transition on a block chosen by `spec` (Alg. 1 with the weight of Eq. 3 and the index correction).
/// A rejected proposal restores the trace exactly. Throws kInference for unusable blocks.
bool mh_transition(Trace& trace, const BlockSpec& spec, const MhOptions& opts);

/// MH on a given set of principal nodes with a known index density; returns whether it accepted.
/// Proposals whose regeneration hits a domain error (a zero-probability state) are rejected.
/// nullopt: repairing a stale section it reads moved the trace's shape, before anything was proposed or once the
/// proposal was undone; what was selected may be gone. The caller puts the trace's stream back as it was before it
/// selected `choice` and selects again, so that the move is the one a trace repaired beforehand makes.
std::optional<bool> mh_on_principals(Trace& trace, const BlockChoice& choice, const BlockSpec& spec,
                                     const MhOptions& opts);

}  // namespace vnt
