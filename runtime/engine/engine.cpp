// Directives as transactions over the trace: assume, observe, predict, sample, forget, infer.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/engine/engine.hpp"

#include <algorithm>
#include <filesystem>
#include <new>
#include <optional>
#include <set>

#include "parser/syntax.hpp"
#include "runtime/core/csv.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/make_room.hpp"
#include "runtime/core/text_file.hpp"
#include "runtime/engine/csv_columns.hpp"
#include "runtime/engine/infer_lang.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/syntax/free_names.hpp"
#include "runtime/trace/builtins.hpp"
#include "runtime/trace/plate.hpp"

namespace vnt {

Engine::Engine(uint64_t seed) {
  register_stdlib(registry_);
  register_trace_builtins(registry_);
  trace_ = std::make_unique<Trace>(registry_, seed);
}

Engine::~Engine() {
  if (trace_->poisoned()) return;  // its nodes are leaked: tearing down an inconsistent trace could crash
  // Every family is un-evaluated through the normal path before the trace goes, readers before what they read: in
  // reverse, but a directive whose value another still reads waits (a branch taken after both were made can read a
  // later assume). Reads between directives form no cycle (regen refuses one), so some directive is always free.
  auto read = [](const DirectiveRecord& r) {
    return r.root != nullptr && r.root->kind != NodeKind::kPlate && !r.root->children.empty();
  };
  try {
    while (!directives_.empty()) {
      size_t i = directives_.size();
      while (i > 1 && read(directives_[i - 1])) --i;
      DirectiveRecord r = directives_[i - 1];
      directives_.erase(directives_.begin() + static_cast<std::ptrdiff_t>(i - 1));
      drop_root(r);
    }
  } catch (...) {
    // A destructor must not throw; the remaining nodes are leaked rather than risk a crash.
  }
}

const Expr* Engine::keep(ExprPtr e) {
  // Count literal scope names, so a kernel on a scope that is only momentarily empty is not an error.
  std::vector<std::string> scopes;
  std::vector<const Expr*> todo{e.get()};
  while (!todo.empty()) {
    const Expr* x = todo.back();
    todo.pop_back();
    if (x->kind == Expr::Kind::kApp && x->items.size() == 4 && x->items[0]->kind == Expr::Kind::kVar &&
        (x->items[0]->name == "scope_include" || x->items[0]->name == "tag") &&
        x->items[1]->kind == Expr::Kind::kConst && is_symbol(x->items[1]->value))
      scopes.emplace_back(std::get<Symbol>(x->items[1]->value).str());
    for (const auto& i : x->items) todo.push_back(i.get());
  }
  if (keep_guards_ > 0) keep_log_.push_back(e.get());
  return hold(std::move(e), /*apply_site=*/false, std::move(scopes));
}

const Expr* Engine::hold(ExprPtr e, bool apply_site, std::vector<std::string> scopes) {
  const Expr* held = e.get();
  for (const std::string& s : scopes) ++program_scopes_[s];
  std::vector<const Expr*> names = free_names(*e);
  kept_.emplace(held, Kept{std::move(e), std::move(names), apply_site, std::move(scopes)});
  return held;
}

void Engine::unhold(const Expr* e) {
  auto kept = kept_.find(e);
  if (kept == kept_.end()) return;
  for (const std::string& s : kept->second.scopes)
    if (auto it = program_scopes_.find(s); --it->second == 0) program_scopes_.erase(it);
  kept_.erase(kept);
}

void Engine::release(const Expr* e) {
  auto kept = kept_.find(e);
  if (kept == kept_.end() || kept->second.apply_site) return;
  unhold(e);
  // Out of the log too: a later expression at the same address must not be dropped in its place.
  if (auto it = std::find(keep_log_.rbegin(), keep_log_.rend(), e); it != keep_log_.rend())
    keep_log_.erase(std::next(it).base());
}

Engine::KeptSince::~KeptSince() {
  if (std::uncaught_exceptions() > exceptions_) drop_expressions();
  if (--e_.keep_guards_ == 0) e_.keep_log_.clear();
}

void Engine::KeptSince::drop_expressions() {
  for (size_t i = exprs_; i < e_.keep_log_.size(); ++i) e_.unhold(e_.keep_log_[i]);
  e_.keep_log_.resize(std::min(exprs_, e_.keep_log_.size()));
}

Node* Engine::eval_new_family(const Expr* e) {
  Scaffold none;
  Db db(*trace_);
  double w = 0;
  return eval_family(*trace_, none, db, e, nullptr, &w);
}

void Engine::uneval_and_destroy(Node* root) {
  // A step that failed half way (a detach out of memory) left the trace inconsistent: it is leaked, not taken apart
  // (a restaurant would be asked to unseat a customer the half detach already did), and the step's error goes on.
  if (trace_->poisoned()) return;
  Scaffold none;
  Db db = Db::discarding(*trace_);
  uneval_family(*trace_, none, db, root);
  trace_->destroy_family(root);
}

void Engine::drop_root(const DirectiveRecord& r) {
  for (auto it = r.rows.rbegin(); it != r.rows.rend(); ++it) {
    unobserve(*it);
    uneval_and_destroy(*it);
  }
  if (r.root == nullptr) return;
  if (r.root->kind == NodeKind::kPlate) {
    trace_->destroy_plate(as_plate(r.root));
    return;
  }
  if (r.kind == Directive::Kind::kObserve) unobserve(r.root);
  uneval_and_destroy(r.root);
}

void Engine::unobserve(Node* root) {
  unconstrain(*trace_, root);
  root->observation_root = false;
  trace_->observations().erase(root);
}

void Engine::add_record(DirectiveRecord r) {
  // It comes after the directive has changed the trace, where failing would leave the change: the caller made
  // room for it before (make_room), so that it cannot run out of memory.
  VNT_ASSERT(directives_.size() < directives_.capacity(), "a directive recorded without room made for it");
  r.id = next_id_++;
  directives_.push_back(std::move(r));
}

void Engine::use_or_take_back(const ValueUse& use, const Value& v) {
  if (!use) return;
  try {
    use(v);
  } catch (...) {
    --next_id_;
    remove_record(directives_.end() - 1);
    throw;
  }
}

const std::vector<const Expr*>& Engine::names_read(const Expr* e) const {
  static const std::vector<const Expr*> none;  // a record without an expression (observe_apply), or one not kept
  auto it = kept_.find(e);
  return it != kept_.end() ? it->second.names : none;
}

const Expr* Engine::read_elsewhere(const DirectiveRecord& r) const {
  // A scan of every live directive: forgetting an assume is rare, and a count per name would have to follow every
  // directive added and removed.
  for (const DirectiveRecord& d : directives_)
    if (d.id != r.id)
      for (const Expr* read : names_read(d.expr))
        if (read->name == r.name) return read;
  return nullptr;
}

std::vector<DirectiveRecord>::iterator Engine::find_directive(const std::string& label) {
  // Every unlabelled record has the label "": through the API, forget("") would remove one of them.
  if (label.empty()) return directives_.end();
  auto it = std::find_if(directives_.begin(), directives_.end(), [&](const auto& r) { return r.label == label; });
  if (it != directives_.end()) return it;
  return std::find_if(directives_.begin(), directives_.end(), [&](const DirectiveRecord& r) {
    return r.kind == Directive::Kind::kAssume && r.name == label;
  });
}

void Engine::require_free_label(const std::string& label, const SourceSpan& span) const {
  // Two live directives with one label would make forget and report ambiguous.
  if (label.empty()) return;
  for (const auto& r : directives_)
    if (r.label == label) throw Error(ErrorKind::kName, fmt::format("label '{}' is already used", label), span);
}

void Engine::check_directive(const Directive& d) const {
  require_free_label(d.label, d.label_span);
  if (d.kind == Directive::Kind::kAssume && trace_->global(d.name) != nullptr)
    throw Error(ErrorKind::kName, fmt::format("'{}' is already assumed (forget it first)", d.name), d.name_span);
}

Value Engine::sample(const Expr* e, const ValueUse& use) {
  refuse_if_poisoned(e->span);
  TraceTransaction transaction(*trace_);
  Node* root = eval_new_family(e);
  Value v = root->value;
  try {
    if (use) use(v);  // while the family stands: a procedure it made reads it
  } catch (...) {
    uneval_and_destroy(root);
    throw;
  }
  uneval_and_destroy(root);
  return v;
}

Value Engine::assume(const std::string& name, const Expr* e, const std::string& label, const ValueUse& use) {
  refuse_if_poisoned(e->span);
  TraceTransaction transaction(*trace_);
  if (trace_->global(name) != nullptr)
    throw Error(ErrorKind::kName, fmt::format("'{}' is already assumed (forget it first)", name), e->span);
  require_free_label(label, e->span);
  DirectiveRecord record{0, Directive::Kind::kAssume, label, name, nullptr, e, {}, {}};
  make_room(directives_);  // what can run out of memory comes before the family is made or after it is recorded
  record.root = eval_new_family(e);
  try {
    trace_->bind_global(name, record.root);
  } catch (...) {
    uneval_and_destroy(record.root);
    throw;
  }
  add_record(std::move(record));
  Node* root = directives_.back().root;
  use_or_take_back(use, root->value);
  return root->value;
}

Value Engine::predict(const Expr* e, const std::string& label, const ValueUse& use) {
  refuse_if_poisoned(e->span);
  TraceTransaction transaction(*trace_);
  require_free_label(label, e->span);
  DirectiveRecord record{0, Directive::Kind::kPredict, label, {}, nullptr, e, {}, {}};
  make_room(directives_);
  record.root = eval_new_family(e);
  add_record(std::move(record));
  Node* root = directives_.back().root;
  use_or_take_back(use, root->value);
  return root->value;
}

namespace {

/// A value's kind, with a vector's or matrix's size: what the observed value of a real-valued choice must match.
std::string shape_of(const Value& v) {
  if (is_vector(v)) return fmt::format("a vector of length {}", std::get<VectorPtr>(v)->size());
  if (is_matrix(v)) {
    const Eigen::MatrixXd& m = *std::get<MatrixPtr>(v);
    return fmt::format("a {}x{} matrix", m.rows(), m.cols());
  }
  return std::string(kind_name(v));
}

/// The type error of observing `v` where a real-valued `sp` drew `drawn` (numbers, or vectors of one length), if
/// their kinds or lengths differ: a value it could never draw is not an impossible observation but a mistake.
/// (As the SP reads it: `true` observed under a normal is 1.)
std::optional<Error> wrong_kind(const Sp& sp, const Value& v, const Value& drawn, const std::string& under,
                                const SourceSpan& span) {
  if (!sp.real_valued() || shape_of(sp.canonical(v)) == shape_of(drawn)) return std::nullopt;
  return Error(ErrorKind::kType,
               fmt::format("observe: {} is {}, but {} draws {}", to_string(v), shape_of(v), under, shape_of(drawn)),
               span);
}

/// What an observation is under: its expression, and for a variable (x, bound to a (uniform_continuous 0 1)
/// elsewhere), the random choice it names. (A call's text shows what it applies; observe_csv's rows are calls.)
std::string observed_under(const Node* c, const Expr* e) {
  if (e->kind != Expr::Kind::kVar || c->expr == nullptr) return e->text();
  return fmt::format("{}, the {} at {}", e->text(), c->expr->text(), span_location(c->expr->span));
}

}  // namespace

void Engine::constrain_new(Node* root, Node* c, const Value& observed, const Expr* e) {
  const Value v = primitive_at(as_output(c))->sp().canonical(observed);
  // Set the observed value with a forced proposal on the choice, so every consumer is updated and re-scored.
  Node* principals[] = {c};
  auto scaffold = [&] {
    ProposalKernels kernels;
    kernels[c] = ProposalKernel{ProposalKernel::Kind::kForce, 0, v};
    return build_scaffold(*trace_, principals, std::move(kernels));
  };
  // c was read fresh when the expression was evaluated: no repair removes it.
  Scaffold s = scaffold();
  std::optional<Db> rho_db;
  double xi = 0;
  // A regen that a repair interrupts starts again with the same random numbers, as on a trace repaired before.
  const Rng stream = trace_->rng();
  RestartBound restarts;
  for (bool regenerated = false; !regenerated;) {
    if (!ensure_scaffold_fresh(*trace_, s)) {
      s = scaffold();
      restarts.next(*trace_);
      continue;
    }
    rho_db.emplace(*trace_);
    detach_and_extract(*trace_, s, *rho_db);
    try {
      HoldNodes hold(*trace_);  // a repair the regen meets is deferred: it could remove nodes of s or of rho_db
      xi = regen_and_attach(*trace_, s, false, *rho_db);
      regenerated = true;
    } catch (const DeferredRepair& d) {
      regen_and_attach(*trace_, s, true, *rho_db);
      d.repair(*trace_);
      s = scaffold();
      trace_->rng() = stream;
      restarts.next(*trace_);
    } catch (Error& err) {
      regen_and_attach(*trace_, s, true, *rho_db);
      // The error is where the new value failed, often in an earlier directive: say which directive set it.
      err.add_frame(fmt::format("while observing {} at {}", e->text(), span_location(e->span)));
      throw;
    } catch (...) {
      regen_and_attach(*trace_, s, true, *rho_db);
      throw;
    }
  }
  const SpProcedure* p = primitive_at(as_output(c));
  ArgBuffer buf(as_output(c));
  double own = p->sp().log_density(v, buf.args(p->aux()));
  const bool impossible = xi == kNegInf || std::isnan(xi);
  if (impossible || xi == -kNegInf) {
    // What the observation rules out, found in the state it makes, before that is undone.
    const std::optional<InfiniteDensity> ruled_out = impossible ? find_zero_density(*trace_, s) : std::nullopt;
    Db xi_db(*trace_);
    detach_and_extract(*trace_, s, xi_db);
    regen_and_attach(*trace_, s, true, *rho_db);
    // c holds its drawn value again. A real-valued choice observed at a value of another kind or size is a type
    // error, not an impossible observation.
    if (impossible && (own == kNegInf || std::isnan(own))) {
      if (auto wrong = wrong_kind(p->sp(), v, c->value, observed_under(c, e), e->span)) throw *wrong;
      throw Error(ErrorKind::kZeroProbability,
                  fmt::format("observe: {} has probability zero under {}", to_string(v), observed_under(c, e)),
                  e->span);
    }
    if (impossible && ruled_out && ruled_out->expr != nullptr)
      throw Error(ErrorKind::kZeroProbability,
                  fmt::format("observe: observing {} makes {} at {} impossible: its value {} has probability zero",
                              to_string(v), ruled_out->expr->text(), span_location(ruled_out->expr->span),
                              to_string(ruled_out->value)),
                  e->span);
    if (impossible)
      throw Error(ErrorKind::kZeroProbability,
                  fmt::format("observe: observing {} makes another random choice impossible", to_string(v)), e->span);
    // An infinite weight (beta 0.5 0.5 at 0) cannot be compared: every MH ratio from it would be inf - inf.
    if (own == -kNegInf)
      throw Error(ErrorKind::kDomain,
                  fmt::format("observe: {} has infinite density under {}", to_string(v), observed_under(c, e)),
                  e->span);
    throw Error(ErrorKind::kDomain,
                fmt::format("observe: observing {} gives another random choice an infinite density", to_string(v)),
                e->span);
  }
  // What allocates first: out of memory then leaves the choice as the regen made it, and the caller undoes that.
  auto [entry, made] = trace_->observations().try_emplace(root, v);
  VNT_ASSERT(made, "an observation recorded twice");
  try {
    trace_->random_choices().erase(c);
  } catch (...) {
    trace_->observations().erase(entry);
    throw;
  }
  c->constrained = true;
  trace_->touch_observed(c);
  root->observation_root = true;
}

void Engine::observe(const Expr* e, const Value& v, const std::string& label) {
  refuse_if_poisoned(e->span);
  TraceTransaction transaction(*trace_);
  require_free_label(label, e->span);
  observe_root(eval_new_family(e), e, v, label);
}

const Expr* Engine::apply_site(const std::string& procedure) {
  auto it = apply_sites_.find(procedure);
  if (it != apply_sites_.end()) return it->second;
  // One synthesized expression per procedure name gives every bulk observation a span to report.
  auto file = std::make_shared<const SourceFile>(SourceFile{"<observe_apply>", "(" + procedure + " ...)"});
  auto site = std::make_unique<Expr>();
  site->kind = Expr::Kind::kApp;
  site->span = SourceSpan{file, 1, 1, 1, static_cast<uint32_t>(procedure.size() + 7)};
  auto op = std::make_unique<Expr>();
  op->kind = Expr::Kind::kVar;
  op->name = procedure;
  op->span = SourceSpan{file, 1, 2, 1, static_cast<uint32_t>(procedure.size() + 2)};
  site->items.push_back(std::move(op));
  const Expr* e = hold(std::move(site), /*apply_site=*/true);
  apply_sites_.emplace(procedure, e);
  return e;
}

void Engine::observe_apply(const std::string& procedure, const std::vector<Value>& args, const Value& v) {
  refuse_if_poisoned({});
  // A site made for a call that fails goes with it, after the transaction has undone what read it: an embedding
  // that tries many wrong names does not grow.
  struct NewSite {
    Engine& e;
    const std::string& procedure;
    bool made;
    int exceptions = std::uncaught_exceptions();
    ~NewSite() {
      if (!made || std::uncaught_exceptions() <= exceptions) return;
      if (auto it = e.apply_sites_.find(procedure); it != e.apply_sites_.end()) {
        e.unhold(it->second);
        e.apply_sites_.erase(it);
      }
    }
  } new_site{*this, procedure, !apply_sites_.contains(procedure)};
  TraceTransaction transaction(*trace_);
  const Expr* site = apply_site(procedure);
  auto where = [](size_t) { return std::string(); };
  // Consecutive rows of one procedure join one plate (bulk is empty for every other record, and so is a bad
  // procedure name: "" must not take an ordinary directive for a plate).
  if (!procedure.empty() && !directives_.empty() && directives_.back().bulk == procedure) {
    PlateNode* plate = as_plate(directives_.back().root);
    if (args.size() == plate->program->params) {
      for (size_t j = 0; j < args.size(); ++j) plate->args[j].push(args[j]);
      plate->observed.push(v);
      double lp = score_new_rows(*plate, plate->rows++, site, where);
      if (plate->total_valid) plate->total += lp;
      return;
    }
  }
  std::optional<PlatePlan> plan = plates_ ? plan_plate(*trace_, procedure) : std::nullopt;
  if (!plan || args.size() != plan->program->params) {
    DirectiveRecord record{0, Directive::Kind::kObserve, {}, {}, nullptr, site, {}, {}};
    make_room(directives_);
    record.root = observe_row(procedure, args, v);
    add_record(std::move(record));
    return;
  }
  auto plate = std::make_unique<PlateNode>(site, plan->program, plan->procedure, plan->inputs);
  plate->args.resize(args.size());
  for (size_t j = 0; j < args.size(); ++j) plate->args[j].push(args[j]);
  plate->observed.push(v);
  plate->total = score_new_rows(*plate, plate->rows++, site, where);
  plate->total_valid = true;
  DirectiveRecord record{0, Directive::Kind::kObserve, {}, {}, nullptr, site, {}, procedure};
  make_room(directives_);  // add_record cannot fail once the plate is linked
  trace_->attach_plate(plate.get());
  record.root = plate.release();
  add_record(std::move(record));
}

namespace {

// Rows of a plate load between two polls for an interrupt: a fraction of a millisecond for the usual bodies.
constexpr size_t kRowsPerPoll = 1024;

}  // namespace

double Engine::score_new_rows(PlateNode& plate, size_t first, const Expr* site,
                              const std::function<std::string(size_t)>& where) {
  size_t i = first;
  try {
    for (Node* in : plate.inputs) ensure_fresh(*trace_, in);
    PlateEvaluator ev(plate, current_inputs(plate));
    double total = 0;
    for (; i < plate.rows; ++i) {
      // Rows do not evaluate applications, where evaluation polls: a million-row load must stop too.
      if ((i - first) % kRowsPerPoll == 0 && trace_->evaluation_interrupted()) trace_->throw_interrupted(site->span);
      Value drawn;
      try {
        drawn = ev.simulate(i, trace_->rng());  // the draw the general path makes before constraining
      } catch (Error& e) {
        // Raised inside the procedure's body: the call frame the general path's evaluation of the call adds.
        e.add_frame(call_frame(site));
        throw;
      }
      double lp = ev.row(i);
      if (lp == kNegInf || std::isnan(lp)) {
        if (auto wrong = wrong_kind(*plate.program->ops.back().sp, plate.observed.value(i), drawn, site->text(),
                                    site->span))
          throw *wrong;  // as the general path says it
        throw Error(ErrorKind::kZeroProbability,
                    fmt::format("observe: {} has probability zero under {}", to_string(plate.observed.value(i)),
                                site->text()),
                    site->span);
      }
      if (lp == -kNegInf)  // as constrain_new refuses it on the general path
        throw Error(ErrorKind::kDomain,
                    fmt::format("observe: {} has infinite density under {}", to_string(plate.observed.value(i)),
                                site->text()),
                    site->span);
      total += lp;
    }
    return total;
  } catch (Error& e) {
    for (size_t k = first; k < plate.rows; ++k) {
      for (PlateColumn& c : plate.args) c.pop();
      plate.observed.pop();
    }
    plate.rows = first;
    std::string w = where(i);
    if (!w.empty()) throw Error(e.kind(), w + e.message(), e.span());
    throw;
  }
}

Node* Engine::observe_row(const std::string& procedure, const std::vector<Value>& args, const Value& v) {
  const Expr* site = apply_site(procedure);
  Scaffold none;
  Db db(*trace_);
  double w = 0;
  Node* root = apply_expr_to_values(*trace_, none, db, site, site->items[0].get(), args, &w);
  try {
    Node* c = trace_->constrainable(root);
    if (c == nullptr || c->constrained)
      throw Error(ErrorKind::kInference,
                  fmt::format("observe: ({} ...) is not an unobserved random choice", procedure), site->span);
    constrain_new(root, c, v, site);
  } catch (...) {
    uneval_and_destroy(root);
    throw;
  }
  return root;
}

void Engine::observe_root(Node* root, const Expr* e, const Value& v, const std::string& label) {
  DirectiveRecord record;
  try {
    record = DirectiveRecord{0, Directive::Kind::kObserve, label, {}, root, e, {}, {}};
    make_room(directives_);  // add_record cannot fail once the observation is made
    Node* c = trace_->constrainable(root);
    if (c == nullptr)
      throw Error(ErrorKind::kInference,
                  fmt::format("observe: {} is not a random choice; only the output of a random procedure can be "
                              "observed",
                              e->text()),
                  e->span);
    if (c->constrained)
      throw Error(ErrorKind::kInference, fmt::format("observe: {} is already observed", e->text()), e->span);
    constrain_new(root, c, v, e);
  } catch (...) {
    uneval_and_destroy(root);
    throw;
  }
  add_record(std::move(record));
}

void Engine::forget(const std::string& label) {
  refuse_if_poisoned({});
  auto it = find_directive(label);
  if (it == directives_.end()) {
    if (sample_labels_.contains(label))
      raise(ErrorKind::kName, "forget: '{}' labels a [sample], which keeps nothing in the trace to forget", label);
    raise(ErrorKind::kName, "forget: no directive labelled '{}'", label);
  }
  DirectiveRecord r = *it;
  if (r.kind == Directive::Kind::kAssume) {
    // A directive that reads it names it (where evaluation has not read it yet too): say where, so the user
    // knows what to forget first.
    const Expr* read = read_elsewhere(r);
    if (read != nullptr)
      raise(ErrorKind::kInference, "forget: '{}' is still used by other directives ({} reads it)", r.name,
            span_location(read->span));
    if (!r.root->children.empty())
      raise(ErrorKind::kInference, "forget: '{}' is still used by other directives", r.name);
  }
  remove_record(it);
  // Nothing else reads it: another directive's values never come from it but through its name, checked above.
  release(r.expr);
}

void Engine::remove_record(std::vector<DirectiveRecord>::iterator it) {
  const DirectiveRecord r = *it;
  if (r.kind == Directive::Kind::kAssume) trace_->unbind_global(r.name);
  directives_.erase(it);
  drop_root(r);
}

Value Engine::report(const std::string& label) {
  refuse_if_poisoned({});
  auto it = find_directive(label);
  if (it == directives_.end()) {
    if (sample_labels_.contains(label))
      raise(ErrorKind::kName, "'{}' labels a [sample], which keeps no value (it printed one when it ran)", label);
    raise(ErrorKind::kName, "no directive labelled '{}'", label);
  }
  if (it->root == nullptr || it->root->kind == NodeKind::kPlate)
    raise(ErrorKind::kName, "'{}' labels a bulk observation, which has no value", label);
  ensure_fresh(*trace_, it->root);
  return it->root->value;
}

void Engine::infer(const parser::Syntax& program) {
  refuse_if_poisoned(program.span);
  // An inference program stops between transitions (check_interrupt), not inside one: its message says that
  // the transitions made are kept.
  struct Between {
    bool& on;
    explicit Between(bool& b) : on(b) { on = false; }
    ~Between() { on = true; }
  } between(trace_->interrupts_evaluation());
  KeptSince collected(*this);  // the collect expressions: nothing reads them once the program has run
  run_infer_program(*this, program);
  collected.drop_expressions();
}

namespace {

/// Runs f, and makes running out of memory in it an error at `span`.
template <class F>
auto out_of_memory_at(const SourceSpan& span, std::string_view message, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kOutOfMemory, std::string(message), span);
  }
}

}  // namespace

