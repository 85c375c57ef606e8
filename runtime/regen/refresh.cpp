// Lazy repair of stale local sections: versions on borders and section roots say which are stale.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/regen/refresh.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/section_dag.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/regen/scratch_stack.hpp"
#include "runtime/regen/walk.hpp"

namespace vnt {
namespace {

bool is_random_output(Node* n) {
  if (n->kind != NodeKind::kOutput || !is_procedure(as_output(n)->op->value)) return false;
  const SpProcedure* p = primitive_at(as_output(n));
  return p != nullptr && p->sp().is_random();
}

/// If `n` is a stale section root (a child of a border whose version moved on), repairs its section. Returns true,
/// touching n no more, if a repair moved the trace's shape: regenerating brush may have deleted n itself.
bool repair_if_stale_root(Trace& t, Node* n, Node* except_border) {
  if (n->kind == NodeKind::kPlate) return false;  // stores nothing computed: never stale
  auto& stale = t.stale_borders();
  const uint64_t epoch = t.shape_epoch();
  const size_t definite = definite_parent_count(n);
  const size_t parents = definite + (n->kind == NodeKind::kOutput ? as_output(n)->esr_parents.size() : 0);
  for (size_t i = 0; i < parents; ++i) {
    Node* p = i < definite ? definite_parent(n, i) : as_output(n)->esr_parents[i - definite];
    if (p == except_border || n->version == p->version || stale.find(p) == stale.end()) continue;
    refresh_section(t, p, n);
    if (t.shape_epoch() != epoch) return true;
  }
  return false;
}

/// The nodes one walk has seen: a linear scan over the first few, a hash set beyond. The hash sets are per-thread
/// scratch, kept grown between walks (a scaffold's walk meets a few dozen nodes at every move); a walk that a repair
/// starts inside another takes another one.
class SmallPtrSet {
 public:
  SmallPtrSet() = default;
  SmallPtrSet(const SmallPtrSet&) = delete;
  SmallPtrSet& operator=(const SmallPtrSet&) = delete;
  ~SmallPtrSet() {
    if (big_ == nullptr) return;
    // A table grown past a few thousand slots is dropped: clearing it would cost every later walk.
    if (big_->set.capacity() > 4096)
      big_->set = FlatPtrSet<Node>();
    else
      big_->set.clear();
    big_->busy = false;
  }

  bool insert(Node* n) {
    if (big_ == nullptr && count_ < small_.size()) {
      for (size_t i = 0; i < count_; ++i)
        if (small_[i] == n) return false;
      small_[count_++] = n;
      return true;
    }
    if (big_ == nullptr) {
      thread_local std::deque<Table> tables;  // a deque: the tables of outer walks stay where they are
      auto free = std::find_if(tables.begin(), tables.end(), [](const Table& t) { return !t.busy; });
      big_ = free != tables.end() ? &*free : &tables.emplace_back();
      big_->busy = true;
      for (Node* x : small_) big_->set.insert(x);
    }
    return big_->set.insert(n);
  }

 private:
  struct Table {
    FlatPtrSet<Node> set;
    bool busy = false;
  };

  std::array<Node*, 16> small_{};
  size_t count_ = 0;
  Table* big_ = nullptr;
};

constexpr const char* kStaleImpossible =
    "while updating a value that subsampled_mh left stale: an approximate move (eps > 0) accepted a parameter value "
    "under which it has probability zero";

/// The roots of a repaired section take the border's version; its stale count drops by those that were stale.
void mark_fresh(Trace& trace, Node* border, std::span<Node* const> roots) {
  auto it = trace.stale_borders().find(border);
  for (Node* r : roots) {
    if (r->version == border->version) continue;
    r->version = border->version;
    if (it != trace.stale_borders().end() && --it->second == 0) {
      trace.stale_borders().erase(it);
      it = trace.stale_borders().end();
    }
  }
}

/// The evaluable sections repairs have found, by root, trusted while the trace's shape has not moved since (entries
/// are stamped with the epoch; a deleted node moved it). A kernel reading another border's sections repairs the
/// same ones at every transition, and finding a section costs several times what evaluating it does.
class RepairCache {
 public:
  static RepairCache& of(Trace& trace) {
    std::shared_ptr<void>& slot = trace.repair_state();
    if (!slot) slot = std::make_shared<RepairCache>();
    return *static_cast<RepairCache*>(slot.get());
  }
  std::shared_ptr<const SectionDag> find(const Trace& trace, const Node* border, Node* root) const {
    const Entry* e = sections_.find(root);
    return e != nullptr && e->epoch == trace.shape_epoch() && e->border == border ? e->section : nullptr;
  }
  void put(const Trace& trace, const Node* border, const std::shared_ptr<const SectionDag>& section) {
    // Entries of older epochs are only overwritten: bound what they hold by the size of the trace.
    if (sections_.size() > 2 * trace.live_nodes() + 1024) sections_ = {};
    for (Node* r : section->roots()) sections_[r] = Entry{trace.shape_epoch(), border, section};
  }

