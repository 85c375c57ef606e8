// Particle Gibbs (conditional SMC). The trace holds one path at a time: a particle's extension by a group is
// regenerated on its ancestor's path and detached again into a Db of its own, so the paths are a tree of Dbs sharing
// their prefixes. Particles are kept in the depth-first order of that tree, so that moving the trace from one
// ancestor's path to the next detaches and restores only the groups below the step where the two paths meet.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/pgibbs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/infer/ancestor_sampling.hpp"
#include "runtime/infer/shape_touch.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

std::string where(const Node* n) { return span_location(n->expr ? n->expr->span : SourceSpan{}); }

[[noreturn]] void refuse(const BlockSpec& spec, std::string message) {
  throw Error(ErrorKind::kInference, fmt::format("pgibbs: {}", message), spec.span);
}

/// The principals of each group, in the order the particles extend through them: one group per block for ordered
/// blocks, else one for the whole selection. A choice two blocks reach goes with the first.
std::vector<std::vector<Node*>> principal_groups(Trace& trace, const BlockSpec& spec) {
  std::vector<std::vector<Node*>> groups;
  if (spec.mode != BlockSpec::Mode::kOrdered) {
    BlockChoice choice = select_block(trace, spec, /*allow_empty=*/true);
    if (!choice.principals.empty()) groups.push_back(std::move(choice.principals));
    return groups;
  }
  std::unordered_set<Node*> seen;
  for (const Value& b : ordered_blocks(trace, spec)) {
    std::vector<Node*> group;
    for (Node* n : random_choices_in_block(trace, spec.scope, b))
      if (seen.insert(n).second) group.push_back(n);
    if (!group.empty()) groups.push_back(std::move(group));
  }
  return groups;
}

/// What a particle is, and what the next transition selects, may not depend on the values a particle draws: a choice
/// of the scope that exists only for some values of others, or a scope or block computed from them, is refused.
void check_fixed_choices(Trace& trace, const Scaffold& s, const BlockSpec& spec) {
  for (Node* n : s.principals)
    if (s.is_brush(n))
      refuse(spec, fmt::format("the choice at {} of scope '{}' exists only for some values of other choices of the "
                               "scope; write (flip (if c 0.9 0.2)) rather than (if c (flip 0.9) (flip 0.2))",
                               where(n), spec.scope));
  s.drg.for_each([&](Node* n, int) {
    if (n->kind != NodeKind::kOutput) return;
    OutputNode* out = as_output(n);
    const SpProcedure* p = primitive_at(out);
    if (p == nullptr || &p->sp() != trace.scope_include_sp() || out->operands.size() != 3) return;
    if (s.is_resampling(out->operands[0]) || s.is_resampling(out->operands[1]))
      refuse(spec, fmt::format("the scope or block of the scope_include at {} is computed from the choices of scope "
                               "'{}' it moves",
                               where(n), spec.scope));
  });
}

bool same_groups(std::vector<std::vector<Node*>> a, std::vector<std::vector<Node*>> b) {
  if (a.size() != b.size()) return false;
  for (size_t g = 0; g < a.size(); ++g) {
    std::sort(a[g].begin(), a[g].end());
    std::sort(b[g].begin(), b[g].end());
    if (a[g] != b[g]) return false;
  }
  return true;
}

[[noreturn]] void refuse_new_choices(const BlockSpec& spec) {
  refuse(spec, fmt::format("a value of the choices of scope '{}' makes random choices in the scope that the current "
                           "values do not (in a branch it decides): the particles must be states of the same choices",
                           spec.scope));
}

