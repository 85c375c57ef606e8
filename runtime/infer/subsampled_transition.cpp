// One transition of Algorithm 3 of the sublinear-MH paper: lazy local sections, the austerity test, restore on reject.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/subsampled_transition.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <span>

#include "runtime/core/diagnostics.hpp"
#include "runtime/core/flat_ptr_map.hpp"
#include "runtime/core/make_room.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"
#include "runtime/regen/border_reach.hpp"
#include "runtime/regen/infinite_density.hpp"
#include "runtime/infer/section_chain.hpp"
#include "runtime/regen/section_dag.hpp"
#include "runtime/regen/refresh.hpp"
#include "runtime/regen/section_group.hpp"
#include "runtime/regen/regen.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/plate_proxy.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

/// A section visited by the general path: its roots (children of the border, several if one datum reads the
/// parameter several times), its scaffold and what a rejection restores.
struct Section {
  struct Root {
    Node* node;
    uint64_t version;
    std::optional<Value> unrepaired;  // a stale section the border's old value makes fail: its stale value
  };
  std::vector<Root> roots;
  Scaffold scaffold;
  std::unique_ptr<Db> old_state;
  /// A stale section repaired for the visit: its values and roots' versions before, which a transition that
  /// fails puts back (a rejection keeps the repair, as any other reader would).
  std::vector<std::pair<Node*, Value>> stale_values;
  std::vector<uint64_t> stale_versions;
  /// Exact mh, a section with brush: the children of the border its regen made (new reads of the parameter in the
  /// new brush), which an acceptance marks fresh with the roots.
  std::vector<Node*> new_roots;
};

/// The section of `root` (section_group, or `known`: its roots found before), which must hold no structural change
/// and no random choice to propose, unless `exact`: an exact transition visits every section, so one with brush or
/// a choice to resample is simply regenerated as the general path would (never left stale). Sections are disjoint
/// by construction: children of the border whose branches meet are one section.
SectionGroup checked_section(Trace& t, BorderReach& reach, Node* root, bool exact,
                             const std::vector<Node*>* known = nullptr) {
  std::optional<SectionGroup> g =
      known != nullptr ? SectionGroup{*known, *build_local_scaffold(t, reach.border(), *known, SIZE_MAX)}
                       : section_group(t, reach, root);
  if (!g)
    throw NotPartitionable{fmt::format(
        "its local sections meet in too many places (more than {} reads of the parameter, or {} nodes per read, "
        "in one section: is a value computed from it read by every datum?)",
        kMaxSectionRoots, kMaxSectionNodesPerRoot)};
  if (exact) return std::move(*g);
  const Scaffold& s = g->scaffold;
  if (!s.brush.empty()) throw NotPartitionable{"a local section changes the structure of the trace", true, true};
  s.drg.for_each([&](Node* n, int) {
    // A mem request to resample asks for the family of new arguments, which its regen may create: brush that no
    // scaffold shows beforehand. If the old family is shared, as when several data call (f w), dropping it is no
    // brush of one section either, and the sections a decision did not visit would still hold it.
    if (n->kind == NodeKind::kRequest &&
        std::any_of(as_request(n)->esrs.begin(), as_request(n)->esrs.end(), [](const Esr& e) { return e.shared; }))
      throw NotPartitionable{"a local section changes the structure of the trace", true, true};
    if (n->kind != NodeKind::kOutput) return;
    OutputNode* out = as_output(n);
    const SpProcedure* p = primitive_at(out);
    if (p != nullptr && p->sp().is_random())
      throw NotPartitionable{"a local section contains a random choice that would have to be resampled", true};
    // A block or scope name computed from the parameter moves the choice in the scopes: left stale, the scopes
    // would name the block of the old value to the kernels that select by them.
    if (p != nullptr && &p->sp() == t.scope_include_sp() &&
        (s.is_resampling(out->operands[0]) || s.is_resampling(out->operands[1])))
      throw NotPartitionable{"a local section puts a random choice in a block computed from the parameter", true, true};
  });
  return std::move(*g);
}

}  // namespace

void check_structure(Trace& t, const Scaffold& global, BorderReach& reach, bool exact) {
  if (!global.brush.empty()) throw NotPartitionable{"proposing to it changes the structure of the trace"};
  Node* border = reach.border();
  for (size_t i = 0; i < border->plate_children; ++i)
    for (Node* x : as_plate(border->children[i])->inputs)
      if (x != border && (global.is_resampling(x) || reach.follows(x)))
        throw NotPartitionable{"a local section also reads another value that the proposal changes"};
  if (border->plate_children < border->children.size()) {
    Node* first = border->children[border->plate_children];
    if (SectionChain chain; !chain.match(t, reach, first)) checked_section(t, reach, first, exact);
  }
}

size_t check_every_section(Trace& t, BorderReach& reach, const SectionsToLook& which, bool never_stale_only) {
  Node* border = reach.border();
  FlatPtrSet<Node> seen;  // roots looked at, and those of sections of several roots already checked
  auto look = [&](Node* child) {
    if (!seen.insert(child)) return;
    if (SectionChain chain; chain.match(t, reach, child)) return;
    try {
      SectionGroup g = checked_section(t, reach, child, false);
      for (Node* r : g.roots) seen.insert(r);
    } catch (const NotPartitionable& np) {
      if (!never_stale_only || np.never_stale) throw;
    }
  };
  // Children are appended as they are linked (plates go first): those linked since a look are the last ones.
  const size_t nodes = border->children.size() - border->plate_children;
  const size_t first = border->children.size() - std::min(which.last, nodes);
  for (size_t i = first; i < border->children.size(); ++i) look(border->children[i]);
  size_t looked = border->children.size() - first;
  for (Node* root : which.roots)
    if (root->kind != NodeKind::kPlate && !seen.contains(root)) {
      look(root);
      ++looked;
    }
  return looked;
}

