// Block selection. `one` picks a block uniformly, so an MH move multiplies its ratio by #blocks before over
// #blocks after; the principal nodes of a user block are the random choices in the extent of its tagged nodes.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/mix.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/trace/builtins.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

/// Whether the SP of `out` lists its values at its current arguments (for a move of `out` alone: a CRP's tables
/// cannot be listed for several customers at once, which gibbs says when it meets such a block). Arguments it
/// refuses (a categorical's weights that do not sum to 1) are the transition's error to report, where it meets them.
bool enumerable(const SpProcedure& p, const OutputNode* out) {
  ArgBuffer buf(out);
  try {
    return p.sp().enumerate_move(out->value, buf.args(p.aux())).has_value();
  } catch (const Error&) {
    return true;
  }
}

class ExtentWalker {
 public:
  ExtentWalker(Trace& t, const std::string& scope, const Value& block, FlatPtrSet<Node>& seen,
               std::vector<Node*>& found)
      : t_(t), scope_(scope), block_(block), seen_(seen), found_(found) {}

  void visit(Node* n) {
    if (!seen_.insert(n)) return;
    if (n->kind != NodeKind::kOutput) return;
    OutputNode* out = as_output(n);
    if (const SpProcedure* p = primitive_at(out)) {
      const Sp& sp = p->sp();
      if (&sp == t_.scope_include_sp() && out->operands.size() == 3 &&
          scope_name(out->operands[0]->value) == scope_ && !keys_equal(out->operands[1]->value, block_))
        return;  // a nested tag of the same scope with another block belongs to that block
      if (sp.is_random() && !out->constrained) found_.push_back(out);
    }
    for (Node* e : out->esr_parents) visit(e);
    for (Node* o : out->operands) visit(o);
    visit(out->op);
  }

 private:
  Trace& t_;
  const std::string& scope_;
  const Value& block_;
  FlatPtrSet<Node>& seen_;
  std::vector<Node*>& found_;
};

[[noreturn]] void no_choices(const BlockSpec& spec) {
  throw Error(ErrorKind::kInference,
              fmt::format("{}: scope '{}' has no random choices to propose to", spec.kernel, spec.scope), spec.span);
}

}  // namespace

void random_choices_in_block(Trace& trace, const std::string& scope, const Value& block, std::vector<Node*>& out) {
  out.clear();
  const Scope* s = trace.scopes().find(scope);
  if (s == nullptr) return;
  const std::vector<Node*>* tagged = s->nodes(block);
  if (tagged == nullptr) return;
  // The set of nodes met is the thread's scratch, kept grown (gibbs walks a block's extent again after every
  // candidate value); one grown past a large extent is dropped rather than cleared slot by slot each time.
  thread_local FlatPtrSet<Node> seen;
  if (seen.capacity() > 4096) seen = FlatPtrSet<Node>();
  seen.clear();
  ExtentWalker w(trace, scope, block, seen, out);
  for (Node* n : *tagged) w.visit(n);
}

std::vector<Node*> random_choices_in_block(Trace& trace, const std::string& scope, const Value& block) {
  std::vector<Node*> out;
  random_choices_in_block(trace, scope, block, out);
  return out;
}

std::vector<Value> ordered_blocks(Trace& trace, const BlockSpec& spec) {
  std::vector<Value> out;
  const Scope* s = trace.scopes().find(spec.scope);
  if (s == nullptr) return out;
  for (const Value& b : s->blocks().items()) {
    if (!is_number(b))
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: ordered blocks are numbers, but scope '{}' has the block {}", spec.kernel,
                              spec.scope, to_string(b)),
                  spec.span);
    const double x = std::get<double>(b);
    if (spec.lo <= x && x <= spec.hi) out.push_back(b);
  }
  std::sort(out.begin(), out.end(), [](const Value& a, const Value& b) { return std::get<double>(a) < std::get<double>(b); });
  return out;
}

