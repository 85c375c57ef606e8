// Block selection for kernels: (scope, block) -> principal nodes, and the index-density correction of `one`.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "runtime/core/source_span.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

class Trace;
struct Node;

/// What an [infer] kernel names: a scope and a block selector (one, all, or a block value).
struct BlockSpec {
  std::string scope;     // "default" or a user scope
  enum class Mode { kOne, kAll, kValue, kOrdered } mode = Mode::kOne;
  Value block;           // for kValue
  // kOrdered (pgibbs): the blocks b with lo <= b <= hi, numbers, in increasing order ((ordered_range lo hi); ordered
  // is the whole line).
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  SourceSpan span;       // of the kernel expression, for messages
  std::string kernel;    // kernel name, for messages
};

struct BlockChoice {
  std::vector<Node*> principals;
  double log_index_density = 0;  // log of the probability of having picked this block (-log #blocks for `one`)
  Value block = Value{};         // the block value picked in a user scope by `one` or named; nil otherwise
};

/// Picks the principal nodes. Throws kInference if the scope has no random choices or the block is absent,
/// unless `allow_empty` (a kernel whose block emptied during a run makes no move: the identity kernel).
BlockChoice select_block(Trace& trace, const BlockSpec& spec, bool allow_empty = false);

/// The blocks of a kOrdered spec in increasing order. Throws kInference naming a block that is not a number.
std::vector<Value> ordered_blocks(Trace& trace, const BlockSpec& spec);

/// What a kernel needs of the values of the choices it moves.
enum class ChoiceValues { kAny, kReal /* 'drift */, kEnumerable /* gibbs */ };

/// The choices whose values can be enumerated, as the errors about the others list them.
inline constexpr const char* kEnumerableChoices =
    "flip, bernoulli, categorical, binomial and beta_binomial of n up to 4095, uniform_discrete of up to 4096 values, "
    "draws of make_beta_bernoulli and make_dir_cat procedures, make_crp tables";

/// Checks before a run that the block exists and has random choices, and that every choice it can select has the
/// values `needs` asks for. Throws kInference naming the scope and the reason. A scope the program names
/// (`in_program`) but that is empty right now (e.g. tagged inside an untaken branch) is accepted: its kernel makes
/// no move until it has choices.
void validate_block(Trace& trace, const BlockSpec& spec, ChoiceValues needs, bool in_program = false);

/// log density of the index after a proposal (the number of blocks may have changed).
double log_index_density(Trace& trace, const BlockSpec& spec);

/// The unconstrained random choices in the dynamic extent of nodes tagged (scope, block).
std::vector<Node*> random_choices_in_block(Trace& trace, const std::string& scope, const Value& block);
/// The same into `out` (cleared first), for a caller that asks again and again.
void random_choices_in_block(Trace& trace, const std::string& scope, const Value& block, std::vector<Node*>& out);

}  // namespace vnt