size_t check_every_section(Trace& t, BorderReach& reach) { return check_every_section(t, reach, SectionsToLook{}); }

namespace {

/// The rows of one plate under the border during a transition: scored against the old and the new border value.
struct PlateVisit {
  PlateNode* plate = nullptr;
  size_t first = 0;  // section number of row 0
  std::optional<PlateEvaluator> now, before;
  // Fused logistic rows of the border's value: scored by their change alone (logistic_log_density_changes),
  // from the old and new weights with the bias first.
  bool changes = false;
  Eigen::VectorXd w_from, w_to;
  LogisticProxy* proxy = nullptr;  // 'proxy 'taylor: rows are scored as residuals against it
  LogisticProxy* renting = nullptr;  // 'proxy 'taylor: where the rows scored beyond the first look are counted
  // 'proxy 'taylor, for Transition::switch_proxies: whether proxies built at w_from now would differ from those in
  // use, the sum over the rows scored of the change such proxies would have, the sum over the rows scored and
  // over all rows of the change of the proxies in use.
  bool may_switch = false;
  double taylor_seen = 0, proxy_seen = 0, proxy_total = 0;
  size_t batch_rows = 0;  // rows in the last mini-batch
  std::vector<uint32_t> rows, slots;  // the current mini-batch: row numbers and their places in it
  std::vector<double> a, b;
  double new_sum = 0;
  size_t visited = 0;
};

/// What building proxies for pv's plate costs, in rows scored.
double build_price(const PlateVisit& pv) {
  return LogisticProxy::build_cost(static_cast<size_t>(pv.w_from.size())) * static_cast<double>(pv.plate->rows);
}

/// One transition, or NotPartitionable after restoring the trace.
class Transition {
 public:
  Transition(Trace& t, const BlockSpec& spec, const SubsampledOptions& o, SubsampledState& st)
      : t_(t), spec_(spec), opts_(o), st_(st), node_roots_(st.node_roots), chains_(st.chains_visited),
        chain_values_(st.chain_values), saved_(st.saved_values) {
    node_roots_.clear();
    chains_.clear();
    chain_values_.clear();
    saved_.clear();
  }
  ~Transition() {  // the buffers keep their memory, not the values (a vector each may hold)
    node_roots_.clear();
    chains_.clear();
    chain_values_.clear();
    saved_.clear();
  }
  Transition(const Transition&) = delete;
  Transition& operator=(const Transition&) = delete;

  bool run(const BlockChoice& choice, Node* v, const BorderInfo& info);
  /// Exact MH through the partition (eps = 0, sections in order): the decision of Eq. 4 by Eq. 5.
  bool exact_ = false;

 private:
  double visit(Node* root);
  double visit_in_place(Node* root, std::shared_ptr<const SectionDag> dag);
  /// Runs `repair` (which brings what a section reads from other borders' stale sections up to date) and says
  /// whether the section's shape can still be trusted: not if a repair moved the trace's shape (it changed a
  /// procedure the section applies, say, from a deterministic one to a random one). The chains and sections found
  /// so far are then forgotten, so the section is found again from its current values.
  template <class F>
  bool inputs_made_fresh(F&& repair) {
    const uint64_t epoch = t_.shape_epoch();
    repair();
    if (t_.shape_epoch() == epoch) [[likely]]
      return true;
    st_.chains().forget(t_);
    return false;
  }
  /// The same for a chain or an evaluable section, whose walks are noted under `key` in the kernel's ChainCache.
  template <class S>
  bool inputs_made_fresh(const S& section, Node* key) {
    if (!stale_elsewhere(t_, border_)) return true;  // nothing to note, the common case: no lookup in the cache
    return inputs_made_fresh([&] { section.make_inputs_fresh(t_, border_, st_.chains().watch(key)); });
  }
  void add_brush_roots(SectionGroup& g) const;
  bool unclaimed(const Node* r, const Node* root) const;
  bool new_brush_reads_elsewhere(const Scaffold& s, uint64_t made_from);
  double split(double l, std::span<Node* const> roots, const Node* root);
  void restore_in_place();
  /// Runs f while the border holds its old value (the proposed one is back afterwards, also if f throws).
  template <class F>
  void with_old_border_value(F&& f) {
    struct Swap {
      Transition& t;
      explicit Swap(Transition& tr) : t(tr) { std::swap(t.border_->value, t.old_value_); }
      ~Swap() { std::swap(t.border_->value, t.old_value_); }
    } swap(*this);
    f();
  }
  void restore_sections();
  /// After a failure: sections restored by restore_sections that were stale before their visit are stale again.
  void put_back_stale(Section& sec);
  /// Section number s of the border: a plate row (queued in its PlateVisit) or a child visited now.
  void visit_section(size_t s, size_t slot, double* out);
  void score_plates(double* out);
  /// Row j of pv's mini-batch has a density of +inf, under the proposed value or the current one: fails.
  [[noreturn]] void infinite_row(const PlateVisit& pv, size_t j) const;
  void start_plate(PlateVisit& pv);
  bool fused_weights(PlateVisit& pv) const;
  double use_proxy(PlateVisit& pv);
  bool switch_proxies();

