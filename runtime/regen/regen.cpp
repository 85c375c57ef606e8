// Regen: walk the border, regenerate resampling nodes once (first consumer), attach absorbing nodes,
// evaluate new families and requests (xi weight of Eq. 3). A throwing step undoes itself before rethrowing.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/regen.hpp"

#include <new>
#include <string>
#include <utility>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/make_room.hpp"
#include "runtime/core/utf8.hpp"
#include "runtime/regen/at_application.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/scratch_stack.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/procedures.hpp"

namespace vnt {
namespace {

/// A node whose parents regen is putting in place; `count` is its regen count (null: only its parents).
struct RegenFrame {
  Node* node;
  int* count;
  size_t done;  // parents in place so far: the definite ones, then the ESR ones
};

std::vector<RegenFrame>& regen_scratch() {
  thread_local std::vector<RegenFrame> stack;
  return stack;
}

/// The regen count of a node whose parents are being put in place, or that is being applied: met again before it is
/// done, its value would depend on itself.
constexpr int kInProgress = -1;

/// Thrown by regen on meeting a node in progress. Only a variable whose definition reads it (in a branch not taken
/// when it was defined: `[assume y (if c y 0)]`, or through a later assume) makes such a cycle; eval_family turns
/// this into an error at that reference.
struct DependsOnItself {};

/// Parent number `i` of `n`: its definite parents, then the roots of the families it requested.
Node* parent_at(Node* n, size_t i) {
  const size_t definite = definite_parent_count(n);
  if (i < definite) return definite_parent(n, i);
  if (n->kind != NodeKind::kOutput) return nullptr;
  const std::vector<Node*>& esr = as_output(n)->esr_parents;
  return i - definite < esr.size() ? esr[i - definite] : nullptr;
}

Value drift(const Value& old, double sigma, Rng& rng) {
  if (is_number(old)) return std::get<double>(old) + sigma * rng.normal();
  const Eigen::VectorXd& v = *std::get<VectorPtr>(old);
  Eigen::VectorXd out(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) out[i] = v[i] + sigma * rng.normal();
  return make_vector(std::move(out));
}

/// Bounds the nesting of applications so runaway recursion is an error, not a stack overflow. Only applications
/// (and `if`) count: every recursion goes through one, and the error then points at the call being evaluated.
class DepthGuard {
 public:
  DepthGuard(Trace& t, const Expr* e) : t_(t) {
    if (++t_.eval_depth() > t_.max_eval_depth()) {
      --t_.eval_depth();
      throw Error(ErrorKind::kInference,
                  fmt::format("{} ({}) exceeded: runaway recursion?", kDepthExceeded, t_.max_eval_depth()), e->span);
    }
    if (t_.evaluation_interrupted()) {
      --t_.eval_depth();
      t_.throw_interrupted(e->span);
    }
  }
  ~DepthGuard() { --t_.eval_depth(); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  Trace& t_;
};

/// The name a call site shows for its procedure: the operator's name if it is a symbol, else `lambda`.
std::string operator_name(const Expr* site) {
  if (site == nullptr || site->items.empty() || site->items[0]->kind != Expr::Kind::kVar) return "lambda";
  return site->items[0]->name;
}

}  // namespace

SourceSpan span_of(const Node* n) { return n->expr ? n->expr->span : SourceSpan{}; }

std::string call_frame(const Expr* site) {
  return fmt::format("in call to '{}' at {}", operator_name(site), span_location(site->span));
}

double Regen::regen_and_attach() {
  find_observed_breaks();
  double w = 0;
  size_t done = 0;  // border positions regenerated or attached
  try {
    for (; done < s_.border.size(); ++done) {
      Node* n = s_.border[done];
      if (s_.is_absorbing(n)) {
        w += attach(n);
        continue;
      }
      w += regen(n);
      // An observation whose choice stays (or whose break did not come): constrained once its root is in place.
      if (n->observation_root && !break_constrained(n)) [[unlikely]] {
        try {
          w += constrain(n, n);
        } catch (...) {
          undo_.extract(n);  // a failed regen undoes itself: n's too, which the undo below does not count
          throw;
        }
      }
    }
  } catch (...) {
    while (done > 0) {
      Node* n = s_.border[--done];
      if (s_.is_absorbing(n)) {
        undo_.detach(n);
        continue;
      }
      if (n->observation_root) undo_.unconstrain(n);
      undo_.extract(n);
    }
    throw;
  }
  return w;
}

void Regen::find_observed_breaks() {
  for (Node* n : s_.border)
    if (n->observation_root && !s_.is_absorbing(n)) [[unlikely]]
      if (Node* at = observed_break(n)) breaks_.push_back(ObservedBreak{at, n, false});
}

Node* Regen::observed_break(Node* root) const {
  // The chain constrainable() follows, read in the detached state: the links of nodes not resampled stand.
  // It ends where an output's operator is proposed, its requested family is made again (detached: it has none), or
  // at the choice itself: the break if the regen applies that output.
  for (Node* n = root;;) {
    const bool output = n->kind == NodeKind::kOutput;
    Node* next = output && s_.is_resampling(as_output(n)->op) ? nullptr : t_.passed_on(n);
    if (next == nullptr) return output && s_.is_resampling(n) ? n : nullptr;
    n = next;
  }
}

double Regen::constrain_at_break(Node* n) {
  double w = 0;
  for (ObservedBreak& b : breaks_) {
    if (b.at != n || b.constrained) continue;
    w += constrain(b.root, n);
    b.constrained = true;
  }
  return w;
}

Regen::ObservedBreak* Regen::observed_here(const OutputNode* out) {
  for (ObservedBreak& b : breaks_)
    if (b.at == out && !b.constrained) return t_.constrainable(b.root) == out ? &b : nullptr;
  return nullptr;
}

bool Regen::break_constrained(const Node* root) const {
  for (const ObservedBreak& b : breaks_)
    if (b.root == root) return b.constrained;
  return false;
}

double Regen::regen(Node* n) {
  int* count = s_.drg.find(n);
  if (count == nullptr) return 0;
  if (*count == kInProgress) throw DependsOnItself{};
  if (*count > 0) {
    ++*count;
    return 0;
  }
  return walk(n, count);
}

double Regen::regen_parents(Node* n) { return walk(n, nullptr); }

double Regen::walk(Node* top, int* top_count) {
  // Depth-first with an explicit stack, in the order a recursion over the parents would take: a scaffold can be
  // a chain of deterministic nodes as long as the program, deeper than any thread stack.
  ScratchStack<RegenFrame> stack(regen_scratch());
  if (top_count != nullptr) *top_count = kInProgress;
  stack.push({top, top_count, 0});
  double w = 0;
  try {
    while (!stack.empty()) {
      RegenFrame& f = stack.top();
      if (Node* p = parent_at(f.node, f.done)) {
        int* count = p->kind == NodeKind::kConstant ? nullptr : s_.drg.find(p);  // a constant is never resampled
        if (count != nullptr && *count == kInProgress) throw DependsOnItself{};
        if (count != nullptr && *count == 0) {
          *count = kInProgress;
          stack.push({p, count, 0});
        } else {
          if (count != nullptr) ++*count;
          ++f.done;
        }
        continue;
      }
      // Every parent is in place. Copied: a nested walk (a family evaluated by a request) may move the stack.
      const RegenFrame done = f;
      if (done.count != nullptr) {
        w += apply_node(done.node);
        *done.count = 1;
      }
      stack.pop();
      if (!stack.empty()) ++stack.top().done;
      if (done.count != nullptr && !breaks_.empty()) [[unlikely]] {
        try {
          w += constrain_at_break(done.node);
        } catch (...) {
          if (stack.empty()) undo_.extract(done.node);  // else the frame below counts it done and gives it back
          throw;
        }
      }
    }
  } catch (...) {
    // A step that throws undoes itself; each unfinished node gives back the parents it has regenerated.
    while (!stack.empty()) {
      const RegenFrame f = stack.pop();
      if (f.count != nullptr) *f.count = 0;  // not regenerated (a step that throws undoes itself)
      for (size_t i = f.done; i > 0; --i) undo_.extract(parent_at(f.node, i - 1));
    }
    throw;
  }
  return w;
}

double Regen::apply_node(Node* n) {
  if (n->kind == NodeKind::kLookup) {
    n->value = as_lookup(n)->source->value;
    return 0;
  }
  if (n->kind == NodeKind::kRequest) {
    double w = apply_psp(n);  // builds the requests eval_requests evaluates
    return w + eval_requests(as_request(n));
  }
  if (n->kind == NodeKind::kOutput) return apply_psp(n);
  return 0;
}

double Regen::attach(Node* n) {
  double w = regen_parents(n);
  if (n->kind == NodeKind::kPlate) {
    PlateNode* p = as_plate(n);
    try {
      const Value* saved = restore_ ? db_.value(n) : nullptr;
      p->total = saved != nullptr ? std::get<double>(*saved) : PlateEvaluator(*p, current_inputs(*p)).sum();
      p->total_valid = true;
    } catch (...) {
      undo_.extract_parents(n);
      throw;
    }
    return w + p->total;
  }
  if (n->kind != NodeKind::kOutput) return w;
  OutputNode* out = as_output(n);
  try {
    if (const SpProcedure* p = primitive_at(out)) {
      ArgBuffer buf(out);
      Args args = buf.args(p->aux());
      w += p->sp().log_density(out->value, args);
      p->sp().incorporate(out->value, args);
    }
  } catch (Error& e) {
    undo_.extract_parents(n);
    e.attach_span(span_of(n));
    throw;
  }
  return w;
}

double Regen::apply_psp(Node* n) {
  if (n->kind == NodeKind::kRequest) {
    RequestNode* r = as_request(n);
    OutputNode* out = r->output;
    r->esrs.clear();
    Procedure& proc = operator_procedure(out);
    switch (proc.kind()) {
      case Procedure::Kind::kPrimitive: break;
      case Procedure::Kind::kCompound: {
        auto& c = static_cast<CompoundProcedure&>(proc);
        const Expr* lambda = c.lambda();
        if (lambda->params.size() != out->operands.size())
          throw Error(ErrorKind::kArity,
                      fmt::format("{}: expected {} argument{}, got {}", operator_name(out->expr),
                                  lambda->params.size(), lambda->params.size() == 1 ? "" : "s",
                                  out->operands.size()),
                      span_of(out));
        std::vector<std::pair<std::string, Node*>> bindings;
        for (size_t i = 0; i < out->operands.size(); ++i) bindings.emplace_back(lambda->params[i], out->operands[i]);
        Esr esr;
        esr.expr = lambda->items[0].get();
        esr.env = std::make_shared<const Env>(c.env(), std::move(bindings));
        r->esrs.push_back(std::move(esr));
        break;
      }
      case Procedure::Kind::kMem: {
        auto& m = static_cast<MemProcedure&>(proc);
        Esr esr;
        esr.shared = true;
        std::vector<Value> args;  // the key: the family is applied to its items (one list, no copy of the arguments)
        args.reserve(out->operands.size());
        for (Node* o : out->operands) args.push_back(o->value);
        esr.key = make_list(std::move(args));
        esr.proc = m.inner();
        r->esrs.push_back(std::move(esr));
        break;
      }
      case Procedure::Kind::kBranch: {
        Esr esr;
        const Expr* e = out->expr;
        esr.expr = truthy(out->operands[0]->value) ? e->items[1].get() : e->items[2].get();
        esr.env = out->env;
        r->esrs.push_back(std::move(esr));
        break;
      }
    }
    return 0;
  }
  OutputNode* out = as_output(n);
  const SpProcedure* p = primitive_at(out);
  if (p == nullptr) {
    VNT_ASSERT(!out->esr_parents.empty(), "procedure output without its requested family");
    out->value = out->esr_parents.back()->value;
    return 0;
  }
  const Sp& sp = p->sp();
  ArgBuffer buf(out);
  Args args = buf.args(p->aux());
  double w = 0;
  Value v;
  ObservedBreak* observed = nullptr;
  if (restore_) {
    v = db_.take_value(out);
  } else if (const ProposalKernel* k = s_.kernel(out)) {
    if (k->kind == ProposalKernel::Kind::kForce) {
      v = k->forced;
    } else {
      const Value* old = db_.value(out);
      VNT_ASSERT(old != nullptr, "drift proposal without the old value");
      v = drift(*old, k->sigma, t_.rng());
    }
    w += at_application(sp, out, [&] { return sp.log_density(v, args); });
  } else if ((observed = observed_here(out)) != nullptr) [[unlikely]] {
    auto obs = t_.observations().find(observed->root);
    VNT_ASSERT(obs != t_.observations().end(), "observation root without a value");
    v = obs->second;
    w += sp.log_density(v, args);  // as constrain() scores it
  } else {
    v = at_application(sp, out, [&] { return sp.simulate(args, t_.rng()); });
  }
  out->value = std::move(v);
  sp.incorporate(out->value, args);
  const bool choice = sp.is_random() && !out->constrained && observed == nullptr;
  try {
    if (choice) t_.random_choices().insert(out);
    if (&sp == t_.scope_include_sp() && !tag_stays(s_, out)) tag_in_scope(t_, args, out, true);
  } catch (...) {  // out of memory: the step undoes itself
    t_.must_complete([&] {
      if (choice) t_.random_choices().erase(out);
      sp.unincorporate(out->value, args);
    });
    throw;
  }
  if (observed != nullptr) [[unlikely]] {
    out->constrained = true;
    t_.touch_observed(out);
    observed->constrained = true;
  }
  return w;
}

Node* Regen::eval_esr(RequestNode* r, size_t i, double* w) {
  const Esr& esr = r->esrs[i];
  OutputNode* out = r->output;
  if (!esr.shared) {
    Node* root = restore_ ? db_.take_own_family(r) : nullptr;
    if (root != nullptr) {
      *w += restore_family(root);
    } else {
      try {
        root = eval_family(esr.expr, esr.env, w);
      } catch (Error& e) {
        if (operator_procedure(out).kind() == Procedure::Kind::kCompound && out->expr)
          e.add_frame(call_frame(out->expr));
        throw;
      }
    }
    r->own_family = root;
    return root;
  }
  auto* mem = static_cast<MemProcedure*>(std::get<ProcPtr>(out->op->value).get());
  if (auto it = mem->families().find(esr.key); it != mem->families().end()) {
    if (it->second == nullptr)
      throw Error(ErrorKind::kInference, "recursive mem argument loop detected", span_of(out));
    // The family may hold a stale local section (its value read from a border an accepted subsampled move has
    // changed): repaired before the new request reads it, as for a variable reference. A restore reads it as the
    // state being put back did.
    if (!restore_ && !s_.is_resampling(it->second)) ensure_fresh(t_, it->second);
    return it->second;
  }
  // A null entry marks the family as under evaluation, so a request for the same arguments from inside it
  // is reported instead of recursing forever.
  mem->families().emplace(esr.key, nullptr);
  Node* root = restore_ ? db_.take_shared_family(mem, esr.key) : nullptr;
  try {
    if (root != nullptr)
      *w += restore_family(root);
    else
      root = apply_to_values(out->expr, esr.proc, std::get<ListPtr>(esr.key)->items(), w);
  } catch (...) {
    mem->families().erase(esr.key);
    throw;
  }
  mem->families()[esr.key] = root;
  return root;
}

double Regen::eval_requests(RequestNode* r) {
  double w = 0;
  OutputNode* out = r->output;
  VNT_ASSERT(out->esr_parents.empty(), "requests evaluated twice");
  try {
    for (size_t i = 0; i < r->esrs.size(); ++i) {
      Node* root = eval_esr(r, i, &w);
      const uint64_t version = out->version;
      try {
        make_room(out->esr_parents);
        // A border keeps its own version, which its sections are compared with.
        if (!out->border) out->version = root->version;
        t_.add_child(root, out);
      } catch (...) {  // out of memory: a family made for this request goes again
        out->version = version;
        if (root->num_requests == 0) undo_.uneval_esr_family(r, i, root);
        throw;
      }
      out->esr_parents.push_back(root);
      ++root->num_requests;
    }
  } catch (...) {
    undo_.uneval_requests(r);
    throw;
  }
  return w;
}

double Regen::apply(OutputNode* out) {
  double w = apply_psp(out->request);
  w += eval_requests(out->request);
  size_t done = 0;
  try {
    for (; done < out->esr_parents.size(); ++done) w += regen(out->esr_parents[done]);
    w += apply_psp(out);
  } catch (...) {
    while (done > 0) undo_.extract(out->esr_parents[--done]);
    undo_.uneval_requests(out->request);
    throw;
  }
  return w;
}

Node* Regen::finish_application(OutputNode* out, double* w) {
  try {
    *w += apply(out);
  } catch (...) {
    discard_new_application(out);
    throw;
  }
  return out;
}

void Regen::MadeFamilies::discard() {
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    r_.undo_.uneval_family(*it);
    r_.t_.destroy_family(*it);
  }
  nodes.clear();
}

void Regen::MadeFamilies::eval(const Expr* e, const EnvPtr& env, double* w) {
  try {
    make_room(nodes);  // first: the family is made only if it can be held
    nodes.push_back(r_.eval_family(e, env, w));
  } catch (...) {
    discard();
    throw;
  }
}

void Regen::MadeFamilies::constant(const Expr* site, const Value& v) {
  try {
    make_room(nodes);
    nodes.push_back(r_.t_.new_constant(site, v));
  } catch (...) {
    discard();
    throw;
  }
}

Node* Regen::MadeFamilies::apply(const Expr* site, const EnvPtr& env, double* w) {
  Node* op = nodes.front();
  nodes.erase(nodes.begin());
  OutputNode* out = nullptr;
  try {
    out = r_.t_.new_application(site, op, std::move(nodes), env);
  } catch (...) {
    nodes.insert(nodes.begin(), op);  // into the room the erase left
    discard();
    throw;
  }
  nodes.clear();  // the application holds them now, and finish_application discards it if it fails
  return r_.finish_application(out, w);
}

void Regen::discard_new_application(OutputNode* out) {
  for (auto it = out->operands.rbegin(); it != out->operands.rend(); ++it) undo_.uneval_family(*it);
  undo_.uneval_family(out->op);
  t_.destroy_family(out);
}

Node* Regen::eval_family(const Expr* e, const EnvPtr& env, double* w) {
  switch (e->kind) {
    case Expr::Kind::kConst: return t_.new_constant(e, e->value);
    case Expr::Kind::kLambda:
      return t_.new_constant(e, ProcPtr(std::make_shared<CompoundProcedure>(e, env)));
    case Expr::Kind::kVar: {
      Node* source = env ? env->find(e->name) : nullptr;
      if (source == nullptr) source = t_.global(e->name);
      if (source == nullptr) {
        if (const Value* b = t_.builtin(e->name)) return t_.new_constant(e, *b);
        throw Error(ErrorKind::kName, fmt::format("unbound symbol '{}'", e->name), e->span);
      }
      if (!s_.is_resampling(source)) ensure_fresh(t_, source);  // a stale local section is repaired first
      try {
        *w += regen(source);
      } catch (DependsOnItself&) {
        throw Error(ErrorKind::kName,
                    fmt::format("'{}' depends on the value being computed here (a definition that reads itself, "
                                "directly or through later ones)", e->name),
                    e->span);
      }
      try {
        LookupNode* l = t_.new_lookup(e, source);
        l->value = source->value;
        return l;
      } catch (...) {
        undo_.extract(source);  // out of memory: give back the regen of what it would have read
        throw;
      }
    }
    case Expr::Kind::kIf: {
      DepthGuard guard(t_, e);
      MadeFamilies made(*this);
      made.eval(e->items[0].get(), env, w);
      made.constant(e, t_.branch_procedure());
      std::swap(made.nodes[0], made.nodes[1]);  // the operator first
      return made.apply(e, env, w);
    }
    case Expr::Kind::kApp: {
      DepthGuard guard(t_, e);
      MadeFamilies made(*this);
      made.nodes.reserve(e->items.size());
      for (const auto& item : e->items) made.eval(item.get(), env, w);
      return made.apply(e, env, w);
    }
  }
  throw Error(ErrorKind::kInternal, "unknown expression kind", e->span);
}

Node* Regen::apply_to_values(const Expr* site, const Value& proc, std::span<const Value> args, double* w) {
  MadeFamilies made(*this);
  made.nodes.reserve(args.size() + 1);
  made.constant(site, proc);
  for (const Value& a : args) made.constant(site, a);
  return made.apply(site, nullptr, w);
}

Node* Regen::apply_expr_to_values(const Expr* site, const Expr* op_expr, const std::vector<Value>& args, double* w) {
  MadeFamilies made(*this);
  made.nodes.reserve(args.size() + 1);
  made.eval(op_expr, nullptr, w);
  for (const Value& a : args) made.constant(site, a);
  return made.apply(site, nullptr, w);
}

double Regen::restore_family(Node* root) {
  double w = 0;
  if (root->kind == NodeKind::kLookup) {
    LookupNode* l = as_lookup(root);
    w += regen(l->source);
    t_.add_child(l->source, l);
    l->value = l->source->value;
  } else if (root->kind == NodeKind::kOutput) {
    OutputNode* out = as_output(root);
    w += restore_family(out->op);
    for (Node* o : out->operands) w += restore_family(o);
    w += apply(out);
  }
  return w;
}

std::string Regen::describe_end(Node* from) const {
  Node* n = from;
  for (Node* next = t_.passed_on(n); next != nullptr; next = t_.passed_on(n)) n = next;
  if (n->kind == NodeKind::kOutput && is_procedure(as_output(n)->op->value))
    return fmt::format("an application of {}, which is not random",
                       std::get<ProcPtr>(as_output(n)->op->value)->name());
  std::string shown = to_string(n->value);
  if (utf8_length(shown) > 60) shown = shown.substr(0, utf8_offset(shown, 57)) + "...";  // a vector of a million, say
  return fmt::format("the value {}", shown);
}

double Regen::constrain(Node* root, Node* from) {
  auto obs = t_.observations().find(root);
  VNT_ASSERT(obs != t_.observations().end(), "observation root without a value");
  Node* c = t_.constrainable(from);
  if (c == nullptr)
    throw Error(ErrorKind::kInference,
                fmt::format("the observed expression no longer ends in a random choice: it ends in {}",
                            describe_end(from)),
                span_of(root));
  // Its other branch ends in a choice another observation holds (`(if b a ...)` with a observed too): one value
  // cannot be two observations.
  if (c->constrained)
    throw Error(ErrorKind::kInference,
                fmt::format("the observed expression now ends in {}, which another observation holds",
                            c->expr != nullptr ? c->expr->text() : std::string("a random choice")),
                span_of(root));
  // The lookups and procedure outputs from `from` down to the choice, which copy the observed value back up (the
  // nodes between the root and `from` copy it when the regen applies them). Listed first: nothing fails after
  // the choice has changed.
  std::vector<Node*> chain;
  for (Node* n = from; n != c; n = t_.passed_on(n)) chain.push_back(n);
  OutputNode* out = as_output(c);
  const SpProcedure* p = primitive_at(out);
  ArgBuffer buf(out);
  Args args = buf.args(p->aux());
  p->sp().unincorporate(out->value, args);
  double w = 0;
  try {  // a new operator may not take the observed value (normal made categorical): the step undoes itself
    w = p->sp().log_density(obs->second, args);
  } catch (...) {
    p->sp().incorporate(out->value, args);
    throw;
  }
  out->value = obs->second;
  p->sp().incorporate(out->value, args);
  c->constrained = true;
  t_.touch_observed(c);
  t_.random_choices().erase(c);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) (*it)->value = t_.passed_on(*it)->value;
  return w;
}