void Engine::refuse_if_poisoned(const SourceSpan& at) const {
  if (trace_->poisoned())
    throw Error(ErrorKind::kDomain, std::string(kPoisoned), at);
}

void Engine::note_if_poisoned(Error& e) const {
  const std::vector<ErrorFrame>& frames = e.frames();
  if (trace_->poisoned() && (frames.empty() || frames.back().text != kPoisonedNote))
    e.add_frame(std::string(kPoisonedNote));
}

void Engine::execute(Directive d) {
  const SourceSpan span = d.span;
  refuse_if_poisoned(span);
  try {
    // A builtin's own allocation fails at its application already (at_application). This is the trace's, or
    // printing a value's: the directive fails as any other, and says where.
    out_of_memory_at(span, "out of memory", [&] { run_directive(d); });
  } catch (Error& e) {
    note_if_poisoned(e);
    throw;
  }
}

void Engine::run_directive(Directive& d) {
  KeptSince kept(*this);
  const ValueUse print = output_ ? ValueUse([&](const Value& v) { output_(v, d); }) : ValueUse();
  check_directive(d);
  switch (d.kind) {
    case Directive::Kind::kAssume: {
      assume(d.name, keep(std::move(d.expr)), d.label);
      break;
    }
    case Directive::Kind::kObserve: {
      TraceTransaction transaction(*trace_);  // the value's draws too, if the observation fails
      const Expr* e = keep(std::move(d.expr));
      const Expr* ve = keep(std::move(d.value));
      Value v = sample(ve);
      observe(e, v, d.label);
      release(ve);  // the observation holds its value
      break;
    }
    case Directive::Kind::kPredict: {
      // Printed within the directive: a value that cannot be printed (out of memory) fails it, leaving nothing.
      predict(keep(std::move(d.expr)), d.label, print);
      break;
    }
    case Directive::Kind::kSample: {
      // Printed before its expression is dropped: a procedure it made reads it.
      sample(keep(std::move(d.expr)), print);
      kept.drop_expressions();
      if (!d.label.empty()) {
        try {  // only for the messages of forget and report: a label that no memory could note goes without
          sample_labels_.insert(d.label);
        } catch (const std::bad_alloc&) {
        }
      }
      break;
    }
    case Directive::Kind::kForget: {
      try {
        forget(d.name);
      } catch (Error& e) {
        e.attach_span(d.name_span);
        throw;
      }
      break;
    }
    case Directive::Kind::kObserveCsv: {
      TraceTransaction transaction(*trace_);
      observe_csv(d);
      break;
    }
    case Directive::Kind::kInfer: {
      try {
        infer(d.infer);
      } catch (Error& e) {
        e.attach_span(d.span);
        throw;
      }
      break;
    }
  }
}