/// The border of the scaffold split by group: a border node goes with the last group whose principals it reads
/// through resampling nodes, so that its regen needs that group and no later one. Groups left empty are dropped.
std::vector<std::vector<Node*>> group_borders(const Scaffold& s, const std::vector<std::vector<Node*>>& principals) {
  // An observation whose choice a regen makes again (in a branch the choices decide: observed brush) is constrained
  // by the walk that applies it, which may be an earlier group's: a brush lookup pulls what it reads into the walk
  // that makes the brush. Its density would then weigh one group for the new particles and another for the retained
  // one. One group keeps every walk whole.
  for (Node* b : s.border)
    if (b->observation_root && !s.is_absorbing(b)) return {s.border};
  FlatPtrMap<Node, size_t> group;  // principals first; then every resampling or border node, once its parents are
  FlatPtrMap<Node, size_t> own;
  for (size_t g = 0; g < principals.size(); ++g)
    for (Node* n : principals[g]) own.emplace(n, g);
  std::vector<std::pair<Node*, bool>> stack;  // (node, parents done): depth first, as scaffolds can be deep
  for (Node* b : s.border) {
    stack.emplace_back(b, false);
    while (!stack.empty()) {
      auto [n, parents_done] = stack.back();
      stack.pop_back();
      if (parents_done) {
        const size_t* mine = own.find(n);
        size_t g = mine ? *mine : 0;
        for_each_parent(n, [&](Node* p) {
          if (const size_t* q = group.find(p)) g = std::max(g, *q);
        });
        group[n] = g;
        continue;
      }
      if (group.contains(n)) continue;
      stack.emplace_back(n, true);
      for_each_parent(n, [&](Node* p) {
        if (s.is_resampling(p) && !group.contains(p)) stack.emplace_back(p, false);
      });
    }
  }
  std::vector<std::vector<Node*>> out(principals.size());
  for (Node* b : s.border) out[*group.find(b)].push_back(b);
  std::erase_if(out, [](const std::vector<Node*>& g) { return g.empty(); });
  return out;
}

/// Index drawn in proportion to exp(log_weights[i] - top) from cumulative sums `cum`; ties and rounding go to a
/// positive weight.
size_t draw_index(const std::vector<double>& cum, Rng& rng) {
  const double u = rng.uniform() * cum.back();
  size_t i = static_cast<size_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
  while (i >= cum.size() || (i > 0 && cum[i] == cum[i - 1])) --i;  // u at the total: the last positive one
  return i;
}

/// Cumulative sums of the weights relative to the largest; nullopt if every weight is zero.
std::optional<std::vector<double>> cumulative(const std::vector<double>& log_weights) {
  double top = kNegInf;
  for (double w : log_weights) top = std::max(top, w);
  if (!(top > kNegInf)) return std::nullopt;
  std::vector<double> cum(log_weights.size());
  double total = 0;
  for (size_t i = 0; i < log_weights.size(); ++i) cum[i] = total += std::exp(log_weights[i] - top);
  return cum;
}

/// Regen and detach walk scaffold.border: one group's walk is theirs with the group's border in its place.
class GroupBorder {
 public:
  GroupBorder(Scaffold& s, std::vector<Node*>& group) : s_(s), group_(group) { std::swap(s_.border, group_); }
  ~GroupBorder() { std::swap(s_.border, group_); }
  GroupBorder(const GroupBorder&) = delete;
  GroupBorder& operator=(const GroupBorder&) = delete;

 private:
  Scaffold& s_;
  std::vector<Node*>& group_;
};

class ConditionalSmc {
 public:
  /// `principals` by group, as the transition selected them: the path it ends with must give the same.
  /// With `forced` (plan_ancestor_sampling), the retained particle's ancestor is drawn too.
  ConditionalSmc(Trace& t, Scaffold& s, std::vector<std::vector<Node*>> groups, size_t particles,
                 const BlockSpec& spec, const std::vector<std::vector<Node*>>& principals,
                 std::optional<ForcedByGroup> forced)
      : t_(t), s_(s), groups_(std::move(groups)), particles_(particles), spec_(spec), principals_(principals),
        forced_(std::move(forced)) {}

  /// Whether ancestor sampling gave the retained path another ancestor (its values then hold other earlier groups).
  bool rebased() const { return rebased_; }

  /// Runs the transition; returns the index of the particle whose path the trace holds at the end (0: the
  /// retained one), or nullopt if the current state has a density of NaN (no move). On an error, puts the current
  /// path back before rethrowing.
  std::optional<size_t> run() {
    try {
      return sweep();
    } catch (...) {
      // The particles' records go first: when memory ran out, putting back the path needs some of it again.
      for (size_t id : generation_) release(id);
      for (size_t id : next_) release(id);
      generation_.clear();
      next_.clear();
      if (!t_.poisoned() && original_.size() == groups_.size()) put_back();
      throw;
    }
  }

