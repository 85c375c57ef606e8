// The two walkers over a scaffold, Regen (evaluate, apply, attach) and Detach (extract, unapply, detach).
// Private to runtime/regen: regen undoes a partial step with detach's primitives before rethrowing.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/container/small_vector.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/regen/db.hpp"
#include "runtime/scaffold/scaffold.hpp"
#include "runtime/sp/args.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {

class Sp;

/// Gathers the operand values of an application (a small stack buffer for the usual arities), and knows where
/// they came from (Args::log_odds re-applies an operand's primitive SP).
class ArgBuffer final : public ArgOrigins {
 public:
  // Inline, with the operands on the stack for the usual arities: every application the walks and the sections
  // evaluated from values make builds one, so a call and a heap vector per application were a fifth of its cost.
  explicit ArgBuffer(const OutputNode* out) : n_(out->operands.size()), out_(out) {
    const Value** dst = inline_;
    if (n_ > kInline) {
      heap_ = std::make_unique<const Value*[]>(n_);
      dst = heap_.get();
    }
    for (size_t i = 0; i < n_; ++i) dst[i] = &out->operands[i]->value;
    ptrs_ = dst;
  }
  /// The operands with operand `index` replaced by `*replacement` (evaluating with a value not in the trace).
  ArgBuffer(const OutputNode* out, size_t index, const Value* replacement) : ArgBuffer(out) {
    const_cast<const Value**>(ptrs_)[index] = replacement;
    replaced_ = index;
  }
  ArgBuffer(const ArgBuffer&) = delete;
  ArgBuffer& operator=(const ArgBuffer&) = delete;
  ~ArgBuffer() = default;

  /// The replacement is the value of `link`'s primitive with its operand `index` replaced by `*input` (which
  /// must outlive this buffer): log_odds of the replaced operand applies it again, only if asked.
  void replacement_from(const OutputNode* link, size_t index, const Value* input) {
    from_ = link;
    from_index_ = index;
    from_input_ = input;
  }
  Args args(SpAux* aux) const { return Args(std::span<const Value* const>(ptrs_, n_), aux, this); }
  std::optional<double> log_odds(size_t i) const override;

 private:
  static constexpr size_t kInline = 8;
  static constexpr size_t kNone = static_cast<size_t>(-1);
  const Value* inline_[kInline];
  std::unique_ptr<const Value*[]> heap_;
  const Value* const* ptrs_;
  size_t n_;
  const OutputNode* out_;
  size_t replaced_ = kNone;
  const OutputNode* from_ = nullptr;
  size_t from_index_ = 0;
  const Value* from_input_ = nullptr;
};

/// Operand i's log-odds (Args::log_odds) when it is its node's value in the trace: the primitive SP that computed it
/// (through lookups) applied again to the values in the trace, asked for its log-odds; nullopt if none has them.
std::optional<double> operand_log_odds(const OutputNode* out, size_t i);

/// The origins of `out`'s operands for Args over their values in the trace gathered once, not by an ArgBuffer at
/// each application (SectionDag applies the same nodes at every visit): Args::log_odds answers as an ArgBuffer's.
class TraceOrigins final : public ArgOrigins {
 public:
  explicit TraceOrigins(const OutputNode* out) : out_(out) {}
  std::optional<double> log_odds(size_t i) const override { return operand_log_odds(out_, i); }

 private:
  const OutputNode* out_;
};

/// The primitive SP applied at `out`, or nullptr if the operator is a compound/mem/if procedure. Throws kType if
/// the operator's value is not a procedure (operator_procedure's message). Inline: called for every application.
inline const SpProcedure* primitive_at(const OutputNode* out) {
  const ProcPtr* p = std::get_if<ProcPtr>(&out->op->value);
  const Procedure& proc = p != nullptr ? **p : operator_procedure(out);
  return proc.kind() == Procedure::Kind::kPrimitive ? static_cast<const SpProcedure*>(&proc) : nullptr;
}

/// Tags (or untags) the choice of a scope_include application in the scope and block its operands hold now: a
/// regen that applies it, a detach that unapplies it, and a put-back of values that moves its block (refresh.hpp).
void tag_in_scope(Trace& t, const Args& args, const OutputNode* out, bool tag);

/// Whether the scope_include application `out`, which the scaffold resamples, keeps its tag through the detach and
/// the regen: its scope and block stay, only the tagged value moves. Untagging and tagging again would cost a block's
/// hash entry per move, and move the block last in its scope's order.
inline bool tag_stays(const Scaffold& s, const OutputNode* out) {
  return out->operands.size() == 3 && s.is_resampling(out) && !s.moves(out->op) && !s.moves(out->operands[0]) &&
         !s.moves(out->operands[1]);
}

