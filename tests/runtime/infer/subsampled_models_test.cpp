// subsampled_mh on the paper's model shapes, structurally: dependent local sections (state-space phi), and
// every reader of a stale local section (predict, sample, collect, observe, forget, exact mh on the border's
// parameter and on other choices) sees fresh values. Posteriors are in tests/stat/subsampled_*_test.cpp.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <fmt/format.h>

#include "runtime/regen/border_reach.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/section_chain.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/regen/refresh.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::subsampled_models_tests {
namespace {

using test::block;

/// The border of the one principal node of a block given by value or `all` (neither draws from the rng).
BorderInfo border_of(Engine& e, const BlockSpec& spec) {
  const BlockChoice c = select_block(e.trace(), spec);
  REQUIRE(c.principals.size() == 1);
  return find_border(c.principals[0]);
}

/// Children of `border` whose values were computed from an older border value.
size_t stale_children(Node* border) {
  size_t n = 0;
  for (Node* c : border->children) n += c->version != border->version ? 1 : 0;
  return n;
}

/// The trace's record of stale sections for `border` (what makes reads repair them) against the truth.
void check_stale_record(Engine& e, Node* border) {
  auto& stale = e.trace().stale_borders();
  const auto it = stale.find(border);
  CHECK((it == stale.end() ? 0 : it->second) == stale_children(border));
}

/// The values of all random choices, in the trace's own order (the same in two engines run in lockstep).
std::vector<Value> choice_values(Engine& e) {
  std::vector<Value> out;
  for (Node* n : e.trace().random_choices().items()) out.push_back(n->value);
  return out;
}

bool same_values(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!values_equal(a[i], b[i])) return false;
  return true;
}

// ---- The state-space model of the paper's section 4.3 (phi and the latent h_t) -------------------------------

constexpr int kT = 200;

std::string state_space_program() {
  std::string p = R"(
[assume phi (scope_include 'phi 0 (beta 5 1))]
[assume sig 0.3]
[assume h (mem (lambda (t) (if (<= t 0) 0 (normal (* phi (h (- t 1))) sig))))]
[assume x (lambda (t) (normal (h t) 0.5))]
)";
  Rng rng(17);
  double h = 0;
  for (int t = 1; t <= kT; ++t) {
    h = 0.9 * h + 0.3 * rng.normal();
    p += fmt::format("[observe (x {}) {}]\n", t, h + 0.5 * rng.normal());
  }
  return p;
}

TEST_CASE("state-space phi: the border has one child per time step and the paper's cycle stays repairable") {
  Engine e(3);
  test::run(e, state_space_program());
  const BlockSpec phi = block("phi", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0));
  const BorderInfo b = border_of(e, phi);
  CHECK(b.problem.empty());
  REQUIRE(b.border != nullptr);
  CHECK(b.n == kT);  // every (* phi (h (- t 1))) is its own local section: N = T
  // inconsistent_nodes counts the (mem ...) application once even in a fresh trace: re-running mem makes a new
  // procedure, never equal to the old one. That count is the baseline of a consistent trace.
  const size_t consistent = test::inconsistent_nodes(e);
  CHECK(consistent <= 1);
  // The paper's form without 'fallback: a precondition failure in any transition would throw here.
  test::run(e, "[infer (cycle ((subsampled_mh phi 0 20 0.05 'drift 0.05 1) (mh default one 5)) 3000)]");
  check_stale_record(e, b.border);
  // The run leaves stale sections (so the repair below is not vacuous) ...
  CHECK(stale_children(b.border) > 0);
  CHECK(test::inconsistent_nodes(e) > consistent);
  // ... and the full repair makes every deterministic node agree with its inputs again.
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == consistent);
  CHECK(e.trace().stale_borders().empty());
  CHECK(stale_children(b.border) == 0);
}