  Trace& t_;
  const BlockSpec& spec_;
  const SubsampledOptions& opts_;
  SubsampledState& st_;
  Node* border_ = nullptr;
  BorderReach reach_{nullptr};
  Value old_value_, new_value_;
  uint64_t old_version_ = 0;
  std::vector<Section> visited_;
  std::vector<Node*>& node_roots_;  // exact mh with a section with brush: the border's node children at the start
  FlatPtrMap<Node, double> shares_;  // roots of sections with several, not drawn yet: their share of its l
  uint64_t first_seq_ = 0;  // Node::seq of the first node made during this transition
  std::vector<SectionChain>& chains_;  // sections evaluated from values alone (nothing to undo)
  std::vector<Value>& chain_values_;  // their new link values, in order
  struct InPlace {
    std::shared_ptr<const SectionDag> dag;
    size_t saved;  // where its values before the transition start in saved_
  };
  std::vector<InPlace> in_place_;  // sections evaluated in place (SectionDag)
  std::vector<Value>& saved_;
  std::vector<PlateVisit> plates_;
  size_t plate_rows_ = 0;
  std::vector<size_t> swap_with_;  // the partner of each position of the section order drawn so far
  size_t swapped_ = 0;             // positions swapped so far
  double drawn_sum_ = 0;  // the sum of l_i over the sections drawn so far
  bool procedures_ = false;  // a value it changed was or is a procedure (resamples_procedures)
  // A section failed under the proposed value (a domain error): the move has probability zero. Exact mh's general
  // path then rejects without drawing u, so the transition gives u back to the stream.
  bool impossible_ = false;
};



void Transition::start_plate(PlateVisit& pv) {
  std::vector<const Value*> in = current_inputs(*pv.plate);
  bool reads_border = false;
  for (size_t i = 0; i < pv.plate->inputs.size(); ++i) {
    Node* x = pv.plate->inputs[i];
    if (x == border_) {
      reads_border = true;
      continue;
    }
    ensure_fresh(t_, x, border_);
  }
  VNT_ASSERT(reads_border, "a plate under the border does not read it");
  pv.now.emplace(*pv.plate, in);
  for (size_t i = 0; i < pv.plate->inputs.size(); ++i)
    if (pv.plate->inputs[i] == border_) in[i] = &old_value_;
  pv.before.emplace(*pv.plate, std::move(in));
}

/// Whether pv's rows are fused logistic rows of the border's value; if so, sets its old and new weights.
bool Transition::fused_weights(PlateVisit& pv) const {
  const PlateNode& plate = *pv.plate;
  if (!fused_logistic_rows(plate) || plate.inputs[plate.program->fused_input] != border_) return false;
  std::optional<Eigen::VectorXd> from = logistic_weights(plate, old_value_), to = logistic_weights(plate, new_value_);
  if (!from || !to || from->size() != to->size()) return false;
  pv.w_from = std::move(*from);
  pv.w_to = std::move(*to);
  return true;
}

/// 'proxy 'taylor, for a visit with fused_weights: makes pv score its rows as residuals against the plate's
/// control variates when they are built and cover every row, and returns the sum of the proxies' change, known
/// exactly; 0 and no proxy otherwise. A build costs a pass over the rows, so it is bought like skis by a renter
/// who does not know how long the season lasts: only once the rows scored beyond their decisions' first
/// mini-batch (LogisticProxy::excess, counted with or without proxies, but not while they are built at the
/// current value, where a build would change nothing) have cost as much as a build; before a decision or within
/// one (switch_proxies). Builds then never cost more than the rows that paid for them, none is made while
/// decisions take one mini-batch, and none at a point the chain is only passing through (a draw of the prior).
double Transition::use_proxy(PlateVisit& pv) {
  PlateNode& plate = *pv.plate;
  if (!plate.proxy) plate.proxy = std::make_shared<LogisticProxy>();
  LogisticProxy& proxy = *plate.proxy;
  const auto usable = [&] {
    return proxy.rows() == plate.rows && proxy.reference().size() == pv.w_from.size();
  };
  if (!usable() || proxy.reference() != pv.w_from) {
    pv.renting = &proxy;
    if (proxy.excess >= build_price(pv)) {
      ++st_.stats.proxy_builds;
      // If it cannot be built, the attempt still spent the excess.
      if (proxy.rebuild(plate, pv.w_from)) pv.renting = nullptr;
    }
  }
  pv.may_switch = pv.renting != nullptr && opts_.epsilon > 0 && opts_.spending == ErrorSpending::kPerTest;
  if (!usable()) return 0;
  pv.proxy = &proxy;
  pv.proxy_total = proxy.sum(pv.w_from, pv.w_to);
  return pv.proxy_total;
}

/// 'proxy 'taylor within a decision: a plate whose renting count reaches the cost of a build while the test is still
/// undecided gets its proxies built now, at the current value, and the caller restarts the test on the sections not
/// yet drawn, so one long decision costs at most about one build's worth of rows plus a build instead of up to N
/// rows. The rows already drawn are not tested again (the choice to switch depended on them) but enter the new
/// threshold exactly: the decision is sum(l_i) >= N mu0 over all N sections, and the sum over the drawn ones is
/// known, as is the new proxies' change over them (changes_and_taylor). Not with 'eps_per 'decision, whose bound
/// a second test would break. Returns whether any plate switched.
bool Transition::switch_proxies() {
  bool any = false;
  for (PlateVisit& pv : plates_) {
    if (!pv.may_switch) continue;
    LogisticProxy& proxy = *pv.renting;
    if (proxy.excess < build_price(pv)) continue;
    ++st_.stats.proxy_builds;
    pv.may_switch = false;
    LogisticProxy fresh;
    if (!fresh.rebuild(*pv.plate, pv.w_from)) {
      proxy.excess = 0;  // as before a decision: the attempt spent it
      continue;
    }
    proxy = std::move(fresh);
    pv.renting = nullptr;  // built at the current value: the rest of the decision is not charged
    pv.proxy = &proxy;
    pv.proxy_total = proxy.sum(pv.w_from, pv.w_to);
    pv.proxy_seen = pv.taylor_seen;
    any = true;
  }
  return any;
}

void Transition::visit_section(size_t s, size_t slot, double* out) {
  if (s >= plate_rows_) {
    const size_t i = s - plate_rows_;
    out[slot] = visit(node_roots_.empty() ? border_->children[border_->plate_children + i] : node_roots_[i]);
    return;
  }
  size_t p = 0;
  while (s >= plates_[p].first + plates_[p].plate->rows) ++p;
  plates_[p].rows.push_back(static_cast<uint32_t>(s - plates_[p].first));
  plates_[p].slots.push_back(static_cast<uint32_t>(slot));
}

void Transition::score_plates(double* out) {
  for (PlateVisit& pv : plates_) {
    const size_t k = pv.rows.size();
    pv.batch_rows = k;
    if (k == 0) continue;
    // b: what the test averages, l_i or its residual; a (general rows only): the log densities at the
    // proposed value.
    pv.b.resize(k);
    double* taylor = pv.may_switch ? &pv.taylor_seen : nullptr;
    if (pv.proxy != nullptr) {
      const double dp = pv.proxy->residuals(*pv.plate, pv.w_from, pv.w_to, pv.rows.data(), k, pv.b.data(), taylor);
      pv.proxy_seen += dp;
      drawn_sum_ += dp;  // the test sees l_i - p_i
    } else if (taylor != nullptr) {
      *taylor += LogisticProxy::changes_and_taylor(*pv.plate, pv.w_from, pv.w_to, pv.rows.data(), k, pv.b.data());
    } else if (pv.changes) {
      logistic_log_density_changes(*pv.plate, pv.w_from, pv.w_to, pv.rows.data(), k, pv.b.data());
    } else {
      pv.a.resize(k);
      if (!pv.now) start_plate(pv);
      try {
        pv.now->rows(pv.rows.data(), k, pv.a.data());
      } catch (const Error& e) {
        if (!is_impossibility(e)) throw;
        std::fill(pv.a.begin(), pv.a.end(), kNegInf);
        impossible_ = true;  // impossible under the proposed value: rejected
      }
      try {
        pv.before->rows(pv.rows.data(), k, pv.b.data());
      } catch (const Error& e) {
        if (!is_impossibility(e)) throw;
        std::fill(pv.b.begin(), pv.b.end(), kNegInf);  // the current state is impossible (log_weight)
      }
      for (size_t j = 0; j < k; ++j) {
        if (pv.a[j] == kPosInf || pv.b[j] == kPosInf) [[unlikely]]
          infinite_row(pv, j);
        pv.b[j] = log_weight(pv.a[j], pv.b[j]);
      }
    }
    for (size_t j = 0; j < k; ++j) out[pv.slots[j]] = pv.b[j];
    if (!pv.changes)
      for (size_t j = 0; j < k; ++j) pv.new_sum += pv.a[j];
    pv.visited += k;
    st_.stats.sections_visited += k;
    pv.rows.clear();
    pv.slots.clear();
  }
}

void Transition::infinite_row(const PlateVisit& pv, size_t j) const {
  const PlateNode& plate = *pv.plate;
  const uint32_t row = pv.rows[j];
  const InfiniteDensity where{plate.program->ops.back().expr, plate.observed.value(row), &plate, row};
  raise_infinite_density(where, pv.a[j] == kPosInf ? InfiniteIn::kProposal : InfiniteIn::kCurrentState,
                         spec_.kernel);
}

double Transition::visit(Node* root) {
  // The other roots of a section with several, scored already in this transition: their share of its l. First: a
  // root in a section's brush (exact mh) may look like a chain, but it was resimulated with the brush.
  if (const double* share = shares_.empty() ? nullptr : shares_.find(root)) {
    ++st_.stats.sections_visited;
    return *share;
  }
  const bool general = st_.general_path_for_tests;
  const SectionChain* chain = general ? nullptr : st_.chains().find(root);
  SectionChain matched;
  const bool found = chain != nullptr;
  std::shared_ptr<const SectionDag> dag;  // the section of a root that is not a chain, found before
  if (!found) {
    if (const auto* known = st_.chains().section(root); known != nullptr && !(general && (*known)->evaluable()))
      dag = *known;
    else if (!general && matched.match(t_, reach_, root))
      chain = &matched;
  }
  if (chain != nullptr) {
    // Before it is cached: it may note that its inputs are constants.
    if (!inputs_made_fresh(*chain, root)) return visit(root);
    if (!found) st_.chains().put(root, matched);
    bool stale = root->version != old_version_;
    std::optional<double> l = chain->delta(new_value_, old_value_, !stale, chain_values_, spec_.kernel);
    chains_.push_back(*chain);
    ++st_.stats.sections_visited;
    st_.stats.stale_repairs += stale ? 1 : 0;
    impossible_ |= !l;
    return l.value_or(kNegInf);
  }
  std::optional<SectionGroup> group;
  if (dag == nullptr) {
    auto section = general ? nullptr : std::make_shared<const SectionDag>(t_, reach_, root);
    if (!section || !section->evaluable()) {  // its roots are kept: later visits build the scaffold without a search
      group = checked_section(t_, reach_, root, exact_);
      section = std::make_shared<const SectionDag>(group->roots);
    }
    // Not a section with brush (exact mh only): its regen replaces the roots that are in the brush.
    if (!group || group->scaffold.brush.empty()) st_.chains().put_section(section, group ? &group->scaffold : nullptr);
    dag = std::move(section);
  }
  if (dag->evaluable()) {
    if (!inputs_made_fresh(*dag, dag->roots()[0])) return visit(root);
    return visit_in_place(root, std::move(dag));
  }
  if (!group) group = checked_section(t_, reach_, root, exact_, &dag->roots());
  if (!group->scaffold.brush.empty()) add_brush_roots(*group);
  // Values read from other borders' stale sections are repaired first; this border's own are handled below.
  if (!inputs_made_fresh([&] { return ensure_scaffold_fresh(t_, group->scaffold, border_); })) return visit(root);
  Section sec{{}, std::move(group->scaffold), std::make_unique<Db>(t_), {}, {}, {}};
  make_room(visited_);  // a section changed below is put back (restore_sections) only once it is listed
  bool stale = false;
  for (Node* r : group->roots) {
    sec.roots.push_back({r, r->version, std::nullopt});
    stale |= r->version != old_version_;
  }
  const bool brush = !sec.scaffold.brush.empty();
  if (brush) {
    // Its repair would replace the brush the scaffold names (and a failure could not put the stale one back): the
    // general path repairs it first. Only an approximate move leaves a section stale.
    if (stale) throw NotPartitionable{"a local section that changes the structure of the trace is stale"};
    // Its regen adds and removes children of the border: the sections are numbered on the children as they were.
    if (node_roots_.empty()) node_roots_.assign(border_->children.begin() + border_->plate_children,
                                                border_->children.end());
  }
  if (stale) {
    // Stale (section 3.5): bring it up to date with the border's current (old) value before scoring it.
    sec.scaffold.drg.for_each([&](Node* d, int) { sec.stale_values.emplace_back(d, d->value); });
    for (const Section::Root& r : sec.roots) sec.stale_versions.push_back(r.version);
    try {
      with_old_border_value([&] { refresh_section(t_, border_, group->roots, sec.scaffold); });
      for (Section::Root& r : sec.roots) r.version = old_version_;
    } catch (const Error& e) {
      // The old value makes it fail: the current state is impossible (log_weight). refresh_section left the
      // section as it was; a rejection puts it back so.
      if (!is_impossibility(e)) throw;
      for (Section::Root& r : sec.roots) r.unrepaired = r.node->value;
    }
    ++st_.stats.stale_repairs;
  }
  const bool unrepaired = sec.roots[0].unrepaired.has_value();
  auto put_back_unrepaired = [&] {  // restoring read the border's value for the roots
    for (Section::Root& r : sec.roots)
      if (r.unrepaired) r.node->value = *r.unrepaired;
  };
  procedures_ |= resamples_procedures(sec.scaffold);
  const double rho = detach_and_extract(t_, sec.scaffold, *sec.old_state);
  double xi = 0;
  const size_t children = border_->children.size();  // new children are appended
  const uint64_t made_from = t_.next_seq();           // the nodes of its new brush
  try {
    xi = regen_and_attach(t_, sec.scaffold, false, *sec.old_state);
    if (brush) sec.new_roots.assign(border_->children.begin() + static_cast<std::ptrdiff_t>(children),
                                    border_->children.end());
    // A density of +inf under the proposed value fails the transition. Detached first, as a failed regen leaves
    // the section, for the restore below.
    if (!(xi < kPosInf)) [[unlikely]]
      if (std::optional<InfiniteDensity> infinite = find_infinite_density(t_, sec.scaffold)) {
        Db scratch(t_);
        detach_unscored(t_, sec.scaffold, scratch);
        raise_infinite_density(*infinite, InfiniteIn::kProposal, spec_.kernel);
      }
  } catch (...) {
    // The failed regen undid itself, so the section is detached. It is put back from the border's old value, not
    // from the proposed one the border holds: regen_proposal would leave the section's root at the proposed value.
    // Whatever failed it: a DeferredRepair too (which is not an Error), or the section would stay detached.
    t_.must_complete([&] {
      with_old_border_value([&] { regen_and_attach(t_, sec.scaffold, true, *sec.old_state); });
      put_back_unrepaired();
    });
    if (!impossibility_in_flight()) {
      t_.must_complete([&] { put_back_stale(sec); });
      throw;
    }
    impossible_ = true;  // impossible under the proposed value: rejected
    return kNegInf;
  }
  procedures_ |= resamples_procedures(sec.scaffold);
  // A section with k roots is k of the N children the test draws from: each carries l/k, so that the sum over
  // all N is still the sum of the sections' l, and the draw stays uniform over children.
  const double l = log_weight(xi, unrepaired ? kNegInf : rho);
  visited_.push_back(std::move(sec));
  // Listed first: the failure below puts it back with the sections before it.
  if (brush && new_brush_reads_elsewhere(visited_.back().scaffold, made_from))
    throw NotPartitionable{"a local section's new brush reads another section", true};
  ++st_.stats.sections_visited;
  return split(l, group->roots, root);
}

/// Exact mh: reads of the border in the section's brush whose branches do not meet its own (one that ends in a
/// random choice of the brush, say) are not sections: the general path resimulates them with the brush. They join
/// the section's roots. (They come after its first root among the border's children: a family is brush because of
/// a request in D, evaluated before the family was.)
void Transition::add_brush_roots(SectionGroup& g) const {
  const size_t found = g.roots.size();
  g.scaffold.brush.for_each([&](Node* n) {
    bool reads_border = false;
    for_each_parent(n, [&](Node* p) { reads_border |= p == border_; });
    if (reads_border && std::find(g.roots.begin(), g.roots.end(), n) == g.roots.end()) g.roots.push_back(n);
  });
  by_creation(std::span<Node*>(g.roots).subspan(found));  // the brush table's order follows addresses
}

/// Exact mh: whether the brush a section's regen has just made (the nodes from Node::seq `made_from` on) reads a
/// value computed from the border outside the section. A section not visited yet may still hold it from the
/// border's old value ((if c0 c1 c3) taking its branch c3 before c3 = (not c0) is made again): scored so, the move
/// would be scored in a state that is none of the chain's. The general scaffold regenerates in dependency order.
bool Transition::new_brush_reads_elsewhere(const Scaffold& s, uint64_t made_from) {
  std::vector<Node*> todo;
  s.drg.for_each([&](Node* n, int) {
    if (n->kind == NodeKind::kOutput)
      for (Node* e : as_output(n)->esr_parents)
        if (e->seq >= made_from) todo.push_back(e);
  });
  FlatPtrSet<Node> seen;
  bool reads = false;
  while (!todo.empty() && !reads) {
    Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n)) continue;
    for_each_parent(n, [&](Node* p) {
      if (p->seq >= made_from)
        todo.push_back(p);
      else if (p != border_ && !s.is_resampling(p) && !s.is_absorbing(p) && reach_.follows(p))
        reads = true;
    });
  }
  return reads;
}