 private:
  struct Step {
    size_t parent;            // the step of the group before on this path; kNone at the first group
    size_t group;
    std::unique_ptr<Db> db;   // the group's values while the trace holds another path; null once unreferenced
    double weight = kNegInf;  // the log weight of extending the parent's path by this group
    uint32_t refs = 0;        // particles, later steps and the trace holding it
  };

  std::optional<size_t> sweep() {
    const size_t groups = groups_.size();
    // The current path, detached from the last group: each group is detached in the state its regen had.
    for (size_t g = 0; g < groups; ++g) {
      retained_.push_back(new_step(g == 0 ? kNone : g - 1, g));
      ++steps_[g].refs;  // kept until the end, to put the path back after an error
    }
    // Everything the path needs to be put back is allocated before its first detach: running out of memory from
    // here on leaves each group either attached and listed in attached_, or detached into its step's Db.
    for (size_t g = 0; g < groups; ++g) steps_[g].db = std::make_unique<Db>(t_);
    attached_.reserve(groups);
    original_.reserve(groups);
    if (forced_) {
      forced_values_.resize(groups);
      for (size_t g = 0; g < groups; ++g)
        for (Node* n : (*forced_)[g]) forced_values_[g].push_back(n->value);
    }
    made_.assign(groups, 0);
    saved_.assign(groups, 0);
    bool infinite = false;
    for (size_t g = groups; g-- > 0;) {
      const size_t before = t_.random_choices().size();
      steps_[g].weight = detach_group(g, *steps_[g].db);
      made_[g] = before - t_.random_choices().size();
      saved_[g] = steps_[g].db->saved_values();
      infinite |= !(steps_[g].weight < kPosInf);
    }
    original_.assign(retained_.begin(), retained_.end());  // in its room: from here on an error puts it back (run)
    if (infinite) {  // +inf or NaN: attached again to look
      put_back();
      if (std::optional<InfiniteDensity> found = find_infinite_density(t_, s_))
        raise_infinite_density(*found, InfiniteIn::kCurrentState, {});
      return std::nullopt;  // a density of NaN, which decides a rejection
    }

    std::vector<size_t>& generation = generation_;
    std::vector<size_t>& next = next_;
    for (size_t g = 0; g < groups; ++g) {
      const std::vector<size_t> ancestors = draw_ancestors(generation);
      next.assign(particles_ + 1, kNone);
      if (g == 0) {
        for (size_t k = 0; k < particles_; ++k) {
          check_interrupt();
          next[k + 1] = extend(kNone, 0);
          ++steps_[next[k + 1]].refs;
        }
      } else {
        // Each particle of the group before extends its children and, with ancestor sampling, weighs the retained
        // values on its path: one visit. Every other group backwards, so that the trace starts a group on the path
        // where the one before ended.
        const bool sample = forced_.has_value();
        std::vector<double> weigh(sample ? generation.size() : 0, kNegInf);
        const bool forwards = g % 2 == 0;
        size_t front = 0, back = particles_;  // the ancestors not yet extended: [front, back)
        for (size_t j = 0; j < generation.size(); ++j) {
          const size_t i = forwards ? j : generation.size() - 1 - j;
          const size_t id = generation[i];
          size_t from = front, to = front;  // the new particles whose ancestor is i: [from, to)
          if (forwards) {
            while (to < back && ancestors[to] == i) ++to;
            front = to;
          } else {
            from = to = back;
            while (from > front && ancestors[from - 1] == i) --from;
            back = from;
          }
          const bool weighs = sample && steps_[id].weight > kNegInf;
          if (from == to && !weighs) continue;
          check_interrupt();
          move_to(id);
          if (weighs) weigh[i] = steps_[id].weight + retained_density(g);
          for (size_t k = from; k < to; ++k) {
            next[k + 1] = extend(id, g);
            ++steps_[next[k + 1]].refs;
          }
        }
        if (sample) sample_retained_ancestor(generation, weigh, g);
      }
      next[0] = retained_[g];
      ++steps_[retained_[g]].refs;
      for (size_t id : generation) release(id);
      generation.swap(next);
      next.clear();
    }
    std::vector<double> last;
    for (size_t id : generation) last.push_back(steps_[id].weight);
    const std::optional<std::vector<double>> cum = cumulative(last);
    const size_t pick = cum ? draw_index(*cum, t_.rng()) : 0;
    move_to(generation[pick]);
    // A choice the path made in its brush may be in the scope (in the extent of one of its tags); in the default
    // scope every random choice is, which extend() sees as it is made.
    if (pick != 0 && spec_.scope != "default" && !same_groups(principal_groups(t_, spec_), principals_))
      refuse_new_choices(spec_);
    return pick;
  }