namespace {

std::string resolve_path(const std::string& path, const SourceSpan& span) {
  std::filesystem::path p(path);
  if (p.is_absolute() || !span.known()) return path;
  return (std::filesystem::path(span.file->name).parent_path() / p).string();
}

}  // namespace

void Engine::observe_csv(const Directive& d) {
  std::string path = resolve_path(d.path, d.span);
  CsvTable table;
  try {
    std::string text;
    try {
      text = read_text_file(path);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;  // an interrupt
      throw Error(ErrorKind::kIo, "observe_csv: " + e.message());
    }
    // Said here, in the words of the other observe_csv errors about the whole file (the reader's own message,
    // "path: empty file", reads like a position in the data).
    if (!csv_has_records(text, path)) raise(ErrorKind::kIo, "observe_csv: '{}' is empty (no header and no rows)", path);
    table = parse_csv_numeric(text, path, csv_has_header(text, path));
  } catch (Error& e) {
    e.attach_span(d.span);
    throw;
  }
  const CsvColumns columns(d, table, path);
  const std::vector<size_t> lines = std::move(table.lines);
  auto where = [&](size_t i) { return fmt::format("observe_csv: row at {}:{}: ", path, lines.at(i)); };
  // The record's expression is its read of the procedure: forget names it as what still uses the procedure.
  auto read = std::make_unique<Expr>();
  read->kind = Expr::Kind::kVar;
  read->name = d.name;
  read->span = d.name_span;
  const Expr* reads = keep(std::move(read));
  std::vector<double> x;  // a row's cells outside the value columns
  std::optional<PlatePlan> plan = plates_ ? plan_plate(*trace_, d.name) : std::nullopt;
  // Plates serve the one-column form; a list of value columns (a vector value) takes one family per row.
  if (plan && columns.scalar() && plan->program->params == (d.with_index ? 2u : 1u) && !table.rows.empty()) {
    const Expr* site = apply_site(d.name);
    auto plate = std::make_unique<PlateNode>(site, plan->program, plan->procedure, plan->inputs);
    plate->args.resize(plan->program->params);
    PlateColumn& xs = plate->args.back();
    for (size_t i = 0; i < table.rows.size(); ++i) {
      const std::vector<double>& row = table.rows[i];
      columns.rest(row, x);
      if (d.with_index) plate->args[0].push(static_cast<double>(i));
      xs.push_vector(x.data(), x.size());
      plate->observed.push(columns.value(row));
    }
    plate->rows = table.rows.size();
    table = {};
    try {
      plate->total = score_new_rows(*plate, 0, site, where);
    } catch (Error& e) {
      throw Error(e.kind(), e.message(), d.span);
    }
    plate->total_valid = true;
    DirectiveRecord record{0, Directive::Kind::kObserve, d.label, {}, nullptr, reads, {}, {}};
    make_room(directives_);  // add_record cannot fail once the plate is linked
    trace_->attach_plate(plate.get());
    record.root = plate.release();
    add_record(std::move(record));
    return;
  }
  DirectiveRecord record{0, Directive::Kind::kObserve, d.label, {}, nullptr, reads, {}, {}};
  record.rows.reserve(table.rows.size());
  make_room(directives_);
  try {
    for (size_t i = 0; i < table.rows.size(); ++i) {
      const std::vector<double>& row = table.rows[i];
      columns.rest(row, x);
      std::vector<Value> args;
      if (d.with_index) args.emplace_back(static_cast<double>(i));
      args.push_back(make_vector(Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()))));
      try {
        record.rows.push_back(observe_row(d.name, args, columns.value(row)));
      } catch (Error& e) {
        throw Error(e.kind(), where(i) + e.message(), d.span);
      }
    }
  } catch (...) {
    for (auto it = record.rows.rbegin(); it != record.rows.rend(); ++it) {
      unobserve(*it);
      uneval_and_destroy(*it);
    }
    throw;
  }
  add_record(std::move(record));
}

