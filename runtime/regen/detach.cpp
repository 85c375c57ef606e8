// Detach: walk the border in reverse, unabsorb absorbing nodes, extract resampling ones once their last
// consumer has let go, un-evaluate brush families into the Db (rho weight of Eq. 3).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/diagnostics.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/scratch_stack.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/builtins.hpp"
#include "runtime/trace/procedures.hpp"

namespace vnt {

std::optional<double> ArgBuffer::log_odds(size_t i) const {
  if (i == replaced_) {  // computed off the trace, by from_ if the caller said so
    const SpProcedure* p = from_ != nullptr ? primitive_at(from_) : nullptr;
    if (p == nullptr) return std::nullopt;
    ArgBuffer inner(from_, from_index_, from_input_);
    return p->sp().log_odds(inner.args(p->aux()));
  }
  return operand_log_odds(out_, i);
}

std::optional<double> operand_log_odds(const OutputNode* out, size_t i) {
  const Node* n = out->operands[i];
  while (n->kind == NodeKind::kLookup) n = static_cast<const LookupNode*>(n)->source;
  if (n->kind != NodeKind::kOutput) return std::nullopt;
  const auto* o = static_cast<const OutputNode*>(n);
  const SpProcedure* p = primitive_at(o);
  if (p == nullptr) return std::nullopt;
  ArgBuffer inner(o);
  return p->sp().log_odds(inner.args(p->aux()));
}

namespace {

std::vector<Node*>& detach_scratch() {
  thread_local std::vector<Node*> stack;
  return stack;
}

// An application being un-evaluated by Detach::uneval_family, and the partial sums of its weight.
struct UnevalFrame {
  enum Step : uint8_t { kUnapply, kRequests, kOperands };
  OutputNode* out;
  Step step = kUnapply;
  size_t next = 0;       // kOperands: operands (then the operator) left to un-evaluate
  double unapply = 0;    // of its SP, its ESR parents and its requests
  double requests = 0;   // of the families its requests made
  double family = 0;     // the whole family's
};

std::vector<UnevalFrame>& uneval_scratch() {
  thread_local std::vector<UnevalFrame> stack;
  return stack;
}

}  // namespace

double Detach::detach_and_extract() {
  double w = 0;
  for (auto it = s_.border.rbegin(); it != s_.border.rend(); ++it) {
    Node* n = *it;
    if (s_.is_absorbing(n)) {
      w += detach(n);
    } else {
      if (n->observation_root) [[unlikely]] {
        if (Node* c = unapplied_next(n))
          unconstrained_at_unapply_ = c;
        else
          w += unconstrain(n);
      }
      w += extract(n);
    }
  }
  return w;
}

Node* Detach::unapplied_next(Node* root) const {
  Node* c = t_.constrainable(root);
  if (c == nullptr) return nullptr;
  for (Node* n = root;; n = t_.passed_on(n)) {  // release() takes a link's passed-on parent first
    const int* count = s_.drg.find(n);
    if (count == nullptr || *count != 1) return nullptr;
    if (n == c) return c;
  }
}

double Detach::detach(Node* n) {
  double w = 0;
  if (n->kind == NodeKind::kPlate) {
    // Kept in the Db so that restoring a rejected proposal does not rescore every row.
    w += plate_total(*as_plate(n));
    db_.put_value(n, as_plate(n)->total);
  }
  if (n->kind == NodeKind::kOutput) {
    OutputNode* out = as_output(n);
    if (const SpProcedure* p = primitive_at(out)) {
      ArgBuffer buf(out);
      Args args = buf.args(p->aux());
      p->sp().unincorporate(out->value, args);
      if (score_) w += p->sp().log_density(out->value, args);
    }
  }
  return w + extract_parents(n);
}

double Detach::extract(Node* n) { return release(n, true); }

double Detach::extract_parents(Node* n) { return release(n, false); }

double Detach::release(Node* top, bool release_top) {
  // Depth-first with an explicit stack, in the order a recursion over the parents would take: a scaffold can be
  // a chain of deterministic nodes as long as the program, deeper than any thread stack.
  ScratchStack<Node*> stack(detach_scratch());
  stack.push(top);
  double w = 0;
  for (bool first = true; !stack.empty(); first = false) {
    Node* n = stack.pop();
    if (!first || release_top) {
      int* count = s_.drg.find(n);
      if (count == nullptr) continue;
      VNT_ASSERT(*count > 0, "regen count underflow");
      if (--*count > 0) continue;
      if (n->kind == NodeKind::kRequest) {
        w += uneval_requests(as_request(n));
        w += unapply_psp(n);
      } else if (n->kind == NodeKind::kOutput) {
        w += unapply_psp(n);
      }
    }
    // Pushed so that the last ESR parent comes off first, then the definite parents from the last one.
    for (size_t i = 0, k = definite_parent_count(n); i < k; ++i)
      if (Node* p = definite_parent(n, i); p->kind != NodeKind::kConstant) stack.push(p);  // never resampled
    if (n->kind == NodeKind::kOutput)
      for (Node* e : as_output(n)->esr_parents) stack.push(e);
  }
  return w;
}

double Detach::extract_esr_parents(OutputNode* out, size_t from) {
  double w = 0;
  for (size_t i = out->esr_parents.size(); i > from; --i) w += extract(out->esr_parents[i - 1]);
  return w;
}

double Detach::uneval_family(Node* root) {
  // With an explicit stack of the applications being un-evaluated: the families requested through compound calls
  // nest as deep as the program's recursion did (forget, or the engine going, after a deep evaluation on a large
  // stack). Steps and weights come in the order, and are summed in the grouping, of the recursive definition.
  if (root->kind != NodeKind::kOutput) return root->kind == NodeKind::kLookup ? uneval_lookup(as_lookup(root)) : 0;
  ScratchStack<UnevalFrame> stack(uneval_scratch());
  stack.push(UnevalFrame{as_output(root)});
  while (true) {
    // top() is fetched again after each call that may extract: a nested walk may grow the scratch vector.
    OutputNode* out = stack.top().out;
    switch (stack.top().step) {
      case UnevalFrame::kUnapply: {
        double w = unapply_psp(out);
        w += extract_esr_parents(out);
        stack.top().unapply = w;
        stack.top().step = UnevalFrame::kRequests;
        continue;
      }
      case UnevalFrame::kRequests: {
        if (!out->esr_parents.empty()) {
          Node* family = pop_esr_family(out->request);
          if (family != nullptr && family->kind == NodeKind::kOutput) {
            stack.push(UnevalFrame{as_output(family)});
            continue;
          }
          const double w = family == nullptr ? 0 : uneval_released(family);
          stack.top().requests += w;
          continue;
        }
        UnevalFrame& f = stack.top();
        f.unapply += f.requests;
        f.unapply += unapply_psp(out->request);
        f.family = f.unapply;
        f.next = out->operands.size() + 1;  // the operands from the last, then the operator
        f.step = UnevalFrame::kOperands;
        continue;
      }
      case UnevalFrame::kOperands: {
        if (stack.top().next > 0) {
          const size_t i = --stack.top().next;
          Node* n = i > 0 ? out->operands[i - 1] : out->op;
          if (n->kind == NodeKind::kOutput) {
            stack.push(UnevalFrame{as_output(n)});
          } else if (n->kind == NodeKind::kLookup) {
            const double w = uneval_lookup(as_lookup(n));
            stack.top().family += w;
          }
          continue;
        }
        const double w = stack.top().family;
        stack.pop();
        if (stack.empty()) return w;
        UnevalFrame& caller = stack.top();
        if (caller.step == UnevalFrame::kRequests) {  // `out` was a requested family, released by the caller
          caller.requests += w;
          discard_if_unsaved(out);
        } else {
          caller.family += w;
        }
        continue;
      }
    }
  }
}

double Detach::uneval_lookup(LookupNode* l) {
  t_.remove_child(l->source, l);
  return extract(l->source);
}

void tag_in_scope(Trace& t, const Args& args, const OutputNode* out, bool tag) {
  const std::string scope = scope_name(args[0]);
  if (tag)
    t.scopes().add(scope, args[1], out->operands[2]);
  else
    t.scopes().remove(scope, args[1], out->operands[2]);
}

double Detach::unapply_psp(Node* n) {
  if (n->kind != NodeKind::kOutput) return 0;
  OutputNode* out = as_output(n);
  double w = 0;
  if (const SpProcedure* p = primitive_at(out)) {
    const Sp& sp = p->sp();
    ArgBuffer buf(out);
    Args args = buf.args(p->aux());
    if (sp.is_random()) t_.random_choices().erase(out);
    if (&sp == t_.scope_include_sp() && !tag_stays(s_, out)) tag_in_scope(t_, args, out, false);
    sp.unincorporate(out->value, args);
    if (out == unconstrained_at_unapply_) [[unlikely]] {
      if (score_) w += sp.log_density(out->value, args);  // as unconstrain() scores it
      unconstrained_at_unapply_ = nullptr;
    } else if (score_ && s_.kernel(out) != nullptr) {
      w += sp.log_density(out->value, args);
    }
    db_.put_value(out, std::move(out->value));
    // A constrained choice here is an observation unconstrained at its unapply (detach_and_extract), or one the
    // undo of a failed regen meets: constrained at its break (Regen::constrain_at_break) before the observation's
    // root was regenerated.
    if (out->constrained) [[unlikely]] {
      out->constrained = false;
      t_.touch_observed(out);
    }
  }
  out->value = Nil{};
  return w;
}

double Detach::pop_esr(RequestNode* r) {
  Node* family = pop_esr_family(r);
  return family == nullptr ? 0 : uneval_released(family);
}

double Detach::uneval_released(Node* family) {
  const double w = uneval_family(family);
  discard_if_unsaved(family);
  return w;
}

void Detach::discard_if_unsaved(Node* family) {
  if (db_.discards()) t_.destroy_family(family);
}

Node* Detach::pop_esr_family(RequestNode* r) {
  OutputNode* out = r->output;
  Node* root = out->esr_parents.back();
  out->esr_parents.pop_back();
  t_.remove_child(root, out);
  VNT_ASSERT(root->num_requests > 0, "request count underflow");
  if (--root->num_requests > 0) return nullptr;
  VNT_ASSERT(!s_.is_resampling(root), "a resampling family lost its last request");
  return release_esr_family(r, out->esr_parents.size(), root);
}

Node* Detach::release_esr_family(RequestNode* r, size_t i, Node* root) {
  const Esr& esr = r->esrs[i];
  OutputNode* out = r->output;
  if (esr.shared) {
    auto* mem = static_cast<MemProcedure*>(std::get<ProcPtr>(out->op->value).get());
    db_.put_shared_family(mem, esr.key, root);  // first: if it fails, nothing has changed
    mem->families().erase(esr.key);
  } else {
    db_.put_own_family(r, root);
    r->own_family = nullptr;
  }
  return root;
}

double Detach::uneval_requests(RequestNode* r) {
  double w = 0;
  while (!r->output->esr_parents.empty()) w += pop_esr(r);
  return w;
}

double Detach::unconstrain(Node* root) {
  Node* c = t_.constrainable(root);
  VNT_ASSERT(c != nullptr && c->constrained, "observation lost its random choice");
  OutputNode* out = as_output(c);
  const SpProcedure* p = primitive_at(out);
  ArgBuffer buf(out);
  Args args = buf.args(p->aux());
  double w = 0;
  if (score_) {  // its density where the observation does not count: in the state without it
    p->sp().unincorporate(out->value, args);
    w = p->sp().log_density(out->value, args);
    p->sp().incorporate(out->value, args);
  }
  c->constrained = false;
  t_.touch_observed(c);
  t_.random_choices().insert(c);
  return w;
}

// A detach that fails (out of memory saving an old value) leaves the scaffold half detached: nothing undoes it.
double detach_and_extract(Trace& trace, Scaffold& scaffold, Db& db) {
  return trace.must_complete([&] { return Detach(trace, scaffold, db).detach_and_extract(); });
}

void detach_unscored(Trace& trace, Scaffold& scaffold, Db& db) {
  trace.must_complete([&] { Detach(trace, scaffold, db, /*score=*/false).detach_and_extract(); });
}

void uneval_family(Trace& trace, Scaffold& scaffold, Db& db, Node* root) {
  trace.must_complete([&] { Detach(trace, scaffold, db).uneval_family(root); });
}

void unconstrain(Trace& trace, Node* root) {
  Scaffold none;
  Db db(trace);
  trace.must_complete([&] { Detach(trace, none, db).unconstrain(root); });
}

}  // namespace vnt