  /// The ancestors of the new particles, as indices into `generation` in increasing order (the depth-first order of
  /// their paths); all kNone at the first group.
  std::vector<size_t> draw_ancestors(const std::vector<size_t>& generation) {
    if (generation.empty()) return std::vector<size_t>(particles_, kNone);
    std::vector<double> w;
    for (size_t id : generation) w.push_back(steps_[id].weight);
    const std::optional<std::vector<double>> cum = cumulative(w);
    std::vector<size_t> out(particles_, 0);  // no weight anywhere: every particle extends the retained path
    if (cum)
      for (size_t& a : out) a = draw_index(*cum, t_.rng());
    std::sort(out.begin(), out.end());
    return out;
  }

  size_t new_step(size_t parent, size_t group) {
    size_t id = steps_.size();
    if (free_.empty()) {
      // free_ holds room for every step, so that release() never allocates: it runs in the error paths.
      if (free_.capacity() < steps_.size() + 1) free_.reserve(std::max(2 * free_.capacity(), steps_.size() + 1));
      steps_.push_back(Step{parent, group, nullptr});
    } else {  // a step no path holds any more: memory grows with the tree of live paths, not with blocks x particles
      id = free_.back();
      free_.pop_back();
      steps_[id] = Step{parent, group, nullptr};
    }
    if (parent != kNone) ++steps_[parent].refs;
    return id;
  }

  void release(size_t id) {
    while (id != kNone && --steps_[id].refs == 0) {
      steps_[id].db.reset();
      free_.push_back(id);
      id = steps_[id].parent;
    }
  }

  /// A Db for a detach of group g, its room taken beforehand: running out of memory then fails here, where the
  /// transition can still put everything back, rather than in the detach.
  std::unique_ptr<Db> new_db(size_t g) {
    auto db = std::make_unique<Db>(t_);
    db->reserve(saved_[g]);
    return db;
  }

  double detach_group(size_t g, Db& db) {
    GroupBorder view(s_, groups_[g]);
    return detach_and_extract(t_, s_, db);
  }

  double regen_group(size_t g, bool restore, Db& db) {
    GroupBorder view(s_, groups_[g]);
    return regen_and_attach(t_, s_, restore, db);
  }

  /// Makes the trace hold the path that ends with step `target` (kNone: no group).
  void move_to(size_t target) {
    std::vector<size_t> down;  // the target's steps the trace does not hold, the last first
    size_t at = target;
    for (; at != kNone; at = steps_[at].parent) {
      const size_t g = steps_[at].group;
      if (g < attached_.size() && attached_[g] == at) break;
      down.push_back(at);
    }
    const size_t keep = at == kNone ? 0 : steps_[at].group + 1;
    while (attached_.size() > keep) {
      const size_t id = attached_.back();
      detach_group(steps_[id].group, *steps_[id].db);
      attached_.pop_back();
      release(id);
    }
    for (auto it = down.rbegin(); it != down.rend(); ++it) {
      ++steps_[*it].refs;
      attached_.push_back(*it);
      regen_group(steps_[*it].group, /*restore=*/true, *steps_[*it].db);
    }
  }

  /// A transition of many particles and blocks can take long: Ctrl-C undoes it rather than wait for its end.
  void check_interrupt() const {
    if (t_.interrupt_requested()) [[unlikely]]
      throw Error(ErrorKind::kInference,
                  fmt::format("{}: the pgibbs transition under way is undone; the transitions made and the draws "
                              "collected before it are kept",
                              t_.interrupt_what()),
                  spec_.span);
  }

  /// Makes the trace hold the current path the transition started from.
  void put_back() {
    move_to(kNone);
    // Along original_, not the parents: ancestor sampling may have given the original steps other ones.
    for (size_t id : original_) {
      ++steps_[id].refs;
      attached_.push_back(id);
      regen_group(steps_[id].group, /*restore=*/true, *steps_[id].db);
    }
  }