/// Runs `cycles` cycles of (subsampled moves on `sub`, then 5 exact `latent` moves) on two engines with the same
/// seed: `eager` repairs every stale section after each subsampled move (the O(N) make_consistent), `lazy`
/// relies on repair on read. Any read of a stale value by a later kernel in `lazy` changes an acceptance ratio,
/// so decisions and values must agree exactly at every step. Returns how many stale sections the exact moves of
/// `lazy` repaired (to show the comparison is not vacuous).
size_t lazy_equals_eager(const std::string& program, std::span<const BlockSpec> sub, const MhOptions& exact,
                         int cycles) {
  Engine lazy(11), eager(11);
  test::run(lazy, program);
  test::run(eager, program);
  SubsampledOptions so{.batch = 20, .epsilon = 0.05, .drift_sigma = 0.05};
  std::vector<SubsampledState> sl(sub.size()), se(sub.size());
  const BlockSpec latent = block("default", BlockSpec::Mode::kOne, "mh");
  std::vector<Node*> borders;
  for (const BlockSpec& s : sub) borders.push_back(border_of(lazy, s).border);
  auto stale = [&] {
    size_t n = 0;
    for (Node* b : borders) n += stale_children(b);
    return n;
  };
  size_t repaired_by_mh = 0, max_stale = 0, stale_repairs = 0;
  for (int c = 0; c < cycles; ++c) {
    INFO("cycle " << c);
    for (size_t k = 0; k < sub.size(); ++k) {
      REQUIRE(subsampled_mh_transition(lazy.trace(), sub[k], so, sl[k]) ==
              subsampled_mh_transition(eager.trace(), sub[k], so, se[k]));
      refresh_all(eager.trace());
    }
    for (int m = 0; m < 5; ++m) {
      const size_t before = stale();
      max_stale = std::max(max_stale, before);
      const bool a = mh_transition(lazy.trace(), latent, exact);
      repaired_by_mh += before - stale();
      REQUIRE(a == mh_transition(eager.trace(), latent, exact));
    }
    REQUIRE(same_values(choice_values(lazy), choice_values(eager)));
  }
  for (size_t k = 0; k < sub.size(); ++k) {
    check_stale_record(lazy, borders[k]);
    stale_repairs += sl[k].stats.stale_repairs;
    CHECK(se[k].stats.stale_repairs == 0);
  }
  MESSAGE("max stale sections " << max_stale << ", repaired by exact mh " << repaired_by_mh << ", by subsampled_mh "
                                << stale_repairs);
  CHECK(max_stale > kT / 2);
  CHECK(stale_repairs > 0);
  return repaired_by_mh;
}

const BlockSpec kPhi = block("phi", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0));

// If an exact latent move on h_t read a stale (* phi h_{t-1}) -- the mean of its own prior proposal, or of
// h_{t+1}'s density -- its acceptance ratio would differ from the eager engine's and the chains would part.
TEST_CASE("state-space phi: exact latent moves on the general mh path read stale sections fresh") {
  MhOptions general;
  general.allow_partition = false;
  CHECK(lazy_equals_eager(state_space_program(), std::span(&kPhi, 1), general, 1500) > 100);
}

// h_t has a border of its own (the (h t) family feeds x_t and h_{t+1}), so exact mh on it goes through
// partitioned_mh_transition, whose sections must repair what they read from other borders' stale sections (the
// section of h_{t+1} reads (* phi h_t) through phi's lookup). Before that repair the chains parted at cycle 210.
TEST_CASE("state-space phi: exact latent moves on the partitioned mh path read stale sections fresh") {
  CHECK(lazy_equals_eager(state_space_program(), std::span(&kPhi, 1), MhOptions{}, 1500) > 100);
}

// The paper's Fig. 7 (bottom) shape, with sig random and both parameters subsampled. A section of phi ends in
// normal(h_t; (* phi h), sig), whose sig operand is the root of a section of sig's border; after an accepted sig
// move it is stale and must be repaired before phi's section is scored. Without it the chains parted at cycle 61.
TEST_CASE("state-space phi and sig both subsampled: each kernel reads the other's stale sections fresh") {
  std::string program = state_space_program();
  const std::string fixed = "[assume sig 0.3]";
  program.replace(program.find(fixed), fixed.size(), "[assume sig (scope_include 'sig 0 (sqrt (inv_gamma 5 0.05)))]");
  const BlockSpec both[] = {block("sig", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0)), kPhi};
  MhOptions general;
  general.allow_partition = false;
  lazy_equals_eager(program, both, general, 1500);
}