 private:
  struct Entry {
    uint64_t epoch = 0;
    const Node* border = nullptr;  // a node that reads two borders is a root of two sections
    std::shared_ptr<const SectionDag> section;
  };
  FlatPtrMap<Node, Entry> sections_;
};

/// The repair of an evaluable section (SectionDag), in place: no scaffold, no Db. On failure its values are put back.
void refresh_in_place(Trace& trace, const SectionDag& dag) {
  std::vector<Value> stale;
  dag.save(stale);
  try {
    dag.evaluate();
  } catch (Error& e) {
    dag.restore(stale.begin());
    if (is_impossibility(e)) e.add_frame(kStaleImpossible);
    throw;
  }
  if (dag.changes_procedures(stale.begin())) trace.touch_shape();  // as the general repair does (see below)
}

}  // namespace

bool stale_elsewhere(Trace& trace, const Node* except_border) {
  const auto& stale = trace.stale_borders();
  return stale.size() > 1 || (stale.size() == 1 && stale.begin()->first != except_border);
}

namespace {

/// Whether n reads a node with a version other than except_border: whether it can be a stale section root.
bool reads_versioned(Node* n, const Node* except_border) {
  if (n->kind == NodeKind::kPlate) return false;
  bool found = false;
  for_each_parent(n, [&](Node* p) { found |= p != except_border && p->version > 0; });
  return found;
}

void note(FreshWatch& watch, Node* n) {
  for (size_t i = 0; i < watch.count; ++i)
    if (watch.nodes[i] == n) return;
  if (watch.count == FreshWatch::kMax)
    watch.walk_each_time = true;
  else
    watch.nodes[watch.count++] = n;
}

/// ensure_fresh's walk from x, noting in `watch` (if any) the nodes that can be stale roots. A repair that moved the
/// trace's shape (a section's brush regenerated) may have deleted nodes the walk still holds: it stops there and
/// returns true. `seen` may hold what earlier walks from other nodes met (a scaffold's nodes share most of what they
/// read): those are fresh already, and are not walked again.
bool fresh_walk(Trace& trace, Node* x, Node* except_border, FreshWatch* watch, SmallPtrSet& seen) {
  // Walk up through deterministic values (random choices are never stale: only their arguments can be),
  // repairing stale section roots from the top down. Called for every operand of every section read while
  // another border has stale sections, so nothing is allocated per call: the stack is on a per-thread scratch
  // vector (a repair may walk again inside this walk), and the few nodes seen are kept in a small array.
  struct Step {
    Node* n;
    bool expanded;
  };
  thread_local std::vector<Step> scratch;
  ScratchStack<Step> stack(scratch);
  // Constants are never stale and read nothing: they are not walked.
  auto push_parents = [&](Node* n) {
    for_each_parent(n, [&](Node* p) {
      if (p->kind != NodeKind::kConstant) stack.push({p, false});
    });
  };
  stack.push({x, false});
  while (!stack.empty()) {
    const auto [n, expanded] = stack.pop();
    if (expanded) {
      if (watch != nullptr && reads_versioned(n, except_border)) note(*watch, n);
      if (repair_if_stale_root(trace, n, except_border)) return true;
      continue;
    }
    if (!seen.insert(n)) {
      // An earlier walk met x, a random choice, and stopped there; walked from, its arguments are walked too.
      if (n == x && n != except_border && is_random_output(n)) push_parents(n);
      continue;
    }
    stack.push({n, true});
    if ((is_random_output(n) && n != x) || n == except_border) continue;
    push_parents(n);
  }
  return false;
}

bool fresh_walk(Trace& trace, Node* x, Node* except_border, FreshWatch* watch) {
  SmallPtrSet seen;
  return fresh_walk(trace, x, except_border, watch, seen);
}

}  // namespace

void ensure_fresh(Trace& trace, Node* x, Node* except_border) {
  // A constant (a datum, most often) has nothing to repair; nor does a read made by a repair (Trace::repairing).
  if (x->kind == NodeKind::kConstant || trace.repairing() || !stale_elsewhere(trace, except_border)) return;
  // x is what is read, not a node a repair replaces: after a repair that moved the shape, walk again from it.
  while (fresh_walk(trace, x, except_border, nullptr)) {
  }
}

InputsFresh::InputsFresh(Trace& trace, Node* border, FreshWatch& watch)
    : trace_(trace), border_(border), watch_(watch), epoch_(trace.shape_epoch()) {
  if (watch.complete && watch.generation != trace.border_generation()) watch = {};  // a new border: note again
  noting_ = !watch.walk_each_time;
  if (!watch.complete) return;
  watched_ = true;
  if (trace.repairing() || !stale_elsewhere(trace, border)) return;
  for (size_t i = 0; i < watch.count; ++i)
    if (repair_if_stale_root(trace, watch.nodes[i], border)) return;  // a move of the shape: the caller sees it
}

InputsFresh::~InputsFresh() {
  if (watched_) return;
  watch_.complete = noting_ && !watch_.walk_each_time && trace_.shape_epoch() == epoch_;
  watch_.generation = trace_.border_generation();
}

bool InputsFresh::operator()(Node* x) {
  if (!noting_) {
    ensure_fresh(trace_, x, border_);
  } else if (x->kind != NodeKind::kConstant) {  // a constant has nothing to note
    // A walk cut short by a move of the shape leaves the watch incomplete; so does one not made (a repair's read).
    if (trace_.repairing() || fresh_walk(trace_, x, border_, &watch_)) {
      watch_.walk_each_time = true;
      ensure_fresh(trace_, x, border_);
    }
  }
  return trace_.shape_epoch() == epoch_;
}

bool ensure_scaffold_fresh(Trace& trace, const Scaffold& scaffold, Node* except_border) {
  if (!stale_elsewhere(trace, except_border)) return true;
  // Collect first: repairing sections must not run while the scaffold's tables are being walked. The brush too:
  // detaching it reads its values (an observation in it is scored, and a rejection puts its values back).
  std::vector<Node*> nodes;
  scaffold.drg.for_each([&](Node* n, int) { nodes.push_back(n); });
  scaffold.absorbing.for_each([&](Node* n) { nodes.push_back(n); });
  scaffold.brush.for_each([&](Node* n) { nodes.push_back(n); });
  by_creation(nodes);  // repairs may draw (brush from its prior): in an order that does not follow addresses
  SmallPtrSet seen;  // shared: what one node's walk made fresh, the next one's need not walk again
  for (Node* n : nodes) {
    if (n->kind == NodeKind::kConstant) continue;
    // A repair that moved the shape may have removed n or the nodes after it (the scaffold's brush).
    if (fresh_walk(trace, n, except_border, nullptr, seen)) return false;
  }
  return true;
}

void refresh_section(Trace& trace, Node* border, Node* root) {
  if (root->version == border->version || root->kind == NodeKind::kPlate) return;
  // The whole section: a datum that reads the parameter twice is recomputed from both reads at once, never from
  // one fresh read and one stale one. (A section too large to group was never subsampled: it is repaired alone.)
  RepairCache& cache = RepairCache::of(trace);
  std::shared_ptr<const SectionDag> dag = cache.find(trace, border, root);
  std::optional<BorderReach> reach;
  if (dag == nullptr) {
    reach.emplace(border);
    dag = std::make_shared<const SectionDag>(trace, *reach, root);
    if (dag->evaluable()) cache.put(trace, border, dag);
  }
  if (dag->evaluable()) {
    refresh_in_place(trace, *dag);
    mark_fresh(trace, border, dag->roots());
    return;
  }
  std::optional<SectionGroup> group = section_group(trace, *reach, root);
  if (!group) group = SectionGroup{{root}, build_local_scaffold(trace, border, root)};
  refresh_section(trace, border, group->roots, group->scaffold);
}

void refresh_section(Trace& trace, Node* border, std::span<Node* const> roots, Scaffold& scaffold) {
  if (trace.holds_nodes() && !scaffold.brush.empty()) [[unlikely]] {
    // Named by a stale root: a section can hold fresh roots too (a read of the border made since, grouped with it),
    // and repairing from one of those does nothing.
    auto stale_root = std::find_if(roots.begin(), roots.end(), [&](Node* r) { return r->version != border->version; });
    throw DeferredRepair{border, stale_root != roots.end() ? *stale_root : roots[0]};
  }
  std::vector<Value> stale;
  uint64_t first = UINT64_MAX;  // the section's name among its border's: its first root
  for (Node* r : roots) {
    stale.push_back(r->value);
    first = std::min(first, r->seq);
  }
  StreamScope stream(trace, trace.repair_rng(border->version, first));
  // A repair changes values only (new or removed edges move the epoch themselves), so it moves the shape epoch, which
  // section chains cached by subsampled_mh kernels are checked against, only if one of them was or is a procedure
  // an application may use, as a transition does (ChainCache::end). It does on failure too, to be safe.
  bool procedures = resamples_procedures(scaffold);
  struct Touch {
    Trace& trace;
    const bool& procedures;
    ~Touch() {
      if (procedures) trace.touch_shape();
    }
  } touch{trace, procedures};
  Db db(trace);
  detach_and_extract(trace, scaffold, db);
  try {
    // Outside a kernel (a kernel's scores must read fresh values; it defers structural repairs instead).
    FlagScope repairing(trace.repairing(), trace.repairing() || !trace.holds_nodes());
    // The weight is of the section's densities under the border's value: one of +inf there fails the repair (a
    // repair in place computes no density; the next transition that scores the section finds it).
    if (!(regen_and_attach(trace, scaffold, false, db) < kPosInf)) [[unlikely]]
      if (std::optional<InfiniteDensity> found = find_infinite_density(trace, scaffold)) {
        Db scratch(trace);
        detach_and_extract(trace, scaffold, scratch);  // detached, as a failed regen leaves it
        raise_infinite_density(*found, InfiniteIn::kCurrentState, {});
      }
    procedures |= resamples_procedures(scaffold);
  } catch (...) {
    procedures = true;
    // The border's value makes the section fail (a domain error: an approximate move accepted it unseen). The
    // failed regen undid itself; the section is put back as it was, still stale, for the error to propagate. The
    // roots' values are not in the Db: restoring read the border's current one.
    regen_and_attach(trace, scaffold, true, db);
    for (size_t i = 0; i < stale.size(); ++i) roots[i]->value = std::move(stale[i]);
    try {
      throw;
    } catch (Error& e) {
      if (is_impossibility(e)) e.add_frame(kStaleImpossible);
      throw;
    }
  }
  mark_fresh(trace, border, roots);
}

void RestartBound::next(const Trace& trace) {
  if (rounds_++ == 0) {
    // The section just repaired, those still stale, and a few that a repair's new brush may count (a node that reads
    // two borders takes the version of one).
    limit_ = 16;
    for (const auto& [border, stale] : trace.stale_borders()) limit_ += stale;
  }
  VNT_ASSERT(rounds_ <= limit_, "a move started again {} times, each after a repair that left a section stale",
             rounds_);
}

void DeferredRepair::repair(Trace& trace) const {
  VNT_ASSERT(!trace.holds_nodes(), "a deferred repair made while nodes are held");
  refresh_section(trace, border, root);
}

void put_back_values(Trace& trace, std::span<std::pair<Node*, Value>> values) {
  // Each is tagged under the block its current (repaired) operands hold: untagged before any value moves.
  auto tagging = [&](Node* n) -> const OutputNode* {
    if (n->kind != NodeKind::kOutput || !is_procedure(as_output(n)->op->value)) return nullptr;
    const SpProcedure* p = primitive_at(as_output(n));
    return p != nullptr && &p->sp() == trace.scope_include_sp() ? as_output(n) : nullptr;
  };
  auto retag = [&](bool tag) {
    for (auto& [node, value] : values)
      if (const OutputNode* out = tagging(node)) tag_in_scope(trace, ArgBuffer(out).args(nullptr), out, tag);
  };
  retag(false);
  for (auto& [node, value] : values) node->value = std::move(value);
  retag(true);
}

void refresh_all(Trace& trace) {
  while (!trace.stale_borders().empty()) {
    Node* border = trace.stale_borders().begin()->first;
    // The children are read again at each step, and passes repeat until one repairs nothing: a repair that changes
    // a section's structure (an `if` taking the other branch) removes children of the border and adds new ones.
    for (bool repaired = true; repaired;) {
      repaired = false;
      for (size_t i = 0; i < border->children.size(); ++i) {
        Node* c = border->children[i];
        if (c->kind == NodeKind::kPlate || c->version == border->version) continue;
        refresh_section(trace, border, c);
        repaired = true;
      }
    }
    trace.stale_borders().erase(border);
  }
}

}  // namespace vnt