  /// Sets the principals group g's walk regenerates first to the retained values while alive.
  class Forcing {
   public:
    Forcing(ConditionalSmc& smc, size_t g) : s_(smc.s_), nodes_((*smc.forced_)[g]) {
      for (size_t i = 0; i < nodes_.size(); ++i)
        s_.kernels[nodes_[i]] = ProposalKernel{ProposalKernel::Kind::kForce, 0, smc.forced_values_[g][i]};
    }
    ~Forcing() {
      for (Node* n : nodes_) s_.kernels.erase(n);
    }
    Forcing(const Forcing&) = delete;
    Forcing& operator=(const Forcing&) = delete;

   private:
    Scaffold& s_;
    const std::vector<Node*>& nodes_;
  };

  /// The log density of the retained values of group g (and of what absorbs them) on the path the trace holds:
  /// a regen of the group with them forced, detached again. -inf if that state is impossible.
  double retained_density(size_t g) {
    Forcing forcing(*this, g);
    Db unused(t_);
    double w = kNegInf;
    try {
      w = regen_group(g, /*restore=*/false, unused);
    } catch (...) {
      if (!impossibility_in_flight()) throw;
      return kNegInf;
    }
    std::optional<InfiniteDensity> found;
    Db discard = Db::discarding(t_);
    if (!(w < kPosInf)) {
      try {
        GroupBorder view(s_, groups_[g]);
        found = find_infinite_density(t_, s_);
      } catch (...) {  // out of memory: detached first, as below
        detach_group(g, discard);
        throw;
      }
    }
    detach_group(g, discard);
    if (found) raise_infinite_density(*found, InfiniteIn::kProposal, "pgibbs");
    return std::isnan(w) ? kNegInf : w;
  }

  /// Ancestor sampling: the retained values of group g get an ancestor among `generation` drawn in proportion to `w`,
  /// each one's weight times the density of those values on its path; the retained path is then that ancestor's,
  /// extended by its own values from group g on (its later groups read nothing earlier than group g - 1).
  void sample_retained_ancestor(const std::vector<size_t>& generation, const std::vector<double>& w, size_t g) {
    const std::optional<std::vector<double>> cum = cumulative(w);
    const size_t pick = cum ? draw_index(*cum, t_.rng()) : 0;
    if (pick == 0) return;  // its own path
    const size_t parent = generation[pick];
    move_to(parent);
    const size_t id = new_step(parent, g);  // and its Db's room, before the group is attached (see extend)
    try {
      steps_[id].db = new_db(g);
      Forcing forcing(*this, g);
      Db unused(t_);
      regen_group(g, /*restore=*/false, unused);  // weighed just above: possible, and finite
    } catch (...) {  // a regen that fails undoes itself
      drop(id);
      throw;
    }
    steps_[id].weight = detach_group(g, *steps_[id].db);  // unforced: the absorbing nodes' weight, as regen's
    if (g + 1 < groups_.size()) {  // the retained path's next group hangs from its new step
      const size_t next = retained_[g + 1];
      release(steps_[next].parent);
      steps_[next].parent = id;
      ++steps_[id].refs;
    }
    retained_[g] = id;
    rebased_ = true;
  }

  /// A new particle: the path the trace holds (ending with `parent`) extended by group g drawn from the prior.
  size_t extend(size_t parent, size_t g) {
    // The step and its Db's room first: running out of memory then fails before the group is attached, which
    // nothing but its own detach (into that Db) may follow.
    const size_t id = new_step(parent, g);
    try {
      steps_[id].db = new_db(g);
    } catch (...) {
      drop(id);
      throw;
    }
    Db unused(t_);  // read only by proposal kernels, which particles do not have
    const size_t before = t_.random_choices().size();
    double w = kNegInf;
    try {
      w = regen_group(g, /*restore=*/false, unused);
    } catch (...) {
      if (!impossibility_in_flight()) {  // the failed regen undid itself
        drop(id);
        throw;
      }
      steps_[id].db.reset();
      return id;  // a state of probability zero: weight 0, never extended
    }
    if (spec_.scope == "default" && t_.random_choices().size() != before + made_[g]) {
      detach_group(g, *steps_[id].db);
      drop(id);
      refuse_new_choices(spec_);
    }
    steps_[id].weight = w;
    if (!(w < kPosInf)) {
      std::optional<InfiniteDensity> found;
      try {
        GroupBorder view(s_, groups_[g]);
        found = find_infinite_density(t_, s_);
      } catch (...) {
        detach_group(g, *steps_[id].db);
        drop(id);
        throw;
      }
      if (found) {
        detach_group(g, *steps_[id].db);
        drop(id);
        raise_infinite_density(*found, InfiniteIn::kProposal, "pgibbs");
      }
      steps_[id].weight = kNegInf;  // NaN: weight zero
    }
    detach_group(g, *steps_[id].db);
    return id;
  }

