// The concrete trace: owns nodes, the global environment, random choices, scopes and the trace's RNG.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/interrupt.hpp"
#include "runtime/core/make_room.hpp"
#include "runtime/core/oom_reserve.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/trace/node.hpp"
#include "runtime/trace/samplable_set.hpp"
#include "runtime/trace/scopes.hpp"
#include "runtime/trace/shape_log.hpp"

namespace vnt {

class Sp;
struct PlateNode;

class Trace {
 public:
  Trace(const SpRegistry& builtins, uint64_t seed);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  Rng& rng() { return rng_; }
  /// The stream a repair of a stale local section draws from (brush from its prior, a choice it resamples), named by
  /// the border version it brings the section to and its root (Node::seq): never the trace's own stream. A transition
  /// that such a repair interrupted starts again with the numbers it had drawn, and a section repaired when read
  /// draws what it would have drawn repaired at once (refresh_section).
  Rng repair_rng(uint64_t version, uint64_t root) const { return Rng::keyed(seed_, version, root); }

  /// A directive's transaction (nested ones join the outermost): if it fails, the random stream and the order
  /// of random choices, scopes and blocks are put back as they were, so later directives cannot tell that it
  /// ran. Nodes and values are restored by the directive itself. An [infer] makes one per transition with
  /// moves_shape false: a transition moves shape_epoch() itself where it changes the shape, and moving it at each
  /// one would drop the chains subsampled_mh caches between its transitions.
  void begin_transaction(bool moves_shape = true);
  void end_transaction(bool failed);

  // Node lifecycle. Creating a lookup or an application adds the child edges to its parents.
  ConstantNode* new_constant(const Expr* e, Value v);
  LookupNode* new_lookup(const Expr* e, Node* source);
  /// Creates the request/output pair of an application; operands and operator are existing nodes. Takes
  /// `operands`, unless it fails (out of memory): then it has changed nothing, `operands` included.
  OutputNode* new_application(const Expr* e, Node* op, std::vector<Node*>&& operands, EnvPtr env);
  /// Deletes the nodes of a family that is no longer linked into the trace (not its requested families).
  void destroy_family(Node* root);
  /// Links a plate under its procedure and inputs (it then belongs to the trace) / unlinks and deletes it.
  void attach_plate(PlateNode* plate);
  void destroy_plate(PlateNode* plate);
  size_t live_nodes() const { return live_nodes_; }

  /// Either makes the edge or, out of memory, throws and changes nothing: it allocates before it changes anything.
  void add_child(Node* parent, Node* child) {
    ChildList& c = parent->children;
    make_room(c);
    // A child re-attached to a border of accepted subsampled moves with an old version is stale. Not under other
    // nodes with a version (section roots, and outputs that copied one from their family root): counted there, an
    // undone regen left counts that nothing repairs. A plate stores nothing computed from its parents: never stale.
    size_t* stale = nullptr;
    if (parent->border && child->version != parent->version && child->kind != NodeKind::kPlate)
      stale = &stale_borders_.try_emplace(parent, 0).first->second;
    move_shape({ShapeEvent::Kind::kAdd, parent->kind == NodeKind::kConstant, parent->seq, child->seq, parent, child});
    if (child->kind == NodeKind::kPlate) {
      // Plates come first, so the local sections of a border are numbered plate rows first, in O(#plates).
      c.insert(c.begin() + parent->plate_children++, child);
      return;
    }
    c.push_back(child);
    if (child->kind == NodeKind::kRequest) ++parent->request_children;
    if (stale != nullptr) ++*stale;
  }
  /// add_child for a node being made: it reads its parents' current values, so it takes a versioned parent's version
  /// (fresh) rather than being counted stale, which would have its "section" repaired under whatever holds it. Only a
  /// node that reads two versioned nodes directly can still differ from the second.
  void add_new_child(Node* parent, Node* child) {
    if (parent->version > 0 && child->version == 0) child->version = parent->version;
    add_child(parent, child);
  }
  void remove_child(Node* parent, Node* child);

