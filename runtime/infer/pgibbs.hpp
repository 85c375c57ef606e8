// Particle Gibbs: the choices of a scope drawn jointly by conditional SMC over its ordered blocks, the current
// values kept as the retained particle (Andrieu, Doucet & Holenstein 2010).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "runtime/infer/mix.hpp"

namespace vnt {

class Trace;

/// The most particles a transition runs: beyond it, an inference error rather than a run out of memory.
inline constexpr size_t kMaxParticles = 1'000'000;

/// The most particles times groups a transition runs. Until their paths coalesce each particle keeps a record of
/// each group it extended (about 1.4 KB for a state of a state-space model, with the transaction's log of its
/// moves), so this bounds a transition's memory to a few GB: an inference error before any move, rather than an
/// allocation that fails half way and leaves the session unable to go on.
inline constexpr size_t kMaxParticleGroups = 2'000'000;

/// One transition (docs/inference.md, "pgibbs"). The scaffold of every choice `spec` selects is split into groups,
/// one per block in increasing order (`ordered`, `(ordered_range lo hi)`; `all` or a block value: one group), each
/// holding the border nodes whose values need no later block. The current path is the retained particle; `particles`
/// new ones extend group by group from the prior, weighed by what absorbs each group (the observations), their
/// ancestors drawn in proportion to the weights of the group before; the retained one keeps its own path. The path
/// of one of the particles + 1, drawn in proportion to the last weights, becomes the trace's. Returns whether that
/// was a new one. When the model is a Markov chain of order one over the blocks and a regeneration makes nothing
/// random but the choices (branches they decide are pure), the retained particle's ancestor is drawn too (ancestor sampling), which keeps the first blocks from
/// sticking to their values (path degeneracy); the return value then also says whether that gave the retained path
/// other earlier values. Throws kInference, leaving the trace as it was, for a choice of the scope that exists only for
/// some values of the others (or holds random choices in a branch they decide), a choice's scope or block computed
/// from them, and, when a particle meets one, a value that makes new random choices.
bool pgibbs_transition(Trace& trace, const BlockSpec& spec, size_t particles);

/// Whether a transition on `spec` in the trace's current state would also draw the retained particle's ancestors
/// (ancestor sampling: ancestor_sampling.hpp says when). For tests and diagnostics; false when the block is empty.
bool pgibbs_samples_ancestors(Trace& trace, const BlockSpec& spec);

}  // namespace vnt