/// Whether root `r` of the section drawn at `root` takes a share of its l: the drawn root does, and each other root
/// collects its share when drawn. Exact mh only can meet one that another section claimed already (one that met it,
/// or one whose brush holds it), which collects that section's share, or one made in this transition by an earlier
/// section's new brush, which no draw collects: the section's l is split over the others, so that the sum over the
/// N draws counts every section's l once. (Sections are visited in turn, each from the state the ones before left:
/// their l add up to the whole move's even where one regenerates nodes another then removes.)
bool Transition::unclaimed(const Node* r, const Node* root) const {
  return r == root || (shares_.find(r) == nullptr && r->seq < first_seq_);
}

/// The share of l of the section drawn at `root`, recorded for its other unclaimed roots.
double Transition::split(double l, std::span<Node* const> roots, const Node* root) {
  size_t k = 0;
  for (const Node* r : roots) k += unclaimed(r, root) ? 1 : 0;
  const double share = l / static_cast<double>(k);
  for (Node* r : roots)
    if (r != root && unclaimed(r, root)) shares_.emplace(r, share);
  return share;
}

/// A section of primitive applications: evaluated in place under the old value if it is stale, then under the
/// proposed one, from the values it held before, which a rejection puts back (a stale section stays stale).
double Transition::visit_in_place(Node* root, std::shared_ptr<const SectionDag> dag) {
  bool stale = false;
  for (Node* r : dag->roots()) stale |= r->version != old_version_;
  const SectionDag& d = *dag;
  in_place_.push_back({std::move(dag), saved_.size()});
  d.save(saved_);
  auto score = [&d] {
    d.evaluate();
    return d.log_density();
  };
  double before = kNegInf, after = kNegInf;
  try {
    if (stale)
      with_old_border_value([&] { before = score(); });
    else
      before = d.log_density();
  } catch (const Error& e) {
    if (!is_impossibility(e)) throw;  // otherwise the current state is impossible (log_weight)
  }
  // A density of +inf fails the transition, checked while the section holds the values it was found at.
  if (before == kPosInf) [[unlikely]]
    raise_infinite_density_at(d.infinite_leaf(), InfiniteIn::kCurrentState, spec_.kernel);
  try {
    after = score();
  } catch (const Error& e) {
    if (!is_impossibility(e)) throw;
    impossible_ = true;  // impossible under the proposed value: rejected
  }
  if (after == kPosInf) [[unlikely]]
    raise_infinite_density_at(d.infinite_leaf(), InfiniteIn::kProposal, spec_.kernel);
  ++st_.stats.sections_visited;
  st_.stats.stale_repairs += stale ? 1 : 0;
  // As on the general path, each of k roots carries l/k; the others are not evaluated again.
  return split(log_weight(after, before), d.roots(), root);
}

