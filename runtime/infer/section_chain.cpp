// Value-only evaluation of chain-shaped local sections (see section_chain.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/section_chain.hpp"

#include "runtime/regen/at_application.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/section_dag.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/sp/sp.hpp"

namespace vnt {
namespace {

/// The single application `n` feeds, with the operand position, if `n` has exactly one consumer that is not
/// the (always empty) request of a primitive SP.
OutputNode* sole_consumer(Node* n, size_t* index) {
  OutputNode* found = nullptr;
  for (Node* c : n->children) {
    if (c->kind == NodeKind::kRequest) {
      if (primitive_at(as_request(c)->output) == nullptr) return nullptr;
      continue;
    }
    if (c->kind != NodeKind::kOutput || found != nullptr) return nullptr;
    found = as_output(c);
  }
  if (found == nullptr || found->op == n) return nullptr;
  size_t uses = 0;
  for (size_t i = 0; i < found->operands.size(); ++i)
    if (found->operands[i] == n) {
      *index = i;
      ++uses;
    }
  return uses == 1 ? found : nullptr;
}

bool other_operands_outside(OutputNode* out, size_t index, BorderReach& reach) {
  for (size_t i = 0; i < out->operands.size(); ++i)
    if (i != index && reach.follows(out->operands[i])) return false;
  return true;
}

/// Applies `out`'s primitive SP with operand `index` replaced by `v`.
template <class F>
auto with_operand(OutputNode* out, size_t index, const Value& v, F&& f) {
  ArgBuffer buf(out, index, &v);
  const SpProcedure* p = primitive_at(out);
  return f(p->sp(), buf.args(p->aux()));
}

/// Whether x is made of constants only, within a few applications: constants, lookups of them, and deterministic
/// primitive applications of them (the (vector 1 2) of a datum). Nothing a border feeds, so never stale.
bool constant_only(Node* x, int depth) {
  while (x->kind == NodeKind::kLookup) x = as_lookup(x)->source;
  if (x->kind == NodeKind::kConstant) return true;
  if (x->kind != NodeKind::kOutput || depth == 0) return false;
  OutputNode* out = as_output(x);
  const SpProcedure* p = primitive_at(out);
  if (p == nullptr || p->sp().is_random() || p->aux() != nullptr || !out->esr_parents.empty()) return false;
  if (!constant_only(out->op, depth - 1)) return false;
  for (Node* o : out->operands)
    if (!constant_only(o, depth - 1)) return false;
  return true;
}

}  // namespace

bool SectionChain::match(Trace& trace, BorderReach& reach, Node* root) {
  Node* border = reach.border();
  // The root passes the border's value on: a lookup of it, or an application whose family it is (the mem'd
  // (w (z i)) of a mixture whose component's weight w(k) is the border).
  const bool passes = root->kind == NodeKind::kLookup
                          ? as_lookup(root)->source == border
                          : root->kind == NodeKind::kOutput && passes_family_value(as_output(root)) &&
                                as_output(root)->esr_parents[0] == border && !reach.follows(as_output(root)->op);
  if (!passes) return false;
  root_ = root;
  n_ = 0;
  inputs_ = Inputs::kUnknown;
  Node* cur = root;
  while (true) {
    size_t index = 0;
    OutputNode* next = sole_consumer(cur, &index);
    if (next == nullptr || index > UINT16_MAX || !other_operands_outside(next, index, reach)) return false;
    const SpProcedure* p = value_application(trace, reach, next);
    if (p == nullptr) return false;
    if (p->sp().is_random()) {
      leaf_ = next;
      leaf_arg_ = static_cast<uint16_t>(index);
      return true;
    }
    if (next->constrained || n_ == kMaxLinks) return false;
    link_[n_] = next;
    arg_[n_++] = static_cast<uint16_t>(index);
    cur = next;
  }
}

std::optional<double> SectionChain::delta(const Value& b_new, const Value& b_old, bool current_is_old,
                                          std::vector<Value>& out, std::string_view kernel) const {
  const SpProcedure* leaf_sp = primitive_at(as_output(leaf_));
  auto run = [&](const Value& b, std::vector<Value>* keep) {
    // Each link's value alternates between two slots, so the last link's input (the leaf may ask for the log-odds
    // of the last link's value) is still there when the leaf is scored, and the border's value is read in place
    // (a vector's count would move twice per section otherwise).
    Value slot[2];
    const Value* in = &b;
    const Value* last_in = nullptr;
    Rng unused(0);  // deterministic SPs draw nothing
    for (size_t i = 0; i < n_; ++i) {
      Value& cur = slot[i % 2];
      cur = with_operand(as_output(link_[i]), arg_[i], *in, [&](const Sp& sp, const Args& a) {
        return at_application(sp, link_[i], [&] { return sp.simulate(a, unused); });
      });
      if (keep) keep->push_back(cur);
      last_in = in;
      in = &cur;
    }
    ArgBuffer leaf(as_output(leaf_), leaf_arg_, in);
    if (n_ > 0) leaf.replacement_from(as_output(link_[n_ - 1]), arg_[n_ - 1], last_in);
    const Sp& sp = leaf_sp->sp();
    return at_application(sp, leaf_, [&] { return sp.log_density(leaf_->value, leaf.args(leaf_sp->aux())); });
  };
  double fresh = 0;
  const size_t start = out.size();
  try {
    fresh = run(b_new, &out);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kDomain) throw;
    out.resize(start + n_);  // keep later sections' values aligned; the move is rejected anyway
    return std::nullopt;
  }
  if (fresh == kPosInf) [[unlikely]]  // a density of +inf fails the transition (infinite_density.hpp)
    raise_infinite_density_at(leaf_, InfiniteIn::kProposal, kernel);
  double old = 0;
  if (current_is_old) {  // the trace's values: the leaf's operand is in the trace, with its origin
    ArgBuffer leaf(as_output(leaf_));
    old = leaf_sp->sp().log_density(leaf_->value, leaf.args(leaf_sp->aux()));
  } else {
    try {
      old = run(b_old, nullptr);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kDomain) throw;
      old = kNegInf;  // a stale section the old value makes fail: probability zero
    }
  }
  if (old == kPosInf) [[unlikely]]
    raise_infinite_density_at(leaf_, InfiniteIn::kCurrentState, kernel);
  return log_weight(fresh, old);
}

