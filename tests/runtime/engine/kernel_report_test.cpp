// The kernel report: one record per kernel of each [infer], with its transitions, acceptances and the data
// subsampled_mh touched; its table, and its copy in the public API.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/core/diagnostics.hpp"
#include "tests/support/engine_fixture.hpp"
#include "vnt/vnt.hpp"

namespace vnt::kernel_report_tests {
namespace {

/// mu with a normal prior and n observations (normal mu 1) of 1 + small offsets, loaded as plate rows.
void normal_data(Engine& e, int n) {
  test::run(e, "[assume mu (scope_include 'mu 0 (normal 0 1))]\n[assume y (lambda () (normal mu 1))]\n");
  for (int i = 0; i < n; ++i) e.observe_apply("y", {}, Value(1.0 + 0.001 * (i % 7)));
}

void check_counts(const KernelRecord& r, uint64_t transitions) {
  CHECK(r.transitions == transitions);
  CHECK(r.accepted <= r.transitions);
  CHECK(r.sections_visited <= r.sections_total);
  CHECK(r.subsampled_transitions + r.exact_transitions <= r.transitions);
}

TEST_CASE("mh: one record per kernel occurrence, counting every transition it made") {
  Engine e(2);
  test::run(e,
            "[assume mu (normal 0 1)]\n[observe (normal mu 1) 1.2]\n"
            "[infer (repeat 10 (do (mh default one 3) (cycle ((mh default all 'drift 0.5 1)) 2)))]\n"
            "[infer 25]\n",
            "model.vnt");
  const auto& rs = e.kernel_reports();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].kernel == "mh");
  CHECK(rs[0].scope == "default");
  CHECK(rs[0].block == "one");
  CHECK(span_location(rs[0].span) == "model.vnt:3:23");
  check_counts(rs[0], 30);
  CHECK(rs[1].block == "all");
  check_counts(rs[1], 20);
  // A bare [infer N] is (mh default one N), located at N; the second directive has its own record.
  CHECK(rs[2].kernel == "mh");
  CHECK(rs[2].block == "one");
  CHECK(span_location(rs[2].span) == "model.vnt:4:8");
  check_counts(rs[2], 25);
  for (const KernelRecord& r : rs) {
    CHECK(r.accepted > 0);  // with one observation, the prior proposals are often accepted
    CHECK(r.subsampled_transitions == 0);
    CHECK(r.sections_total == 0);
    CHECK(r.exact_transitions == 0);
  }
}

TEST_CASE("subsampled_mh 'eps_per 'decision spends eps over a decision's looks: more data per decision") {
  // Spread data, so the test must weigh the evidence; the same seed and program but for the option.
  auto touched = [](const std::string& option) {
    Engine e(8);
    test::run(e, "[assume mu (scope_include 'mu 0 (normal 0 1))]\n[assume y (lambda () (normal mu 1))]\n");
    for (int i = 0; i < 3000; ++i) e.observe_apply("y", {}, Value(1.0 + 2.0 * std::sin(0.7 * i)));
    test::run(e, "[infer (subsampled_mh mu all 50 0.05 'drift 0.2 150" + option + ")]\n");
    const KernelRecord& r = e.kernel_reports().at(0);
    check_counts(r, 150);
    CHECK(r.subsampled_transitions == 150);
    return r.sections_visited;
  };
  const uint64_t by_default = touched(""), per_test = touched(" 'eps_per 'test"),
                 per_decision = touched(" 'eps_per 'decision");
  CHECK(by_default == per_test);  // the paper's rule is the default
  // Each look's threshold is higher (eps_k = 6 eps / (pi^2 k^2) < eps), so decisions need more sections.
  CHECK(per_decision > per_test + per_test / 4);
}

TEST_CASE("a program that fails its checks adds no record, one that runs keeps counting across directives") {
  Engine e(1);
  test::run(e, "[assume mu (normal 0 1)]\n");
  CHECK_THROWS_AS(test::run(e, "[infer (do (mh default one 3) (mh nope one 3))]\n"), Error);
  CHECK(e.kernel_reports().empty());
  test::run(e, "[infer (mh default one 0)]\n[infer (mixture (1 (mh default one 1) 3 (mh default all 1)) 40)]\n");
  const auto& rs = e.kernel_reports();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].transitions == 0);
  CHECK(rs[1].transitions + rs[2].transitions == 40);
  CHECK(rs[1].transitions > 0);
  CHECK(rs[2].transitions > 0);
}

TEST_CASE("subsampled_mh: with eps > 0 a big N is partly touched, with eps = 0 all of it") {
  constexpr int kN = 2000;
  Engine e(3);
  normal_data(e, kN);
  test::run(e,
            "[infer (subsampled_mh mu all 50 0.05 'drift 0.5 40)]\n"
            "[infer (subsampled_mh mu all 500 0 'drift 0.5 10)]\n");
  const auto& rs = e.kernel_reports();
  REQUIRE(rs.size() == 2);
  const KernelRecord& sub = rs[0];
  CHECK(sub.kernel == "subsampled_mh");
  CHECK(sub.scope == "mu");
  CHECK(sub.block == "all");
  check_counts(sub, 40);
  CHECK(sub.subsampled_transitions == 40);
  CHECK(sub.exact_transitions == 0);
  CHECK(sub.sections_total == 40u * kN);
  CHECK(sub.sections_visited >= 40u * 50u);  // at least one mini-batch per transition
  CHECK(sub.sections_visited < sub.sections_total);
  const KernelRecord& exact = rs[1];
  check_counts(exact, 10);
  CHECK(exact.subsampled_transitions == 10);
  CHECK(exact.sections_total == 10u * kN);
  CHECK(exact.sections_visited == exact.sections_total);

  std::string table = format_kernel_report(rs);
  CHECK(table.find("kernel") == 0);
  CHECK(table.find(fmt::format("of N (mean {} of {} sections)", kN, kN)) != std::string::npos);
}

