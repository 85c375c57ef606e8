// Enumerative Gibbs: a block of discrete random choices set to a value drawn from its conditional posterior,
// computed by scoring every joint value of the block.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "runtime/infer/mix.hpp"

namespace vnt {

class Trace;

/// The most joint values one transition scores (the product of the choices' support sizes): a block beyond it is an
/// inference error naming the count, rather than a transition that runs for ever.
inline constexpr size_t kMaxGibbsValues = 4096;

/// One transition on a block chosen by `spec` (docs/inference.md, "gibbs"). For each joint value v of the block's
/// choices (each listed by its SP's enumerate()), the scaffold is regenerated with the choices set to v, new brush
/// drawn from the prior, and weighed by the joint density of the choices and what absorbs them; the current value
/// keeps its own brush. One of them is kept with probability proportional to its weight (times the probability of
/// picking the block again, for `one`): Gibbs sampling on the block, exact without brush, and with brush a Gibbs
/// step on an extended space whose other candidates' brush is auxiliary (the conditional importance sampling of
/// particle Gibbs). Returns whether the block took another value. Throws kInference, leaving the trace as it was,
/// for a choice that cannot be enumerated, a block of more than kMaxGibbsValues joint values, a choice whose values
/// or existence depend on another choice of the block, and a value that changes which choices the block holds.
bool gibbs_transition(Trace& trace, const BlockSpec& spec);

}  // namespace vnt