class Detach {
 public:
  /// Without `score`, the densities that make the rho weight are not computed (detach_and_extract returns 0).
  Detach(Trace& t, Scaffold& s, Db& db, bool score = true) : t_(t), s_(s), db_(db), score_(score) {}

  double detach_and_extract();
  double detach(Node* n);             // an absorbing node
  double extract(Node* n);            // release one consumer's hold; unapply at zero
  double extract_parents(Node* n);    // extract each parent of `n` (which itself stays)
  double uneval_family(Node* root);
  double unapply_psp(Node* n);
  double uneval_requests(RequestNode* r);
  double extract_esr_parents(OutputNode* out, size_t from = 0);
  double unconstrain(Node* root);
  /// Removes ESR edge number `i` (the last one) of `r`'s output; un-evaluates a family nobody requests.
  double pop_esr(RequestNode* r);
  /// Takes `root`, the family of request `i` of `r` that nobody requests any more, out of `r` (its own family) or
  /// out of its mem table into the Db, and returns it for uneval_family.
  Node* release_esr_family(RequestNode* r, size_t i, Node* root);

 private:
  /// pop_esr without the un-evaluation: the family nobody requests now (saved in the Db), or nullptr.
  Node* pop_esr_family(RequestNode* r);
  double uneval_lookup(LookupNode* l);
  double release(Node* top, bool release_top);
  /// Un-evaluates a family release_esr_family took out, which a discarding Db did not keep: then destroys it.
  double uneval_released(Node* family);
  /// Destroys an un-evaluated requested family that a discarding Db did not take.
  void discard_if_unsaved(Node* family);
  /// The choice observation `root` ends in, if extract(root) unapplies it right after the links of its chain (each
  /// resampled and held by the next alone), with nothing else unincorporated in between; else nullptr.
  Node* unapplied_next(Node* root) const;

  Trace& t_;
  Scaffold& s_;
  Db& db_;
  bool score_;
  // The choice of an observation whose procedure moved (see unapplied_next): unapplied constrained, its density
  // scored there, rather than unconstrained first (into the random choices, to be taken out again at once).
  const Node* unconstrained_at_unapply_ = nullptr;
};

/// The Detach a Regen undoes a failed step with. Nothing undoes an undo that fails (out of memory saving an old
/// value), so that poisons the trace (Trace::must_complete).
class Undo {
 public:
  Undo(Trace& t, Scaffold& s, Db& db) : t_(t), d_(t, s, db) {}
  void detach(Node* n) { t_.must_complete([&] { d_.detach(n); }); }
  void extract(Node* n) { t_.must_complete([&] { d_.extract(n); }); }
  void extract_parents(Node* n) { t_.must_complete([&] { d_.extract_parents(n); }); }
  void uneval_family(Node* root) { t_.must_complete([&] { d_.uneval_family(root); }); }
  void uneval_requests(RequestNode* r) { t_.must_complete([&] { d_.uneval_requests(r); }); }
  void unconstrain(Node* root) { t_.must_complete([&] { d_.unconstrain(root); }); }
  /// The family that request `i` of `r` made and nobody requests, un-evaluated.
  void uneval_esr_family(RequestNode* r, size_t i, Node* root) {
    t_.must_complete([&] { d_.uneval_family(d_.release_esr_family(r, i, root)); });
  }

 private:
  Trace& t_;
  Detach d_;
};

class Regen {
 public:
  Regen(Trace& t, Scaffold& s, Db& db, bool restore)
      : t_(t), s_(s), db_(db), restore_(restore), scratch_(t), undo_(t, s, scratch_) {}

  double regen_and_attach();
  double regen(Node* n);
  double regen_parents(Node* n);
  double attach(Node* n);
  Node* eval_family(const Expr* e, const EnvPtr& env, double* w);
  Node* apply_to_values(const Expr* site, const Value& proc, std::span<const Value> args, double* w);
  /// Applies the procedure named by `op` (evaluated as an expression, usually a variable) to constants.
  Node* apply_expr_to_values(const Expr* site, const Expr* op, const std::vector<Value>& args, double* w);
  double apply(OutputNode* out);
  double apply_psp(Node* n);
  double eval_requests(RequestNode* r);
  double restore_family(Node* root);
  /// Constrains the choice the chain from `from` (the observation's root, or a node of its chain) ends in to the
  /// value observed at `root`, and copies it up the chain to `from`.
  double constrain(Node* root, Node* from);