  /// Moves whenever the shape of the trace may have changed: nodes, edges, which choices are observed, and the
  /// procedures applications use (every directive and every kernel transition moves it). A shape cached across
  /// transitions (subsampled_mh's section chains) is valid while it has not moved, except by its owner.
  uint64_t shape_epoch() const { return shape_epoch_; }
  uint64_t touch_shape() { return move_shape({}); }
  /// touch_shape for the choice c becoming observed, or no longer.
  void touch_observed(Node* c) { move_shape({ShapeEvent::Kind::kObserved, false, c->seq, 0, c, nullptr}); }
  /// What moved shape_epoch() since the first call to watch it (ShapeLog).
  ShapeLog& shape_log() { return shape_log_; }
  const ShapeLog& shape_log() const { return shape_log_; }
  /// The Node::seq the next node made will have: nodes made from now on have this one or greater.
  uint64_t next_seq() const { return next_seq_; }
  /// Set while a regen or a transition holds nodes it will come back to (its scaffold, its Db, the sections it has
  /// visited; see HoldNodes): a repair that would change the structure of the trace then throws DeferredRepair
  /// (runtime/regen/refresh.hpp) instead of removing nodes under it.
  bool& holds_nodes() { return holds_nodes_; }
  /// Set while a stale section is repaired by a regen outside any kernel. A stale section of another border that
  /// its new brush reads is then read as it is, not repaired in the middle of this repair: the two may share nodes
  /// this one has detached (a value read by both parameters' sections). What this repair computes from it is
  /// downstream of it, so stale with it, and repaired with it when next read.
  bool& repairing() { return repairing_; }
  /// Whether a step that cannot be undone failed: out of memory in a detach, in the undoing of a failed step or in
  /// a restore, which leave the trace half changed, even with the memory held in reserve for them. The engine then
  /// refuses every directive (and leaks the trace rather than tear down an inconsistent one).
  bool poisoned() const { return poisoned_; }
  void poison() { poisoned_ = true; }
  /// Runs `f`, one such step, with memory in reserve (OomReserve): a step that allocates little runs to its end
  /// when memory runs out, and what allocates after it fails where a failure can be undone. If it throws all the
  /// same, the trace is poisoned, and the exception goes on.
  template <class F>
  auto must_complete(F&& f) -> decltype(f()) {
    OomReserve reserve(OomReserve::Retake::kIfAble);
    try {
      return f();
    } catch (...) {
      poisoned_ = true;
      throw;
    }
  }
  /// Distinguishes traces, for caches that could outlive one.
  uint64_t id() const { return id_; }

  /// Borders that may have stale local sections -> how many of their children are stale (section 3.5).
  std::unordered_map<Node*, size_t>& stale_borders() { return stale_borders_; }
  const std::unordered_map<Node*, size_t>& stale_borders() const { return stale_borders_; }
  /// The version a border takes when an accepted subsampled move changes it: never used before in this trace.
  /// A node's version can also be copied from another's (an output takes its family root's when it is evaluated
  /// again), so a border's own count, old + 1, could come back to a version its stale sections still hold.
  uint64_t next_border_version(Node& border) {
    if (!border.border) ++border_generation_;  // not its version: a section root copies its border's
    border.border = true;
    return ++border_versions_;
  }
  /// Moves when a node first takes a border version: what can be stale changed (FreshWatch, refresh.hpp).
  uint64_t border_generation() const { return border_generation_; }

  /// The arrangement of the n local sections of `border` that subsampled_mh draws from by an incremental
  /// Fisher-Yates (any arrangement is a valid start). Kept here, not by a kernel, so that each [infer] of a
  /// single transition does not pay O(n) to build it again (nor an observe that adds a child); dropped when the
  /// border is deleted.
  std::vector<uint32_t>& section_order(Node* border, size_t n);
  size_t section_orders() const { return section_orders_.size(); }
  /// What a kernel that has no state of its own keeps for this trace between calls (exact mh's partitioned path:
  /// its cached sections), of a type only that kernel knows; destroyed with the trace, so nothing outlives it.
  std::shared_ptr<void>& kernel_state() { return kernel_state_; }
  /// The same for repairs of stale sections (runtime/regen/refresh.cpp: the sections they have found).
  std::shared_ptr<void>& repair_state() { return repair_state_; }