void SectionChain::make_inputs_fresh(Trace& trace, Node* border, FreshWatch& watch) const {
  if (inputs_ == Inputs::kConstant || !stale_elsewhere(trace, border)) return;
  if (inputs_ == Inputs::kUnknown) {
    constexpr int kDepth = 3;
    bool constant = true;
    Node* prev = root_;
    for (size_t i = 0; i <= n_ && constant; ++i) {
      OutputNode* out = as_output(i < n_ ? link_[i] : leaf_);
      constant &= constant_only(out->op, kDepth);
      for (Node* o : out->operands) constant &= o == prev || constant_only(o, kDepth);
      prev = out;
    }
    inputs_ = constant ? Inputs::kConstant : Inputs::kOther;
    if (constant) return;
  }
  // A repair that moves the shape may have removed nodes of this chain: it stops there (see the header).
  InputsFresh fresh(trace, border, watch);
  if (fresh.watched()) return;
  Node* prev = root_;
  for (size_t i = 0; i <= n_; ++i) {
    OutputNode* out = as_output(i < n_ ? link_[i] : leaf_);
    if (!fresh(out->op)) return;  // the procedure too: another border's section may compute it
    for (Node* o : out->operands)
      if (o != prev && !fresh(o)) return;
    prev = out;
  }
}

bool SectionChain::commit(const Value& b_new, const Value* values) const {
  root_->value = b_new;
  bool procedures = false;
  for (size_t i = 0; i < n_; ++i) {
    procedures |= is_procedure(link_[i]->value) || is_procedure(values[i]);
    link_[i]->value = values[i];
  }
  return procedures;
}

}  // namespace vnt