namespace {

/// The names a program reads and those it assumes, for names that nothing binds (Engine::set_warn_unbound_names).
/// Only the first read of each name is kept: a program of a million directives reads few names.
class UnboundNames {
 public:
  void add(const Directive& d) {
    if (d.kind == Directive::Kind::kAssume) assumed_.insert(d.name);
    if (d.kind == Directive::Kind::kObserveCsv) read(d.name, d.name_span);
    for (const Expr* e : {d.expr.get(), d.value.get()})
      if (e != nullptr)
        for (const Expr* r : free_names(*e)) read(r->name, r->span);
  }

  /// The first read of each name that no directive assumes, that is not bound already and that no builtin has, in
  /// the order of the program.
  std::vector<std::pair<std::string, SourceSpan>> unbound(const Trace& trace) const {
    std::vector<std::pair<std::string, SourceSpan>> out;
    for (const auto& [name, span] : reads_)
      if (assumed_.count(name) == 0 && trace.global(name) == nullptr && trace.builtin(name) == nullptr)
        out.emplace_back(name, span);
    return out;
  }

 private:
  void read(const std::string& name, const SourceSpan& span) {
    if (seen_.insert(name).second) reads_.emplace_back(name, span);
  }

  std::set<std::string> assumed_, seen_;
  std::vector<std::pair<std::string, SourceSpan>> reads_;
};

}  // namespace