  // Global environment: user bindings shadow builtins.
  Node* global(std::string_view name) const;
  void bind_global(const std::string& name, Node* n) { globals_[name] = n; }
  void unbind_global(const std::string& name) { globals_.erase(name); }
  const Value* builtin(std::string_view name) const { return builtins_.find(name); }

  // Unconstrained random choices (the `default` scope) and user scopes.
  SamplableSet<Node*>& random_choices() { return random_choices_; }
  ScopeTable& scopes() { return scopes_; }

  // Observations: directive root -> observed value.
  std::unordered_map<Node*, Value>& observations() { return observations_; }
  /// Follows lookups and procedure outputs from `root` to the random choice whose value it is, or nullptr.
  Node* constrainable(Node* root) const;
  /// The node whose value `n` passes on as its own, one link of the chain constrainable() follows: a lookup's
  /// source, the family root of a compound, mem or `if` output, scope_include's third operand; else nullptr.
  Node* passed_on(Node* n) const;

  /// Current and maximum nesting of family evaluation (runaway recursion is reported, not a crash).
  int& eval_depth() { return eval_depth_; }
  /// A flag that asks to stop what runs (set by Ctrl-C in the REPL, or Runtime::interrupt), and who sets it
  /// ("interrupted (Ctrl-C)"); null for none. Evaluation stops at its next application (or poll_interrupt) while
  /// interrupts_evaluation() is on ("<what>: the directive is undone", and the directive fails as a transaction);
  /// an inference program turns it off and stops between transitions instead.
  void set_interrupt(const std::atomic<bool>* flag, std::string what) {
    interrupt_ = flag;
    interrupt_what_ = std::move(what);
  }
  bool interrupt_requested() const { return interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed); }
  const std::string& interrupt_what() const { return interrupt_what_; }
  bool& interrupts_evaluation() { return interrupts_evaluation_; }
  /// Whether evaluation must stop now: interrupt requested while interrupts_evaluation() is on.
  bool evaluation_interrupted() const { return interrupts_evaluation_ && interrupt_requested(); }
  /// Throws the error an interrupted evaluation ends in: kInference "<what>: the directive is undone" at `span`.
  [[noreturn]] void throw_interrupted(const SourceSpan& span = {}) const;
  int max_eval_depth() const { return max_eval_depth_; }
  void set_max_eval_depth(int d) { max_eval_depth_ = d; }

  /// Diagnostics that are not errors (e.g. a kernel falling back to exact mh) go to this sink; the library
  /// never prints. Without a sink they are kept in warnings(), at most kMaxWarnings (the others are counted).
  /// Shown as messages are: control characters in a name are escaped.
  void set_warning_sink(std::function<void(const std::string&)> sink) { warning_sink_ = std::move(sink); }
  void warn(const std::string& message);
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The warnings kept, and a last line counting those that were not, oldest first; clears them.
  std::vector<std::string> take_warnings();
  static constexpr size_t kMaxWarnings = 1000;

  const Value& branch_procedure() const { return branch_; }
  const Sp* scope_include_sp() const { return scope_include_sp_; }

 private:
  void delete_node(Node* n);
  uint64_t move_shape(const ShapeEvent& e) noexcept {
    shape_log_.note(e);
    return ++shape_epoch_;
  }