TEST_CASE("subsampled_mh: transitions made by exact mh are counted, with no border or with 'fallback 'mh") {
  Engine e(4);
  test::run(e,
            "[assume a (scope_include 'a 0 (normal 0 1))]\n[observe (normal a 1) 0.3]\n"
            "[assume w0 (scope_include 'w 0 (normal 0 1))]\n[assume w1 (scope_include 'w 1 (normal 0 1))]\n"
            "[assume f (lambda (x) (normal (+ w0 (* w1 x)) 1))]\n"
            "[observe (f 1) 0.5]\n[observe (f 2) 1.5]\n[observe (f 3) 2.0]\n");
  std::vector<std::string> warnings;
  e.trace().set_warning_sink([&](const std::string& m) { warnings.push_back(m); });
  // a has a single child: no border, N <= 1. `w all` selects two random choices, so it cannot be subsampled
  // and 'fallback 'mh makes every transition an exact one.
  test::run(e, "[infer (subsampled_mh a all 10 0.01 15)]\n"
               "[infer (subsampled_mh w all 2 0.05 'drift 0.2 12 'fallback 'mh)]\n");
  const auto& rs = e.kernel_reports();
  REQUIRE(rs.size() == 2);
  check_counts(rs[0], 15);
  check_counts(rs[1], 12);
  for (const KernelRecord& r : rs) {
    CHECK(r.exact_transitions == r.transitions);
    CHECK(r.subsampled_transitions == 0);
    CHECK(r.sections_total == 0);
  }
  CHECK(warnings.size() == 1);  // the fallback is reported once per kernel
  std::string table = format_kernel_report(rs);
  CHECK(table.find("exact mh in 15 of 15 transitions") != std::string::npos);
  CHECK(table.find("exact mh in 12 of 12 transitions") != std::string::npos);
}

TEST_CASE("the table: aligned columns, rates, and data touched only when a kernel subsampled") {
  CHECK(format_kernel_report({}).empty());
  KernelRecord mh{"mh", "default", "one", {}, 2000, 824, 0, 0, 0, 0};
  KernelRecord sub{"subsampled_mh", "w", "all", {}, 2000, 366, 1990, 6169000, 19900000, 10};
  KernelRecord idle{"mh", "z", "2", {}, 0, 0, 0, 0, 0, 0};
  std::vector<KernelRecord> only_mh{mh, idle};
  CHECK(format_kernel_report(only_mh) ==
        "kernel          transitions  accepted\n"
        "mh default one         2000     0.412\n"
        "mh z 2                    0         -\n");
  std::vector<KernelRecord> both{mh, sub};
  CHECK(format_kernel_report(both) ==
        "kernel               transitions  accepted  data touched\n"
        "mh default one              2000     0.412\n"
        "subsampled_mh w all         2000     0.183  0.31 of N (mean 3100 of 10000 sections); "
        "exact mh in 10 of 2000 transitions\n");
}

TEST_CASE("the public API gives the same report") {
  vnt::Options o;
  o.seed = 5;
  vnt::Runtime rt(o);
  CHECK(rt.kernel_reports().empty());
  rt.assume("mu", "(normal 0 1)");
  rt.observe("(normal mu 1)", 0.7);
  rt.infer("(repeat 5 (mh default one 4))");
  rt.execute("[infer 3]", "prog.vnt");
  std::vector<vnt::KernelReport> rs = rt.kernel_reports();
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].kernel == "mh");
  CHECK(rs[0].scope == "default");
  CHECK(rs[0].block == "one");
  CHECK(rs[0].location.ends_with(":1:11"));
  CHECK(rs[0].transitions == 20);
  CHECK(rs[0].accepted <= 20);
  CHECK(rs[1].location == "prog.vnt:1:8");
  CHECK(rs[1].transitions == 3);
  CHECK(rs[1].exact_transitions == 0);
}

TEST_CASE("mixture: weights whose sum overflows to inf still choose in proportion (not always the last)") {
  Engine e(3);
  test::run(e,
            "[assume a (scope_include 'a 0 (normal 0 1))]\n[assume b (scope_include 'b 0 (normal 0 1))]\n"
            "[infer (mixture (1e308 (mh a all 1) 1e308 (mh b all 1)) 400)]\n");
  const auto& rs = e.kernel_reports();
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].transitions + rs[1].transitions == 400);
  CHECK(rs[0].transitions > 150);  // about 200 each
  CHECK(rs[1].transitions > 150);
}

}  // namespace
}  // namespace vnt::kernel_report_tests