// Three borders. Each datum of w is (normal (* (+ u 0.1) (+ w x)) 1): w's sections read (+ u 0.1), a section of u's.
// z's stale sections make w's kernel note what its sections' inputs can read (FreshWatch) before u has ever moved,
// so its notes do not have u's sections. u's first accepted move makes them stale roots: w's kernel must note
// again. Without that the chains parted at cycle 21.
TEST_CASE("a border's first accepted move makes other kernels look again for what their sections read") {
  std::string program = R"(
[assume z (scope_include 'z 0 (normal 0 1))]
[assume w (scope_include 'w 0 (normal 0 1))]
[assume u (scope_include 'u 0 (normal 0 1))]
)";
  Rng rng(23);
  for (int i = 0; i < kT; ++i) {
    const double x = rng.normal(), x2 = rng.normal();
    program += fmt::format("[observe (normal (* z {}) 1) {}]\n", x, 0.5 * x + rng.normal());
    program += fmt::format("[observe (normal (* (+ u 0.1) (+ w {})) 1) {}]\n", x2, 0.3 * (x2 - 0.2) + rng.normal());
  }
  const BlockSpec blocks[] = {block("z", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0)),
                              block("w", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0)),
                              block("u", BlockSpec::Mode::kValue, "subsampled_mh", Value(0.0))};
  // No latent moves between the kernels (lazy_equals_eager's would move the shape, and the notes would be made
  // again anyway).
  Engine lazy(11), eager(11);
  test::run(lazy, program);
  test::run(eager, program);
  // z and u leave many sections stale, u's far from their fresh values; w visits every section (eps = 0), so each
  // of its decisions reads u's sections.
  SubsampledOptions so[3];
  for (SubsampledOptions& o : so) {
    o.batch = 20;
    o.epsilon = 0.2;
    o.drift_sigma = 0.3;
  }
  so[1].epsilon = 0;
  so[1].drift_sigma = 0.05;
  SubsampledState sl[3], se[3];
  auto step = [&](size_t k) {
    REQUIRE(subsampled_mh_transition(lazy.trace(), blocks[k], so[k], sl[k]) ==
            subsampled_mh_transition(eager.trace(), blocks[k], so[k], se[k]));
    refresh_all(eager.trace());
  };
  Node* const z_border = border_of(lazy, blocks[0]).border;
  Node* const u_border = border_of(lazy, blocks[2]).border;
  // In this order: z's stale sections, w's kernel noting (u has no version yet), u's first accepted move.
  for (int i = 0; i < 100 && stale_children(z_border) == 0; ++i) step(0);
  REQUIRE(stale_children(z_border) > 0);
  step(1);
  for (int i = 0; i < 100 && stale_children(u_border) == 0; ++i) step(2);
  REQUIRE(stale_children(u_border) > 0);
  size_t stale_u = 0;  // u's stale sections w's kernel met
  for (int c = 0; c < 300; ++c) {
    INFO("cycle " << c);
    for (size_t k = 0; k < 3; ++k) {
      if (k == 1) stale_u += stale_children(u_border);
      step(k);
    }
    REQUIRE(same_values(choice_values(lazy), choice_values(eager)));
  }
  CHECK(stale_u > 300 * kT / 4);
}

// ---- Every other reader of a stale section (logistic regression, Fig. 3) ------------------------------------

struct Datum {
  double x0, x1;
  bool y;
};

std::vector<Datum> logistic_data(int n, uint64_t seed) {
  Rng rng(seed);
  std::vector<Datum> out(static_cast<size_t>(n));
  for (Datum& d : out) {
    d.x0 = rng.normal();
    d.x1 = rng.normal();
    d.y = rng.uniform() < 1 / (1 + std::exp(-(0.5 + 1.5 * d.x0 - d.x1)));
  }
  return out;
}

// p1..p3 are deterministic children of w's border (local sections with no absorbing node), and p2 also feeds
// the density of an observation of another random choice a, so exact mh on a reads it.
std::string logistic_readers_program() {
  std::string p = R"(
[assume w (scope_include 'w 0 (multivariate_normal (vector 0 0 0) (id_matrix 3)))]
[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]
[assume p1 (linear_logistic w (vector 0.3 -0.2))]
[assume p2 (linear_logistic w (vector -1 2))]
[assume p3 (linear_logistic w (vector 2 0.5))]
[assume a (normal 0 1)]
[observe (normal (+ a p2) 1) 0.5]
)";
  int i = 0;
  for (const Datum& d : logistic_data(120, 6))
    p += fmt::format("o{}: [observe (y_x (vector {} {})) {}]\n", i++, d.x0, d.x1, d.y ? 1 : 0);
  return p;
}

/// linear_logistic of the current w (read from its random choice, never stale) and (x0, x1), recomputed here.
double fresh_p(Engine& e, double x0, double x1) {
  const Eigen::VectorXd& w = *std::get<VectorPtr>(e.report("w"));
  return 1 / (1 + std::exp(-(w[0] + w[1] * x0 + w[2] * x1)));
}

/// The value the assume `name` holds in the trace right now, read without any repair.
double raw_value(Engine& e, const std::string& name) {
  for (const DirectiveRecord& r : e.directives())
    if (r.name == name) return std::get<double>(r.root->value);
  FAIL("no assume named " << name);
  return 0;
}

const Expr* expression(Engine& e, const std::string& text) {
  auto file = std::make_shared<const SourceFile>(SourceFile{"<expr>", text});
  return e.keep(analyze_expression(parser::parse_expression(file), {}));
}

const BlockSpec kW = block("w", BlockSpec::Mode::kAll, "subsampled_mh");

/// A long subsampled run on w that leaves many sections stale.
void subsample_w(Engine& e, int transitions) {
  SubsampledOptions so{.batch = 5, .epsilon = 0.2, .drift_sigma = 0.5};
  SubsampledState state;
  for (int i = 0; i < transitions; ++i) subsampled_mh_transition(e.trace(), kW, so, state);
  REQUIRE(state.stats.accepted > 10);
  REQUIRE(state.stats.sections_visited < state.stats.sections_total / 4);
}

// Each reader is checked against the value recomputed here from the current w, after checking that the value
// stored in the trace is stale (so a reader that skipped the repair would fail the check).
TEST_CASE("after a long subsampled run predict and sample and collect read fresh values") {
  Engine e(9);
  test::run(e, logistic_readers_program());
  subsample_w(e, 400);
  Node* border = border_of(e, kW).border;
  REQUIRE(border != nullptr);
  check_stale_record(e, border);
  CHECK(stale_children(border) > 60);
  const double f1 = fresh_p(e, 0.3, -0.2), f2 = fresh_p(e, -1, 2), f3 = fresh_p(e, 2, 0.5);
  CHECK(std::abs(raw_value(e, "p1") - f1) > 1e-6);
  CHECK(std::abs(raw_value(e, "p2") - f2) > 1e-6);
  CHECK(std::abs(raw_value(e, "p3") - f3) > 1e-6);
  CHECK(std::get<double>(e.predict(expression(e, "p1"))) == doctest::Approx(f1).epsilon(1e-12));
  CHECK(std::get<double>(e.predict(expression(e, "(* 2 p1)"))) == doctest::Approx(2 * f1).epsilon(1e-12));
  CHECK(test::sample_number(e, "p2") == doctest::Approx(f2).epsilon(1e-12));
  CHECK(test::sample_number(e, "(+ p2 (linear_logistic w (vector 1 1)))") ==
        doctest::Approx(f2 + fresh_p(e, 1, 1)).epsilon(1e-12));
  test::run(e, "[infer (collect p3)]");
  REQUIRE(e.draws().columns().size() == 1);
  CHECK(e.draws().column(0).back() == doctest::Approx(f3).epsilon(1e-12));
  check_stale_record(e, border);
}

TEST_CASE("observing a new datum and forgetting observations keep the stale record exact") {
  Engine e(9);
  test::run(e, logistic_readers_program());
  subsample_w(e, 400);
  Node* border = border_of(e, kW).border;
  const size_t n = border->children.size(), stale_before = stale_children(border);
  const size_t inconsistent_before = test::inconsistent_nodes(e);
  REQUIRE(stale_before > 60);
  // A new observation is computed from the current w: its section is fresh, and it adds no inconsistent node.
  test::run(e, "new: [observe (y_x (vector 0.7 -0.4)) 1]");
  CHECK(border->children.size() == n + 1);
  CHECK(border->children.back()->version == border->version);
  CHECK(stale_children(border) == stale_before);
  CHECK(test::inconsistent_nodes(e) == inconsistent_before);
  check_stale_record(e, border);
  // Forgetting observations, stale or not, removes their sections from the record too (a count left too high
  // never empties; one too low would stop repairs while stale sections remain).
  for (int i = 0; i < 120; i += 7) test::run(e, fmt::format("[forget o{}]", i));
  test::run(e, "[forget new]");
  CHECK(border->children.size() == n - 18);
  check_stale_record(e, border);
  CHECK(test::inconsistent_nodes(e) < inconsistent_before);
  // The chain goes on over the changed border, and the trace can still be made fully consistent.
  subsample_w(e, 200);
  check_stale_record(e, border);
  refresh_all(e.trace());
  CHECK(test::inconsistent_nodes(e) == 0);
}

// Exact mh on w (its partitioned path scores every section, repairing the stale ones) and on a, whose
// observation reads the stale p2: lazy and eager repair must make the same decisions.
TEST_CASE("after subsampled moves exact mh on w and on a reader of a stale value decides as with eager repair") {
  Engine lazy(5), eager(5);
  test::run(lazy, logistic_readers_program());
  test::run(eager, logistic_readers_program());
  SubsampledOptions so{.batch = 5, .epsilon = 0.2, .drift_sigma = 0.5};
  SubsampledState sl, se;
  const BlockSpec any = block("default", BlockSpec::Mode::kOne, "mh");
  int exact_accepts = 0;
  for (int c = 0; c < 400; ++c) {
    INFO("cycle " << c);
    for (int k = 0; k < 3; ++k)
      REQUIRE(subsampled_mh_transition(lazy.trace(), kW, so, sl) ==
              subsampled_mh_transition(eager.trace(), kW, so, se));
    refresh_all(eager.trace());
    const bool a = mh_transition(lazy.trace(), any, {});
    REQUIRE(a == mh_transition(eager.trace(), any, {}));
    exact_accepts += a ? 1 : 0;
    REQUIRE(same_values(choice_values(lazy), choice_values(eager)));
  }
  CHECK(sl.stats.stale_repairs > 0);
  CHECK(exact_accepts > 20);
  refresh_all(lazy.trace());
  CHECK(test::inconsistent_nodes(lazy) == 0);
}

// ---- A mixture of experts whose assignments are resampled (the paper's joint DPM, Fig. 7, with K = 4) --------

constexpr int kExperts = 4, kPoints = 24;

// w(k) has one border per expert, whose children are the (w (z i)) applications of the points now assigned to
// k: each such child takes its value from the family of key k by its ESR, so its local section is not a chain
// and takes the general (detach and regenerate) path. A move of z_i makes (w (z i)) leave one border for another,
// or for a new family drawn from the prior when no point had that expert; the family of an expert whose last
// point leaves is dropped, with its scope block.
std::string experts_program() {
  std::string p = R"(
[assume w (mem (lambda (k) (scope_include 'w k (multivariate_normal (vector 0 0 0) (id_matrix 3)))))]
[assume z (mem (lambda (i) (scope_include 'z i (categorical (vector 0.1 0.2 0.3 0.4)))))]
[assume y (lambda (i x) (bernoulli (linear_logistic (w (z i)) x)))]
)";
  const double truth[kExperts][3] = {{-0.5, 2, 0.5}, {0.5, -1.5, 1.5}, {0, 1, -2}, {1, 0.5, 0.5}};
  Rng rng(23);
  for (int i = 0; i < kPoints; ++i) {
    const double* t = truth[i % kExperts];
    const double x0 = rng.normal(), x1 = rng.normal();
    const bool y = rng.uniform() < 1 / (1 + std::exp(-(t[0] + t[1] * x0 + t[2] * x1)));
    p += fmt::format("[observe (y {} (vector {} {})) {}]\n", i, x0, x1, y ? 1 : 0);
  }
  return p;
}

BlockSpec expert(int k, const char* kernel) {
  return block("w", BlockSpec::Mode::kValue, kernel, Value(static_cast<double>(k)));
}

/// The border of each w(k) now; no border (n = 0) if w(k) does not exist or has at most one point.
std::vector<BorderInfo> expert_borders(Engine& e) {
  std::vector<BorderInfo> out(kExperts);
  for (int k = 0; k < kExperts; ++k) {
    const BlockChoice c = select_block(e.trace(), expert(k, "subsampled_mh"), /*allow_empty=*/true);
    if (!c.principals.empty()) out[static_cast<size_t>(k)] = find_border(c.principals[0]);
  }
  return out;
}

/// The (border, section root) pairs of every expert now.
std::set<std::pair<Node*, Node*>> sections(Engine& e) {
  std::set<std::pair<Node*, Node*>> out;
  for (const BorderInfo& b : expert_borders(e))
    if (b.border != nullptr)
      for (Node* root : b.border->children) out.insert({b.border, root});
  return out;
}

/// How many points each expert has now (the children of w(k)'s border; 0 also for one point).
std::vector<size_t> expert_sizes(Engine& e) {
  std::vector<size_t> out;
  for (const BorderInfo& b : expert_borders(e)) out.push_back(b.n);
  return out;
}

/// How many of the w(k) exist now (an expert with no point has none).
size_t experts_in_use(Engine& e) {
  const Scope* scope = e.trace().scopes().find("w");
  return scope == nullptr ? 0 : scope->blocks().size();
}

// Proven: with eps = 0, a cycle of (subsampled_mh w k) for each expert k and exact mh moves on the assignments
// makes, transition by transition, the decisions of the same cycle with exact mh (general scaffold) on w(k), and
// leaves the same trace (structure and every value): the same random stream draws the same blocks, proposals
// and u, so a section scored wrongly, missed or counted twice after its point changed expert, or a border's
// section order that lost a child, would make some decision or value differ.
TEST_CASE("experts with resampled assignments: at eps = 0 subsampled_mh on each w(k) decides as exact mh") {
  constexpr int kCycles = 300;
  const std::string program = experts_program();
  for (const bool chains : {true, false}) {
  CAPTURE(chains);
  Engine exact(13), sub(13);
  test::run(exact, program);
  test::run(sub, program);
  // No plate rows, and every child of a border is a chain: the mem'd (w (z i)) passes on its family's value, the
  // border's, to the linear_logistic (section_chain.hpp).
  for (const BorderInfo& b : expert_borders(sub)) {
    REQUIRE(b.border != nullptr);
    CHECK(b.border->plate_children == 0);
    BorderReach reach(b.border);
    for (Node* root : b.border->children) CHECK(SectionChain().match(sub.trace(), reach, root));
  }
  SubsampledOptions so{.batch = 4, .epsilon = 0, .drift_sigma = 0.4};
  MhOptions mo;
  mo.drift_sigma = 0.4;
  mo.allow_partition = false;
  std::vector<SubsampledState> states(kExperts);
  for (SubsampledState& s : states) s.general_path_for_tests = !chains;  // the same, by the general path
  const BlockSpec assignment = block("z", BlockSpec::Mode::kOne, "mh");
  int w_accepts = 0, z_accepts = 0, size_changes = 0, dropped = 0, created = 0;
  std::vector<size_t> sizes = expert_sizes(sub);
  std::set<std::vector<size_t>> seen{sizes};
  for (int c = 0; c < kCycles; ++c) {
    INFO("cycle " << c);
    for (int k = 0; k < kExperts; ++k) {
      // Each subsampled_mh kernel splits its section-order stream off the trace's at its first transition.
      if (c == 0) exact.trace().rng().split();
      const bool a = mh_transition(exact.trace(), expert(k, "mh"), mo);
      REQUIRE(a ==
              subsampled_mh_transition(sub.trace(), expert(k, "subsampled_mh"), so, states[static_cast<size_t>(k)]));
      w_accepts += a ? 1 : 0;
    }
    for (int m = 0; m < 4; ++m) {
      const size_t in_use = experts_in_use(sub);
      const bool a = mh_transition(exact.trace(), assignment, {});
      REQUIRE(a == mh_transition(sub.trace(), assignment, {}));
      z_accepts += a ? 1 : 0;
      dropped += experts_in_use(sub) < in_use ? 1 : 0;
      created += experts_in_use(sub) > in_use ? 1 : 0;
    }
    REQUIRE(test::fingerprint_of(exact) == test::fingerprint_of(sub));
    const std::vector<size_t> now = expert_sizes(sub);
    REQUIRE(now == expert_sizes(exact));
    size_changes += now != sizes ? 1 : 0;
    sizes = now;
    seen.insert(now);
  }
  uint64_t scored = 0, partitioned = 0;
  for (const SubsampledState& s : states) {
    scored += s.stats.sections_visited;
    partitioned += s.stats.transitions - s.stats.exact_transitions;  // (and moves of an absent w(k))
    CHECK(s.stats.sections_visited == s.stats.sections_total);  // eps = 0: every section of every decision
  }
  MESSAGE("w accepts " << w_accepts << ", z accepts " << z_accepts << ", expert sizes changed in " << size_changes
                       << " cycles, " << seen.size() << " distinct; experts emptied " << dropped << ", created "
                       << created << "; sections scored " << scored << " in " << partitioned << " transitions");
  // Not vacuous: the assignments moved often, and most moves of w(k) went through the partition.
  CHECK(z_accepts > kCycles);
  CHECK(size_changes > kCycles / 2);
  CHECK(w_accepts > kCycles * kExperts / 10);
  CHECK(w_accepts < kCycles * kExperts * 9 / 10);
  CHECK(dropped > 5);
  CHECK(created > 5);
  CHECK(scored > kCycles * kPoints * 3 / 4);
  CHECK(sub.trace().stale_borders().empty());
  CHECK(test::inconsistent_nodes(sub) == test::inconsistent_nodes(exact));
  }
}

// Proven: with eps > 0 (stale sections left behind by most accepted moves), moving a point to another expert
// never reads or keeps a stale value: the assignment move must repair the point's section before its rho reads
// it, and the record of stale sections must follow the section from one border to the other. An engine that
// repairs everything after each subsampled move (eager) makes the same decisions with the same random numbers,
// the lazy one's record of stale sections is exact for every border before every assignment move, and after a
// final repair both traces are the same.
TEST_CASE("experts with resampled assignments: at eps > 0 points change expert with their stale sections repaired") {
  const std::string program = experts_program();
  Engine lazy(17), eager(17);
  test::run(lazy, program);
  test::run(eager, program);
  SubsampledOptions so{.batch = 3, .epsilon = 0.2, .drift_sigma = 0.4};
  std::vector<SubsampledState> sl(kExperts), se(kExperts);
  const BlockSpec assignment = block("z", BlockSpec::Mode::kOne, "mh");
  size_t max_stale = 0, moved_stale = 0;
  int z_accepts = 0;
  for (int c = 0; c < 300; ++c) {
    INFO("cycle " << c);
    for (int k = 0; k < kExperts; ++k) {
      const size_t i = static_cast<size_t>(k);
      REQUIRE(subsampled_mh_transition(lazy.trace(), expert(k, "subsampled_mh"), so, sl[i]) ==
              subsampled_mh_transition(eager.trace(), expert(k, "subsampled_mh"), so, se[i]));
      refresh_all(eager.trace());
    }
    for (int m = 0; m < 4; ++m) {
      for (const BorderInfo& b : expert_borders(lazy))
        if (b.border != nullptr) check_stale_record(lazy, b.border);
      std::vector<std::pair<Node*, Node*>> stale;
      for (const auto& [border, root] : sections(lazy))
        if (root->version != border->version) stale.emplace_back(border, root);
      max_stale = std::max(max_stale, stale.size());
      const bool a = mh_transition(lazy.trace(), assignment, {});
      REQUIRE(a == mh_transition(eager.trace(), assignment, {}));
      z_accepts += a ? 1 : 0;
      // Stale sections whose point left its expert (compared as pointers only: the nodes may be gone).
      const auto after = sections(lazy);
      for (const auto& pair : stale) moved_stale += after.count(pair) == 0 ? 1 : 0;
    }
    REQUIRE(same_values(choice_values(lazy), choice_values(eager)));
  }
  uint64_t repairs = 0;
  for (const SubsampledState& s : sl) repairs += s.stats.stale_repairs;
  MESSAGE("max stale sections " << max_stale << ", stale sections whose point changed expert " << moved_stale
                                << ", stale sections repaired by subsampled_mh " << repairs);
  // Not vacuous: many sections were stale, and many of them moved to another expert.
  CHECK(max_stale > kPoints / 3);
  CHECK(moved_stale > 100);
  CHECK(repairs > 100);
  CHECK(z_accepts > 200);
  refresh_all(lazy.trace());
  CHECK(test::inconsistent_nodes(lazy) == 0);
  CHECK(test::fingerprint_of(lazy) == test::fingerprint_of(eager));
}

// A stale section inside the brush of an exact move: each datum takes the branch of its flip (b i), and the branch
// reads (mu 1) or (mu 2), whose family roots are borders with a section per datum. A move on (b i) removes the
// old branch, and its observation is scored as it is removed (rho), from (* 2 (mu k)); the brush was not repaired
// before the detach, so that score read a stale value, and a rejection put the stale values back as fresh ones.
TEST_CASE("an exact move whose brush holds stale sections decides as with eager repair") {
  std::string program =
      "[assume mu (mem (lambda (k) (scope_include 'mu k (normal 0 3))))]"
      "[assume b (mem (lambda (i) (scope_include 'b i (flip 0.5))))]"
      "[assume f (lambda (i) (if (b i) (normal (* 2 (mu 1)) 1) (normal (* 2 (mu 2)) 1)))]";
  Rng rng(3);
  for (int i = 0; i < 40; ++i) program += fmt::format("[observe (f {}) {}]", i, (i % 2 ? 2.0 : -3.0) + rng.normal());
  Engine lazy(11), eager(11);
  test::run(lazy, program);
  test::run(eager, program);
  SubsampledOptions so{.batch = 3, .epsilon = 0.3, .drift_sigma = 0.3};
  SubsampledState sl, se;
  const BlockSpec mu = block("mu", BlockSpec::Mode::kOne, "subsampled_mh");
  const BlockSpec flips = block("b", BlockSpec::Mode::kOne, "mh");
  int flipped = 0;
  for (int c = 0; c < 300; ++c) {
    CAPTURE(c);
    REQUIRE(subsampled_mh_transition(lazy.trace(), mu, so, sl) == subsampled_mh_transition(eager.trace(), mu, so, se));
    refresh_all(eager.trace());
    for (int m = 0; m < 3; ++m) {
      const bool a = mh_transition(lazy.trace(), flips, {});
      REQUIRE(a == mh_transition(eager.trace(), flips, {}));
      flipped += a;
    }
    REQUIRE(same_values(choice_values(lazy), choice_values(eager)));
  }
  CHECK(flipped > 50);
  CHECK(sl.stats.accepted > 50);
  CHECK(sl.stats.exact_transitions == 0);
  refresh_all(lazy.trace());
  CHECK(test::inconsistent_nodes(lazy) == 0);
  CHECK(test::fingerprint_of(lazy) == test::fingerprint_of(eager));
}

}  // namespace
}  // namespace vnt::subsampled_models_tests