BlockChoice select_block(Trace& trace, const BlockSpec& spec, bool allow_empty) {
  BlockChoice out;
  if (spec.scope == "default") {
    auto& rc = trace.random_choices();
    if (rc.empty()) {
      if (allow_empty) return out;
      no_choices(spec);
    }
    if (spec.mode == BlockSpec::Mode::kOne) {
      out.principals.push_back(rc.at(trace.rng().below(rc.size())));
      out.log_index_density = -std::log(static_cast<double>(rc.size()));
    } else if (spec.mode == BlockSpec::Mode::kAll) {
      out.principals = rc.items();
    } else {
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: the default scope only has the blocks 'one' and 'all'", spec.kernel), spec.span);
    }
    return out;
  }
  const Scope* s = trace.scopes().find(spec.scope);
  if (s == nullptr || s->blocks().empty()) {
    if (allow_empty) return out;
    no_choices(spec);
  }
  switch (spec.mode) {
    case BlockSpec::Mode::kOne: {
      const Value& b = s->blocks().at(trace.rng().below(s->blocks().size()));
      out.log_index_density = -std::log(static_cast<double>(s->blocks().size()));
      out.principals = random_choices_in_block(trace, spec.scope, b);
      out.block = b;
      break;
    }
    case BlockSpec::Mode::kAll:
    case BlockSpec::Mode::kOrdered: {
      std::unordered_set<Node*> seen;
      const std::vector<Value> blocks =
          spec.mode == BlockSpec::Mode::kAll ? s->blocks().items() : ordered_blocks(trace, spec);
      for (const Value& b : blocks)
        for (Node* n : random_choices_in_block(trace, spec.scope, b))
          if (seen.insert(n).second) out.principals.push_back(n);
      break;
    }
    case BlockSpec::Mode::kValue:
      if (s->nodes(spec.block) == nullptr && allow_empty) return out;
      if (s->nodes(spec.block) == nullptr)
        throw Error(ErrorKind::kInference,
                    fmt::format("{}: scope '{}' has no block {}", spec.kernel, spec.scope, to_string(spec.block)),
                    spec.span);
      out.principals = random_choices_in_block(trace, spec.scope, spec.block);
      out.block = spec.block;
      break;
  }
  if (out.principals.empty() && !allow_empty) no_choices(spec);
  return out;
}

void validate_block(Trace& trace, const BlockSpec& spec, ChoiceValues needs, bool in_program) {
  std::vector<Node*> choices;
  if (spec.scope == "default") {
    if (spec.mode == BlockSpec::Mode::kValue)
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: the default scope only has the blocks 'one' and 'all'", spec.kernel), spec.span);
    choices = trace.random_choices().items();
  } else {
    const Scope* s = trace.scopes().find(spec.scope);
    if (s != nullptr) {
      if (spec.mode == BlockSpec::Mode::kValue) {
        if (s->nodes(spec.block) == nullptr)
          throw Error(ErrorKind::kInference,
                      fmt::format("{}: scope '{}' has no block {}", spec.kernel, spec.scope, to_string(spec.block)),
                      spec.span);
        choices = random_choices_in_block(trace, spec.scope, spec.block);
      } else {
        const std::vector<Value> blocks =
            spec.mode == BlockSpec::Mode::kOrdered ? ordered_blocks(trace, spec) : s->blocks().items();
        for (const Value& b : blocks)
          for (Node* n : random_choices_in_block(trace, spec.scope, b)) choices.push_back(n);
      }
    }
  }
  // A scope the program tags only inside a branch not taken now is simply empty for the moment; a scope that
  // has blocks but no random choice in them (e.g. a tagged constant) is a mistake. A scope without blocks is
  // empty too: inside a transaction (the checks of [infer]) one emptied by a collect's evaluation is kept.
  const Scope* scope = spec.scope == "default" ? nullptr : trace.scopes().find(spec.scope);
  if (choices.empty() && in_program && spec.scope != "default" && (scope == nullptr || scope->blocks().empty()))
    return;
  if (choices.empty()) no_choices(spec);
  if (needs == ChoiceValues::kAny) return;
  for (Node* n : choices) {
    const SpProcedure* p = primitive_at(as_output(n));
    SourceSpan where = n->expr ? n->expr->span : SourceSpan{};
    std::string_view name = p ? p->sp().name() : "a procedure";
    if (needs == ChoiceValues::kReal && (p == nullptr || !p->sp().real_valued()))
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: 'drift needs real-valued random choices, but scope '{}' includes {} at {}",
                              spec.kernel, spec.scope, name, span_location(where)),
                  spec.span);
    if (needs == ChoiceValues::kEnumerable && (p == nullptr || !enumerable(*p, as_output(n))))
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: scope '{}' includes {} at {}, whose values cannot be enumerated ({} takes {})",
                              spec.kernel, spec.scope, name, span_location(where), spec.kernel, kEnumerableChoices),
                  spec.span);
  }
}

double log_index_density(Trace& trace, const BlockSpec& spec) {
  if (spec.mode != BlockSpec::Mode::kOne) return 0;
  size_t n = 0;
  if (spec.scope == "default") {
    n = trace.random_choices().size();
  } else if (const Scope* s = trace.scopes().find(spec.scope)) {
    n = s->blocks().size();
  }
  return n == 0 ? kNegInf : -std::log(static_cast<double>(n));
}

}  // namespace vnt