 private:
  /// What the chain from `from` ends in, when it is not a random choice: for the error that says so.
  std::string describe_end(Node* from) const;
  /// Where the regen makes again the choice an observation of the border ends in, or decides which choice that is:
  /// its first node the regen applies that has a proposed operator, a requested family made again, or that is the
  /// choice. Constrained as soon as `at` is applied, before anything reads the simulated value (the observation's
  /// root may come after a reader of the choice in the border, or after another observation reading it).
  struct ObservedBreak {
    Node* at;
    Node* root;
    bool constrained;
  };
  void find_observed_breaks();
  /// The break of an observation that ends in `out` itself, not yet constrained: apply_psp scores the observed value
  /// there rather than drawing one that constrain() would replace at once.
  ObservedBreak* observed_here(const OutputNode* out);
  /// The break of observation `root` (resampled), or nullptr if its choice stays.
  Node* observed_break(Node* root) const;
  /// Constrains the observations whose break is `n`, which has just been applied.
  double constrain_at_break(Node* n);
  bool break_constrained(const Node* root) const;
  double walk(Node* top, int* top_count);  // regen `top`'s parents, then `top` itself if it has a count
  double apply_node(Node* n);              // a node whose parents are in place
  Node* finish_application(OutputNode* out, double* w);
  /// The families made for an application, in order (operator first). If one of its steps fails (an error in a
  /// later operand, out of memory), it un-evaluates and destroys every family made so far.
  struct MadeFamilies {
    explicit MadeFamilies(Regen& r) : r_(r) {}
    void eval(const Expr* e, const EnvPtr& env, double* w);
    void constant(const Expr* site, const Value& v);
    Node* apply(const Expr* site, const EnvPtr& env, double* w);  // the application of nodes[0] to the rest
    void discard();
    std::vector<Node*> nodes;

   private:
    Regen& r_;
  };
  void discard_new_application(OutputNode* out);
  Node* eval_esr(RequestNode* r, size_t i, double* w);

  Trace& t_;
  Scaffold& s_;
  Db& db_;
  bool restore_;
  Db scratch_;   // what undoing a failed step takes out; never the caller's Db (it holds the old state)
  Undo undo_;
  // One per observation whose choice the regen makes again: none, or one for a collapsed seat's move (no
  // allocation per regen then).
  boost::container::small_vector<ObservedBreak, 2> breaks_;
};

/// Parents of a node in regen order: lookup source; operator, operands (and request for outputs).
template <class F>
void for_each_definite_parent(Node* n, F&& f) {
  switch (n->kind) {
    case NodeKind::kConstant: return;
    case NodeKind::kLookup: f(as_lookup(n)->source); return;
    case NodeKind::kRequest: {
      OutputNode* out = as_request(n)->output;
      f(out->op);
      for (Node* o : out->operands) f(o);
      return;
    }
    case NodeKind::kOutput: {
      OutputNode* out = as_output(n);
      f(out->op);
      for (Node* o : out->operands) f(o);
      f(out->request);
      return;
    }
    case NodeKind::kPlate: {
      PlateNode* p = as_plate(n);
      f(p->procedure);
      for (Node* in : p->inputs) f(in);
      return;
    }
  }
}

/// Definite parents and, for an output, the roots of the families its requests made (ESR parents).
template <class F>
void for_each_parent(Node* n, F&& f) {
  for_each_definite_parent(n, f);
  if (n->kind == NodeKind::kOutput)
    for (Node* e : as_output(n)->esr_parents) f(e);
}

/// Indexed access to the definite parents in the same order, without building a list.
inline size_t definite_parent_count(const Node* n) {
  switch (n->kind) {
    case NodeKind::kConstant: return 0;
    case NodeKind::kLookup: return 1;
    case NodeKind::kRequest: return 1 + static_cast<const RequestNode*>(n)->output->operands.size();
    case NodeKind::kOutput: return 2 + static_cast<const OutputNode*>(n)->operands.size();
    case NodeKind::kPlate: return 1 + static_cast<const PlateNode*>(n)->inputs.size();
  }
  return 0;
}
inline Node* definite_parent(Node* n, size_t i) {
  if (n->kind == NodeKind::kLookup) return as_lookup(n)->source;
  if (n->kind == NodeKind::kPlate) return i == 0 ? as_plate(n)->procedure : as_plate(n)->inputs[i - 1];
  OutputNode* out = n->kind == NodeKind::kRequest ? as_request(n)->output : as_output(n);
  if (i == 0) return out->op;
  if (i <= out->operands.size()) return out->operands[i - 1];
  return out->request;
}

}  // namespace vnt