  uint64_t seed_;
  Rng rng_;
  const SpRegistry& builtins_;
  std::unordered_map<std::string, Node*> globals_;
  SamplableSet<Node*> random_choices_;
  ScopeTable scopes_;
  std::unordered_map<Node*, Value> observations_;
  std::unordered_map<Node*, size_t> stale_borders_;
  std::unordered_map<const Node*, std::vector<uint32_t>> section_orders_;
  std::shared_ptr<void> kernel_state_;
  std::shared_ptr<void> repair_state_;
  Value branch_;
  std::function<void(const std::string&)> warning_sink_;
  std::vector<std::string> warnings_;
  size_t warnings_dropped_ = 0;
  const Sp* scope_include_sp_ = nullptr;
  size_t live_nodes_ = 0;
  int eval_depth_ = 0;
  int max_eval_depth_ = 2000;
  const std::atomic<bool>* interrupt_ = nullptr;
  std::string interrupt_what_;
  bool interrupts_evaluation_ = true;
  bool holds_nodes_ = false;
  bool repairing_ = false;
  bool poisoned_ = false;
  uint64_t next_seq_ = 0;  // Node::seq of the next node
  int transaction_depth_ = 0;
  uint64_t shape_epoch_ = 0;
  ShapeLog shape_log_;
  uint64_t border_versions_ = 0;
  uint64_t border_generation_ = 0;
  uint64_t id_;
  Rng rng_at_begin_;
};

/// How the error for evaluation nested deeper than Trace::max_eval_depth() begins (regen raises it, kInference).
inline constexpr std::string_view kDepthExceeded = "maximum evaluation depth";

/// Whether `e` reports evaluation nested deeper than Trace::max_eval_depth() (runaway recursion).
inline bool is_depth_error(const Error& e) {
  return e.kind() == ErrorKind::kInference && e.message().starts_with(kDepthExceeded);
}

/// The procedure an application's operator node holds; throws kType if it is not a procedure.
Procedure& operator_procedure(const OutputNode* out);

/// Sets one of the trace's flags (holds_nodes, repairing) to `value` for its lifetime, then puts back what it was.
class FlagScope {
 public:
  FlagScope(bool& flag, bool value) : flag_(flag), before_(flag) { flag_ = value; }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;
  ~FlagScope() { flag_ = before_; }

 private:
  bool& flag_;
  bool before_;
};

/// Puts `stream` in place of the trace's random stream for its lifetime (a repair's: Trace::repair_rng).
class StreamScope {
 public:
  StreamScope(Trace& t, const Rng& stream) : t_(t), before_(t.rng()) { t_.rng() = stream; }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;
  ~StreamScope() { t_.rng() = before_; }

 private:
  Trace& t_;
  Rng before_;
};

/// Sets Trace::holds_nodes for its lifetime: around the forward regen of mh's general path, of subsampled_mh's
/// global section and of observe, and over a transition's visits. Not around a repair's own regen: outside a kernel
/// that repairs nothing it reads (Trace::repairing). A restoring regen takes its families back from its Db instead
/// of evaluating them, so it meets no repair to defer and may run while held.
class HoldNodes : FlagScope {
 public:
  explicit HoldNodes(Trace& t) : FlagScope(t.holds_nodes(), true) {}
};

/// Scopes a directive as one transaction of the trace (Trace::begin_transaction); failed if left by an exception.
/// Meanwhile poll_interrupt() on this thread stops long builtin work as evaluation stops (evaluation_interrupted).
class TraceTransaction {
 public:
  explicit TraceTransaction(Trace& t, bool moves_shape = true)
      : t_(t), exceptions_(std::uncaught_exceptions()), poll_(&poll, &t) {
    t_.begin_transaction(moves_shape);
  }
  TraceTransaction(const TraceTransaction&) = delete;
  TraceTransaction& operator=(const TraceTransaction&) = delete;
  ~TraceTransaction() {
    try {
      OomReserve reserve(OomReserve::Retake::kIfAble);
      t_.end_transaction(std::uncaught_exceptions() > exceptions_);
    } catch (...) {  // out of memory putting the choices back in order: a destructor cannot throw
      t_.poison();
    }
  }

 private:
  static void poll(const void* trace) {
    const auto* t = static_cast<const Trace*>(trace);
    if (t->evaluation_interrupted()) t->throw_interrupted();
  }

  Trace& t_;
  int exceptions_;
  InterruptScope poll_;
};

}  // namespace vnt
