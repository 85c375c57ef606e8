// The cost of building Taylor control variates ('proxy 'taylor) for one row of a fused logistic plate, in rows
// scored against them (LogisticProxy::residuals on a random mini-batch of 100 rows, as subsampled_mh draws
// them). subsampled_mh rebuilds the proxies when the rows its decisions needed beyond their first look have cost
// one build; LogisticProxy::build_cost is the model of this ratio, printed next to the measurement.
// Usage: bench_proxy_cost [N=1000000] [D=2]   (D features; the weights have D + 1 entries, bias first)
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/plate_proxy.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
  const int d = argc > 2 ? std::atoi(argv[2]) : 2;
  if (n < 100 || d < 1) {
    fmt::print(stderr, "usage: bench_proxy_cost [N >= 100] [D >= 1]\n");
    return 2;
  }
  vnt::Engine engine(1);
  const std::string dims = std::to_string(d + 1);
  engine.run_source(std::make_shared<const vnt::SourceFile>(vnt::SourceFile{
      "bench.vnt", "[assume w (multivariate_normal (zeros " + dims + ") (id_matrix " + dims + "))]" +
                       "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]"}));
  vnt::Rng rng(7);
  for (size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(d);
    for (int j = 0; j < d; ++j) x[j] = rng.normal();
    engine.observe_apply("y_x", {vnt::make_vector(x)}, vnt::Value(rng.uniform() < 0.5 ? 1.0 : 0.0));
  }
  vnt::Node* root = engine.directives().back().root;
  if (root == nullptr || root->kind != vnt::NodeKind::kPlate) {
    fmt::print(stderr, "bench_proxy_cost: the rows were not stored as a plate\n");
    return 1;
  }
  const vnt::PlateNode& plate = *vnt::as_plate(root);
  const Eigen::VectorXd ref = Eigen::VectorXd::Constant(d + 1, 0.1);
  Eigen::VectorXd to = ref;
  to[0] += 0.01;

  // The first build allocates the proxies (fresh pages); subsampled_mh's later builds reuse them (rebuild).
  auto t0 = Clock::now();
  std::unique_ptr<vnt::LogisticProxy> proxy = vnt::LogisticProxy::build(plate, ref);
  const double first_ns = since(t0) / static_cast<double>(n) * 1e9;
  constexpr int kBuilds = 5;
  t0 = Clock::now();
  for (int b = 0; b < kBuilds; ++b) proxy->rebuild(plate, ref);
  const double build_ns = since(t0) / kBuilds / static_cast<double>(n) * 1e9;

  constexpr size_t kBatch = 100, kBatches = 20000;
  std::vector<uint32_t> rows(kBatch);
  std::vector<double> r(kBatch);
  double sink = 0;
  t0 = Clock::now();
  for (size_t b = 0; b < kBatches; ++b) {
    for (uint32_t& row : rows) row = static_cast<uint32_t>(rng.below(n));
    proxy->residuals(plate, ref, to, rows.data(), kBatch, r.data());
    sink += r[0];
  }
  const double score_ns = since(t0) / static_cast<double>(kBatch * kBatches) * 1e9;
  fmt::print("N = {}, D = {}: build {:.1f} ns per row (first {:.1f}), residuals {:.1f} ns per row (random "
             "mini-batches of {})\n",
             n, d, build_ns, first_ns, score_ns, kBatch);
  fmt::print("build / score = {:.2f}; LogisticProxy::build_cost({}) = {:.2f}   [{:.3g}]\n", build_ns / score_ns,
             d + 1, vnt::LogisticProxy::build_cost(static_cast<size_t>(d + 1)), sink);
  return 0;
}
