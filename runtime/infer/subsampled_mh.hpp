// subsampled_mh: the sublinear-time approximate MH transition (Chen, Mansinghka & Ghahramani, Alg. 3).
// The scaffold of the principal node is split at its border node b into a global section and N local
// sections (Defs. 6-8); local sections are detached and regenerated lazily, a mini-batch at a time, in
// random order, until the austerity sequential test decides. Unvisited sections are left stale.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/infer/austerity/t_quantile_cache.hpp"
#include "runtime/infer/chain_cache.hpp"
#include "runtime/infer/find_border.hpp"  // BorderInfo, find_border: its callers find them here
#include "runtime/infer/mix.hpp"
#include "runtime/infer/section_chain.hpp"

namespace vnt {

class BorderReach;
class Trace;
struct Node;

struct SubsampledOptions {
  size_t batch = 100;                 // Nbatch
  double epsilon = 0.01;              // the test's error bound per test; 0 is exact MH
  size_t min_batches = 1;             // k0
  ErrorSpending spending = ErrorSpending::kPerTest;  // what eps bounds: each test (the paper), or each decision
  std::optional<double> drift_sigma = std::nullopt;  // absent: resimulation from the prior
  bool fallback_to_mh = false;        // if the scaffold breaks the preconditions: exact MH instead of an error
  bool proxies = false;  // 'proxy 'taylor: test the rows of fused logistic plates against Taylor control variates
};

struct SubsampledStats {
  uint64_t transitions = 0;
  uint64_t accepted = 0;
  uint64_t sections_visited = 0;   // local sections detached and regenerated (the data touched)
  uint64_t sections_total = 0;     // sum of N over transitions
  uint64_t exact_transitions = 0;  // no border (N <= 1) or fallback: plain MH
  uint64_t stale_repairs = 0;      // visited sections that first had to be brought up to date
  uint64_t proxy_builds = 0;       // 'proxy 'taylor: control variates built (each costs one pass over a plate)
  uint64_t proxy_decisions = 0;    // 'proxy 'taylor: decisions that tested residuals against them
};

/// Which node sections of a border a look for refusals sees (check_every_section): those rooted at its `last` last
/// children (SIZE_MAX: all of them), and at `roots`.
struct SectionsToLook {
  size_t last = SIZE_MAX;
  std::vector<Node*> roots;
};

/// State kept across the transitions of one kernel: the cached t critical values, the section chains matched so
/// far, and the stream that orders local sections (the order itself is kept by the trace, Trace::section_order).
class SubsampledState {
 public:
  /// Whether the partitioned path refused `border` of `trace` and the trace's shape has not moved since: it
  /// would refuse again (partitionability depends only on edges, observed choices and the procedures applied,
  /// all of which move Trace::shape_epoch), so the transition goes to exact mh at once.
  const std::string* refusal(const Trace& trace, const Node* border) const;
  void refuse(const Trace& trace, const Node* border, std::string reason, bool local = false);
  /// Whether the last refusal was of a local section that exact mh's partition regenerates by itself.
  bool refused_locally() const { return refusal_.local; }
  /// Which node sections of the border of `reach` check_every_section has still to look at. Sections that passed
  /// it keep passing while nothing since can have changed them (ShapeLog::sections_to_look_at): the epoch has not
  /// moved, or only by new nodes, new sections of the border (a [predict] reading the parameter, a move that took a
  /// branch reading it), old nodes moved under it, nodes and edges taken away (a [forget], a branch replaced), and
  /// new children of a section's nodes (a [predict] reading one, a move that took a branch reading one: that
  /// section). Kept by the trace's own state: check_subsampling asks it before each [infer], and each subsampled
  /// transition before it draws.
  /// `never_stale_only`: the same for check_every_section with never_stale_only (kept apart).
  SectionsToLook sections_to_check(const Trace& trace, BorderReach& reach, bool never_stale_only = false) const;
  /// Every node section of `border` has passed check_every_section (Trace::shape_log then watches the epoch).
  void note_sections_checked(Trace& trace, Node* border, bool never_stale_only = false);
  uint64_t sections_examined = 0;  // by check_every_section through this memo, in all (tests, benchmarks)
  std::map<std::string, std::shared_ptr<ChainCache>, std::less<>> scope_chains;  // kernel_chains, by scope
  TQuantileCache& cache() { return cache_; }
  /// The stream that orders local sections, split once from the trace's stream: the trace's own draws
  /// per transition (block, proposal, u) are then exactly those of exact mh.
  Rng& order_rng(Trace& trace);
  ChainCache& chains() { return shared_chains_ ? *shared_chains_ : chains_; }
  /// Keeps the chains in `chains` from now on (kernel_chains: those of every [infer]'s kernel on one scope).
  void share_chains(std::shared_ptr<ChainCache> chains) { shared_chains_ = std::move(chains); }
  bool shares_chains() const { return shared_chains_ != nullptr; }
  SubsampledStats stats;
  bool fallback_reported = false;  // the fallback to exact mh is reported once per kernel
  /// Tests only: no transition looks for sections that must never be left stale, so an approximate move that does
  /// not draw one leaves it so, and one that draws it meets it there. The tests of the repairs of such sections and
  /// of what a transition undoes when it meets one make them so: no kernel can otherwise.
  bool unchecked_for_tests = false;
  /// Scores every node section by the general path (a scaffold detached and regenerated), chains and sections that
  /// would be evaluated in place too: tests hold that path in lockstep with exact mh on the same simple shapes.
  bool general_path_for_tests = false;
  /// Filled and emptied by each transition, kept allocated across them (growing them anew at every transition
  /// moved each value about once more): the section chains visited and their new values, the old values of
  /// sections evaluated in place.
  std::vector<SectionChain> chains_visited;
  std::vector<Value> chain_values, saved_values;
  std::vector<Node*> node_roots;  // exact mh: the border's children when a section's brush is about to move them