void Transition::restore_in_place() {
  for (auto it = in_place_.rbegin(); it != in_place_.rend(); ++it)
    it->dag->restore(saved_.begin() + static_cast<std::ptrdiff_t>(it->saved));
}

void Transition::put_back_stale(Section& sec) {
  if (sec.stale_values.empty()) return;
  put_back_values(t_, sec.stale_values);
  for (size_t i = 0; i < sec.roots.size(); ++i) {
    Node* r = sec.roots[i].node;
    if (r->version == sec.stale_versions[i]) continue;  // fresh before, or its repair failed
    r->version = sec.stale_versions[i];
    ++t_.stale_borders()[border_];  // the repair had counted it fresh
  }
}

void Transition::restore_sections() {
  for (auto it = visited_.rbegin(); it != visited_.rend(); ++it) {
    Db scratch(t_);
    detach_unscored(t_, it->scaffold, scratch);
    regen_and_attach(t_, it->scaffold, true, *it->old_state);
    for (Section::Root& r : it->roots) {
      r.node->version = r.version;
      if (r.unrepaired) r.node->value = *r.unrepaired;  // restoring read the border's value
    }
  }
}

bool Transition::run(const BlockChoice& choice, Node* v, const BorderInfo& info) {
  struct Window {  // the chains cached by earlier transitions are trusted only if nothing else ran since
    Trace& t;
    ChainCache& cache;
    const bool& procedures;
    int exceptions = std::uncaught_exceptions();
    Window(Trace& tr, ChainCache& c, const bool& p, const Node* border) : t(tr), cache(c), procedures(p) {
      cache.begin(t, border);
    }
    ~Window() { cache.end(t, procedures || std::uncaught_exceptions() > exceptions); }
  } window(t_, st_.chains(), procedures_, info.border);
  border_ = info.border;
  reach_ = BorderReach(border_);
  first_seq_ = t_.next_seq();
  const size_t n = info.n;
  ProposalKernels kernels;
  if (opts_.drift_sigma) kernels[v] = ProposalKernel{ProposalKernel::Kind::kDrift, *opts_.drift_sigma, {}};
  Node* principals[] = {v};
  // Alg. 3 step 1-2: the global section only, stopping at the border.
  Scaffold global = build_scaffold(t_, principals, std::move(kernels), border_);
  check_structure(t_, global, reach_, exact_);
  if (!ensure_scaffold_fresh(t_, global)) throw ShapeMoved{};  // nothing proposed yet: the caller selects again
  procedures_ = resamples_procedures(global);
  old_value_ = border_->value;
  old_version_ = border_->version;
  // Held from here on (the global section, the border's children, the sections visited): a repair that would remove
  // nodes is deferred (DeferredRepair). The restores below repair nothing.
  HoldNodes hold(t_);
  Db rho_db(t_);
  double rho = detach_current(t_, global, rho_db);
  std::optional<double> proposed = regen_proposal(t_, global, rho_db, spec_.kernel);
  if (!proposed) return false;
  std::optional<Rng> before_u;  // the stream before u was drawn
  std::optional<SequentialTest> test;
  // From here on the trace holds the proposal: whatever fails (out of memory too) puts the old state back.
  try {
    double xi = *proposed;
    procedures_ |= resamples_procedures(global);
    new_value_ = border_->value;
    // The block-selection correction counts the choices after the proposal. An exact transition may make or drop
    // choices in the sections' brush too: it counts them once every section is visited, before u.
    auto global_weight = [&] { return xi - rho + log_index_density(t_, spec_) - choice.log_index_density; };
    double alpha_g = exact_ ? 0 : global_weight();
    // Steps 3-5: mu0 = (log u - alpha_g) / N, then local sections in random order until the test decides.
    double target = 0;  // N mu0: the decision is sum(l_i) >= target
    auto draw_u = [&] {
      before_u = t_.rng();
      target = std::log(t_.rng().uniform()) - alpha_g;
    };
    if (!exact_) draw_u();
    std::vector<uint32_t>* order_ptr = exact_ ? nullptr : &t_.section_order(border_, n);
    Rng* order_rng = exact_ ? nullptr : &st_.order_rng(t_);
    double proxy_sum = 0;
    for (size_t i = 0, first = 0; i < border_->plate_children; ++i) {
      auto* p = as_plate(border_->children[i]);
      plates_.emplace_back().plate = p;
      plates_.back().first = first;
      if (!exact_ && fused_weights(plates_.back())) {
        plates_.back().changes = true;
        if (opts_.proxies) proxy_sum += use_proxy(plates_.back());
      }
      first += p->rows;
    }
    bool proxied =
        std::any_of(plates_.begin(), plates_.end(), [](const PlateVisit& pv) { return pv.proxy != nullptr; });
    st_.stats.proxy_decisions += proxied ? 1 : 0;
    plate_rows_ = plate_rows(border_);
    size_t drawn = 0;
    // With control variates the test decides mean(l_i - p_i) >= mu0 - sum(p_i)/N: the same decision, since
    // sum(p_i) over all N sections is known (node sections have p_i = 0).
    auto mu0 = [&] {
      const double m = target / static_cast<double>(n);
      return std::isnan(m) ? std::numeric_limits<double>::infinity()
                           : std::isfinite(m) ? m - proxy_sum / static_cast<double>(n) : m;
    };
    SequentialTestConfig cfg{mu0(), n, opts_.batch, opts_.epsilon, opts_.min_batches, opts_.spending};
    std::array<double, 256> small;
    std::vector<double> large(opts_.batch > small.size() ? std::min(opts_.batch, n) : 0);
    double* out = large.empty() ? small.data() : large.data();
    if (exact_) {
      // Every section, in order, before u: exact mh's general path draws u after regenerating the whole scaffold,
      // so a section with brush or a choice to resample draws the same numbers here as there.
      for (; drawn < n; ++drawn) visit_section(drawn, drawn, out);
      score_plates(out);
      // All N l_i are in this one mini-batch, and the decision must be the general path's: there a NaN l_i makes
      // log alpha NaN, a rejection without u; the test would stop the [infer].
      if (std::any_of(out, out + n, [](double l) { return std::isnan(l); })) impossible_ = true;
      if (!impossible_) {
        alpha_g = global_weight();
        draw_u();
        cfg.mu0 = mu0();
      }
    }
    // A section that fails under the proposed value rejects the move whatever the others are, as regen's failure
    // does in exact mh; even an impossible current state (l_i = +inf) is not left for it.
    if (!impossible_) test.emplace(cfg, st_.cache());
    while (test && !test->done()) {
      const size_t k = test->next_batch_size();
      if (!exact_) {
        // Incremental Fisher-Yates: a uniform draw without replacement, O(1) per section. The swap partners
        // are drawn for the whole mini-batch first (the same draws in the same order) and fetched together.
        // Partners are kept for the whole transition: a failure swaps them back (the order is the trace's).
        std::vector<uint32_t>& order = *order_ptr;
        swap_with_.resize(drawn + k);
        for (size_t j = drawn; j < drawn + k; ++j) {
          swap_with_[j] = j + order_rng->below(n - j);
          __builtin_prefetch(&order[swap_with_[j]]);
        }
        for (size_t j = 0; j < k; ++j) {
          std::swap(order[drawn], order[swap_with_[drawn]]);
          swapped_ = drawn + 1;
          visit_section(order[drawn++], j, out);
        }
        score_plates(out);
        if (impossible_) break;
      }
      for (size_t j = 0; j < k; ++j) {
        test->add(out[j]);
        drawn_sum_ += out[j];
      }
      test->end_batch();
      // Rows scored beyond the test's first look are charged to the proxies being rented (with eps = 0 every
      // decision needs every row, and proxies cannot change that).
      if (opts_.epsilon == 0 || test->result().batches <= opts_.min_batches) continue;
      for (PlateVisit& pv : plates_)
        if (pv.renting != nullptr) pv.renting->excess += static_cast<double>(pv.batch_rows);
      if (test->done() || !switch_proxies()) continue;
      // A new test on the sections not drawn yet: sum(l_i) >= target over all of them, less what is known.
      double unseen = 0;  // the proxies' change over the sections not drawn yet
      for (const PlateVisit& pv : plates_) unseen += pv.proxy_total - pv.proxy_seen;
      cfg.population = n - drawn;
      cfg.mu0 = (target - drawn_sum_ - unseen) / static_cast<double>(cfg.population);
      test.emplace(cfg, st_.cache());
      st_.stats.proxy_decisions += proxied ? 0 : 1;
      proxied = true;
    }
    // The one allocation an accept needs, made while a failure can still put the old state back.
    if (!impossible_ && test->result().accept) t_.stale_borders().try_emplace(border_, 0);
  } catch (...) {
    // In the order of a rejection: the border gets its old value back first. Restored while it still had the
    // proposed one, a section would recompute its deterministic nodes from that value, or ask (mem z) for the
    // family of the proposed key, which no Db holds. Not after a section's restore failed (out of memory): the
    // trace is poisoned, and what the sections hold may be half put back.
    if (!t_.poisoned()) t_.must_complete([&] {
      Db xi_db(t_);
      detach_unscored(t_, global, xi_db);
      regen_and_attach(t_, global, true, rho_db);
      restore_sections();
      for (Section& s : visited_) put_back_stale(s);
      restore_in_place();
    });
    if (swapped_ > 0) {  // the order as it was, so the session goes on as if the transition had not run
      std::vector<uint32_t>& order = t_.section_order(border_, n);
      for (size_t j = swapped_; j-- > 0;) std::swap(order[j], order[swap_with_[j]]);
    }
    throw;
  }
  st_.stats.sections_total += n;
  if (!impossible_ && test->result().accept) {
    // Step 6: keep everything; the n - drawn unvisited sections are now stale.
    border_->version = t_.next_border_version(*border_);
    size_t seen = chains_.size();
    for (Section& s : visited_) {
      for (Section::Root& r : s.roots) r.node->version = border_->version;
      for (Node* r : s.new_roots) r->version = border_->version;
      seen += s.roots.size();
    }
    for (const InPlace& s : in_place_) {
      for (Node* r : s.dag->roots()) r->version = border_->version;
      seen += s.dag->roots().size();
      procedures_ |= s.dag->changes_procedures(saved_.begin() + static_cast<std::ptrdiff_t>(s.saved));
    }
    const Value* values = chain_values_.data();
    for (const SectionChain& c : chains_) {
      procedures_ |= c.commit(new_value_, values);
      values += c.links();
      c.root()->version = border_->version;
    }
    for (PlateVisit& pv : plates_) {
      // A plate stores no computed value, only its total, known again only if every row was scored at the new
      // value (rows scored by their change are not: plate_total recomputes it if anything asks).
      pv.plate->total = pv.new_sum;
      pv.plate->total_valid = !pv.changes && pv.visited == pv.plate->rows;
    }
    auto& stale = t_.stale_borders();
    const size_t node_sections = n - plate_rows_;
    if (seen < node_sections)
      stale[border_] = node_sections - seen;
    else
      stale.erase(border_);
    return true;
  }
  // Reject: the global section first (the border gets its old value back), then the visited sections.
  if (impossible_ && before_u) t_.rng() = *before_u;  // exact mh rejects such a move without drawing u
  Db xi_db(t_);
  detach_unscored(t_, global, xi_db);
  regen_and_attach(t_, global, true, rho_db);
  restore_sections();  // stale sections visited were repaired (and counted) by refresh_section
  restore_in_place();
  return false;
}

}  // namespace

bool subsampled_transition(Trace& t, const BlockSpec& spec, const SubsampledOptions& opts, SubsampledState& st,
                           const BlockChoice& choice, const BorderInfo& info, bool exact) {
  Transition transition(t, spec, opts, st);
  transition.exact_ = exact;
  return transition.run(choice, choice.principals[0], info);
}

}  // namespace vnt