void Engine::check_source(const std::shared_ptr<const SourceFile>& file) { read_and_check(file, false); }

void Engine::run_source(const std::shared_ptr<const SourceFile>& file, bool note_skipped) {
  const std::vector<parser::DirectiveSyntax> program = read_and_check(file, note_skipped);
  for (size_t i = 0; i < program.size(); ++i) {
    try {
      const parser::DirectiveSyntax& d = program[i];
      execute(out_of_memory_at(d.span, "out of memory", [&] { return analyze_directive(d, params_); }));
    } catch (Error& e) {
      const size_t left = program.size() - i - 1;
      if (note_skipped && left > 0)
        e.add_frame(left == 1 ? std::string("note: the directive after it in this input did not run")
                              : fmt::format("note: the {} directives after it in this input did not run", left));
      throw;
    }
  }
}

std::vector<parser::DirectiveSyntax> Engine::read_and_check(const std::shared_ptr<const SourceFile>& file,
                                                            bool note_skipped) {
  // The REPL: an input is one unit, like a file, so an error found before the run stops the directives before it too.
  auto note_none_ran = [&](Error& e, size_t directives) {
    if (note_skipped && directives > 1)
      e.add_frame(fmt::format("note: none of the {} directives in this input ran", directives));
  };
  // Parsing and checking a large input takes seconds: an interrupt stops them, and nothing of the input runs.
  std::optional<InterruptScope> reading;
  reading.emplace(
      [](const void* trace) {
        const auto* t = static_cast<const Trace*>(trace);
        if (t->interrupt_requested())
          raise(ErrorKind::kInference, "{}: nothing ran (the input was still being read)", t->interrupt_what());
      },
      trace_.get());
  std::vector<parser::DirectiveSyntax> program =  // not const: returned by move, not copied
      out_of_memory_at({file, 1, 1, 1, 1}, "out of memory while reading this input: nothing in it ran", [&] {
        try {
          return parser::parse_program(file);
        } catch (Error& e) {
          if (note_skipped && e.kind() == ErrorKind::kSyntax) note_none_ran(e, parser::count_directives(file));
          throw;
        }
      });
  UnboundNames unbound;
  try {
    // What the text and the params decide is checked before anything runs (language.md): a typo in the last [infer]
    // does not wait for the hour of sampling before it. Each directive is analyzed again when it runs, rather than
    // all of them kept (below 0.3 % of a run of 50 000 observes).
    for (const parser::DirectiveSyntax& d : program) {
      poll_interrupt();
      out_of_memory_at(d.span, "out of memory", [&] {
        const Directive checked = analyze_directive(d, params_);
        if (checked.kind == Directive::Kind::kInfer) check_infer_program(checked.infer, params_);
        if (warn_unbound_names_) unbound.add(checked);
      });
    }
  } catch (Error& e) {
    note_none_ran(e, program.size());
    throw;
  }
  if (warn_unbound_names_)
    for (const auto& [name, span] : unbound.unbound(*trace_))
      trace_->warn(fmt::format("{}: '{}' is not assumed by any directive, nor a builtin: reading it will fail",
                               span_location(span), name));
  return program;  // each directive that runs has the trace's own check for an interrupt
}

}  // namespace vnt