 private:
  struct Refusal {
    uint64_t trace = 0;  // 0: none
    const Node* border = nullptr;
    uint64_t epoch = 0;
    std::string reason;
    bool local = false;
  };
  TQuantileCache cache_;
  ChainCache chains_;
  std::shared_ptr<ChainCache> shared_chains_;
  Refusal refusal_;
  struct Checked {
    uint64_t epoch = 0;     // the shape epoch at which all the border's node sections passed
    uint64_t next_seq = 0;  // Trace::next_seq then
    uint64_t border = 0;    // the border's Node::seq
  };
  FlatPtrMap<Node, Checked> sections_checked_[2];  // [never_stale_only]
  std::optional<Rng> order_rng_;
};

/// One transition. Throws kInference naming the scope and the reason when the scaffold does not satisfy
/// the preconditions (one principal node, no structural change, one border, independent local sections
/// without random choices), unless opts.fallback_to_mh. Before it draws, it looks at the node sections made or
/// changed since its last look for those that must never be left stale (NotPartitionable::never_stale).
bool subsampled_mh_transition(Trace& trace, const BlockSpec& spec, const SubsampledOptions& opts,
                              SubsampledState& state);

/// Throws the kInference error subsampled_mh_transition would give if the block (each block of the scope, for
/// 'one' of a named scope) cannot be partitioned now, as far as that is known before drawing: the structure of
/// the global section, the plates' inputs and the shape of every node section (those of the last check are not
/// looked at again while they cannot have changed: SubsampledState::sections_to_check). Draws nothing; a no-op
/// with opts.fallback_to_mh. The [infer] directive runs it before its first transition.
void check_subsampling(Trace& trace, const BlockSpec& spec, const SubsampledOptions& opts);

/// Exact MH on a single principal node through its partitioned scaffold (all N local sections, no
/// subsampling): the same decision as mh, at the cost of the sections' arithmetic. nullopt (trace
/// untouched) when the scaffold cannot be partitioned. The section chains it matches are kept by the trace
/// (Trace::kernel_state), as subsampled_mh keeps its own (ChainCache).
std::optional<bool> partitioned_mh_transition(Trace& trace, const BlockChoice& choice, const BlockSpec& spec,
                                             std::optional<double> drift_sigma);
/// How many chains partitioned_mh_transition has found in the cache of `trace` (for tests).
uint64_t partitioned_mh_chain_hits(Trace& trace);
/// What partitioned_mh_transition has done on `trace` (for tests: the sections it visited, refused attempts included).
const SubsampledStats& partitioned_mh_stats(Trace& trace);
/// The section chains of the subsampled_mh kernels on `scope` of `trace`, kept by the trace: each [infer] makes its
/// kernels anew, and a program of one-transition [infer]s would otherwise match every section it visits again.
std::shared_ptr<ChainCache> kernel_chains(Trace& trace, const std::string& scope);
/// How many node sections check_every_section has looked at in this trace, in all: before [infer]s
/// (check_subsampling) and before transitions (tests, benchmarks).
uint64_t node_sections_checked(Trace& trace);

}  // namespace vnt