  /// Frees a step no particle or path holds yet (as new_step made it).
  void drop(size_t id) {
    steps_[id].refs = 1;
    release(id);
  }

  Trace& t_;
  Scaffold& s_;
  std::vector<std::vector<Node*>> groups_;  // the border of each group, in the scaffold's border order
  size_t particles_;
  const BlockSpec& spec_;
  const std::vector<std::vector<Node*>>& principals_;
  std::vector<Step> steps_;
  std::vector<size_t> free_;  // steps no longer held, to be used again
  std::optional<ForcedByGroup> forced_;         // with ancestor sampling
  std::vector<std::vector<Value>> forced_values_;  // the retained values of forced_, by group
  bool rebased_ = false;
  std::vector<size_t> retained_;  // the retained path's steps, by group
  std::vector<size_t> original_;  // the path the transition started from, by group
  std::vector<size_t> made_;      // the random choices each group's regen registers (on the current path)
  std::vector<size_t> saved_;     // the values each group's detach saves (on the current path)
  std::vector<size_t> attached_;  // the steps the trace holds, by group from the first
  std::vector<size_t> generation_, next_;  // the particles of the last group extended, and of the one under way
};

/// The scaffold of every principal of every group.
Scaffold scaffold_of(Trace& trace, const std::vector<std::vector<Node*>>& principals) {
  std::vector<Node*> all;
  for (const std::vector<Node*>& g : principals) all.insert(all.end(), g.begin(), g.end());
  return build_scaffold(trace, all);
}

bool pgibbs_attempt(Trace& trace, const BlockSpec& spec, size_t particles) {
  ShapeTouch touch{trace};  // kept unless a procedure moved (below)
  const std::vector<std::vector<Node*>> principals = principal_groups(trace, spec);
  if (principals.empty()) return false;
  Scaffold scaffold = scaffold_of(trace, principals);
  if (!ensure_scaffold_fresh(trace, scaffold)) throw ShapeMoved{};
  HoldNodes hold(trace);
  check_fixed_choices(trace, scaffold, spec);
  const bool procedures = resamples_procedures(scaffold);
  std::vector<std::vector<Node*>> borders = group_borders(scaffold, principals);
  if (!borders.empty() && particles + 1 > kMaxParticleGroups / borders.size())
    refuse(spec, fmt::format("{} particles over {} groups of blocks are more than {} particle-groups, whose records "
                             "could exhaust memory; use fewer particles, or windows of (ordered_range lo hi)",
                             particles + 1, borders.size(), kMaxParticleGroups));
  std::optional<ForcedByGroup> forced = plan_ancestor_sampling(trace, scaffold, borders, principals);
  ConditionalSmc smc(trace, scaffold, std::move(borders), particles, spec, principals, std::move(forced));
  const std::optional<size_t> pick = smc.run();
  touch.keep = !procedures && !resamples_procedures(scaffold);
  return pick.value_or(0) != 0 || smc.rebased();
}

}  // namespace

bool pgibbs_samples_ancestors(Trace& trace, const BlockSpec& spec) {
  const std::vector<std::vector<Node*>> principals = principal_groups(trace, spec);
  if (principals.empty()) return false;
  const Scaffold scaffold = scaffold_of(trace, principals);
  return plan_ancestor_sampling(trace, scaffold, group_borders(scaffold, principals), principals).has_value();
}

bool pgibbs_transition(Trace& trace, const BlockSpec& spec, size_t particles) {
  return until_not_interrupted(trace, [&]() -> std::optional<bool> {
    return unless_shape_moved(trace, [&] { return pgibbs_attempt(trace, spec, particles); });
  });
}

}  // namespace vnt