Node* apply_expr_to_values(Trace& trace, Scaffold& scaffold, Db& db, const Expr* site, const Expr* op,
                           const std::vector<Value>& args, double* weight) {
  return Regen(trace, scaffold, db, false).apply_expr_to_values(site, op, args, weight);
}

double regen_and_attach(Trace& trace, Scaffold& scaffold, bool restore, Db& db) {
  if (restore)  // putting back the old state: nothing would undo a restore that fails half way
    return trace.must_complete([&] { return Regen(trace, scaffold, db, true).regen_and_attach(); });
  return Regen(trace, scaffold, db, false).regen_and_attach();
}

std::optional<double> regen_proposal(Trace& trace, Scaffold& scaffold, Db& rho_db, std::string_view kernel) {
  double xi = 0;
  try {
    xi = regen_and_attach(trace, scaffold, false, rho_db);
  } catch (...) {
    // The failed regen undid itself, so the trace is detached: put the old state back (also for a DeferredRepair).
    regen_and_attach(trace, scaffold, true, rho_db);
    if (impossibility_in_flight()) return std::nullopt;
    throw;
  }
  // +inf, or NaN (+inf - inf, or a density of NaN): a density of +inf fails the transition.
  if (!(xi < kPosInf)) [[unlikely]]
    refuse_infinite_proposal(trace, scaffold, rho_db, kernel);
  return xi;
}

Node* eval_family(Trace& trace, Scaffold& scaffold, Db& db, const Expr* e, const EnvPtr& env, double* weight) {
  return Regen(trace, scaffold, db, false).eval_family(e, env, weight);
}

Node* apply_to_values(Trace& trace, Scaffold& scaffold, Db& db, const Expr* site, const Value& proc,
                      const std::vector<Value>& args, double* weight) {
  return Regen(trace, scaffold, db, false).apply_to_values(site, proc, args, weight);
}

}  // namespace vnt
