// Helpers shared by the plate tests (tests/runtime/trace/plate*_test.cpp): engines with and without plates, the
// plate of the last directive, and two row generators.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/infer/mix.hpp"
#include "runtime/trace/plate.hpp"
#include "tests/support/block_spec.hpp"
#include "tests/support/engine_fixture.hpp"

namespace vnt::plate_test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

using test::block;

/// The plate of the last directive, or nullptr if it took the general path.
inline PlateNode* last_plate(Engine& e) {
  if (e.directives().empty()) return nullptr;
  Node* root = e.directives().back().root;
  return root != nullptr && root->kind == NodeKind::kPlate ? as_plate(root) : nullptr;
}

inline double number(Engine& e, const std::string& name) { return std::get<double>(e.report(name)); }
inline Eigen::VectorXd vec(Engine& e, const std::string& name) { return *std::get<VectorPtr>(e.report(name)); }

inline Value vec2(double a, double b) { return make_vector(Eigen::Vector2d(a, b)); }

/// log(1 + e^t), written independently of plate.cpp.
inline double ref_softplus(double t) { return std::max(t, 0.0) + std::log1p(std::exp(-std::abs(t))); }

inline bool close(double a, double b, double rel) {
  return a == b || std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

// y_i ~ normal(0.7 x_i, 0.5), x_i ~ normal(0, 1): the rows of the non-fused linear model.
inline constexpr const char* kLinear =
    "[assume a (scope_include 'a 0 (normal 0 1))]"
    "[assume f (lambda (x) (normal (* a x) 0.5))]";

inline void load_linear(Engine& e, size_t n, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = 0; i < n; ++i) {
    const double x = rng.normal();
    e.observe_apply("f", {Value(x)}, Value(0.7 * x + 0.5 * rng.normal()));
  }
}

// Logistic regression with a bias, as in examples/bayes_lr/synthetic.vnt: rows of 2 features.
inline constexpr const char* kLogistic =
    "[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3))))]"
    "[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]";

inline void load_logistic(Engine& e, size_t n, uint64_t seed) {
  Rng rng(seed);
  for (size_t i = 0; i < n; ++i) {
    const double x1 = rng.normal(), x2 = rng.normal();
    const double p = 1 / (1 + std::exp(-(0.5 + 1.5 * x1 - x2)));
    e.observe_apply("y_x", {vec2(x1, x2)}, Value(rng.uniform() < p ? 1.0 : 0.0));
  }
}

// w = (0 0) and the body the fused scorer runs.
inline constexpr const char* kFused =
    "[assume w (vector 0 0)] [assume f (lambda (x) (bernoulli (linear_logistic w x)))]";

/// Two engines with one seed and one program, the first storing rows in a plate, the second one family per row.
struct Pair {
  Engine on, off;
  explicit Pair(uint64_t seed) : on(seed), off(seed) { off.set_plates(false); }
  void run(const std::string& program) {
    test::run(on, program);
    test::run(off, program);
  }
};

}  // namespace vnt::plate_test
