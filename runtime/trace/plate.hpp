// A plate: many observations (proc args_i) = y_i of one compound procedure, kept as rows of data instead of a
// family of nodes per row. It applies when the procedure's body is a tree of builtin applications over its
// parameters, global variables and constants, ending in one random builtin (e.g. (bernoulli (linear_logistic
// w x))): then a row stores no intermediate value, only its arguments and observed value, and a row's log
// density is recomputed from the current values of the globals it reads (its inputs). A plate is one node:
// the child of each input, absorbing every change of them (Def. 4), and for subsampled_mh each row is a local
// section. Nothing in a row can go stale, since nothing computed is stored.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/logistic.hpp"
#include "runtime/trace/node.hpp"

namespace vnt {

class Sp;
class Trace;
class Rng;
class LogisticProxy;

/// The compiled body: ops in evaluation order (operands first); the last op is the observed random application.
struct PlateOp {
  enum class Kind : uint8_t { kParam, kInput, kConst, kApply };
  Kind kind = Kind::kConst;
  uint32_t index = 0;            // kParam: parameter number; kInput: input number
  Value constant;                // kConst
  const Sp* sp = nullptr;        // kApply
  std::vector<uint32_t> args;    // kApply: op numbers of the operands
  const Expr* expr = nullptr;    // kApply: the application, for error positions
};

struct PlateProgram {
  enum class Fused : uint8_t { kNone, kLogistic };
  std::vector<PlateOp> ops;
  size_t params = 0;
  /// kLogistic: the body is (bernoulli or flip (linear_logistic input param)); rows are scored with one dot product
  /// and a softplus, exact in both tails, when that parameter's column is dense.
  Fused fused = Fused::kNone;
  uint32_t fused_input = 0;  // kLogistic: the input holding the weights
  uint32_t fused_param = 0;  // kLogistic: the parameter holding the features
};

/// One argument (or the observed value) of every row: dense doubles while every value is a number (width 0),
/// every value a boolean (stored as 1 and 0, given back as booleans) or a vector of one length, generic values
/// otherwise.
class PlateColumn {
 public:
  void push(const Value& v);
  /// push(vector x) without making the vector value.
  void push_vector(const double* x, size_t n);
  void pop();
  Value value(size_t i) const;
  /// The stored value of row i of a generic column, or nullptr for a dense one.
  const Value* stored(size_t i) const { return generic_ ? &values_[i] : nullptr; }
  bool dense() const { return !generic_; }
  bool vectors() const { return vectors_; }
  size_t width() const { return width_; }
  /// Row i of a dense column: width() doubles (one for numbers).
  const double* row(size_t i) const { return data_.data() + i * stride(); }
  size_t size() const { return size_; }
  size_t bytes() const;

 private:
  size_t stride() const { return width_ == 0 ? 1 : width_; }
  void make_generic();
  void make_dense();

  bool generic_ = false;
  size_t generic_from_ = 0;  // the size when the column became generic
  bool vectors_ = false;   // dense rows are vectors (else numbers)
  bool booleans_ = false;  // dense rows are booleans, as 1 and 0
  size_t width_ = 0;
  size_t size_ = 0;
  std::vector<double> data_;
  std::vector<Value> values_;
};

struct PlateNode : Node {
  PlateNode(const Expr* site, std::shared_ptr<const PlateProgram> p, Node* proc, std::vector<Node*> in)
      : Node(NodeKind::kPlate, site), program(std::move(p)), procedure(proc), inputs(std::move(in)) {}

  std::shared_ptr<const PlateProgram> program;
  Node* procedure;              // the node the procedure's name is bound to (a parent, so it is not forgotten)
  std::vector<Node*> inputs;    // the globals the body reads, in kInput order (parents)
  std::vector<PlateColumn> args;  // one column per parameter
  PlateColumn observed;
  size_t rows = 0;
  double total = 0;             // sum of the rows' log densities at the inputs' current values ...
  bool total_valid = false;     // ... while this holds (an accepted subsampled move clears it)
  /// subsampled_mh 'proxy 'taylor: control variates of the rows (plate_proxy.hpp), built once decisions without
  /// them have cost a build. They depend on the rows' data only, so nothing makes them stale but rows added
  /// after they were built.
  std::shared_ptr<LogisticProxy> proxy;
};

inline PlateNode* as_plate(Node* n) { return static_cast<PlateNode*>(n); }

/// Scores rows of a plate with given input values (e.g. the proposed value of one input, the others as in the
/// trace). SP errors carry the position of the application that raised them.
class PlateEvaluator {
 public:
  PlateEvaluator(const PlateNode& plate, std::vector<const Value*> inputs);
  /// log p(y_i | inputs) of row i.
  double row(size_t i);
  /// out[j] = log p(y_rows[j] | inputs).
  void rows(const uint32_t* rows, size_t k, double* out);
  /// out[j] = log p(y_(first + j) | inputs).
  void range(size_t first, size_t k, double* out);
  /// Sum over every row.
  double sum();
  /// Draws the observed random application of row i: what evaluating the row would draw.
  Value simulate(size_t i, Rng& rng);

 private:
  double generic(size_t i, Rng* rng);
  double logistic(size_t i) const;

  const PlateNode& p_;
  std::vector<const Value*> in_;
  std::vector<Value> slots_;
  Value drawn_;  // what simulate() drew
  std::vector<const Value*> ptrs_;
  bool fused_ = false;
  Eigen::VectorXd w_;  // kLogistic: the weights, bias first (zero if none)
  size_t width_ = 0;
};

/// Rows fetched ahead of the one being scored when a mini-batch's rows are scattered. Fetching all of them at
/// once asks for more cache lines than the core can have in flight (about 24 on the AMD EPYC we measure on)
/// and was 2.3x slower per row at N = 1e6 than keeping 6-8 rows (16-24 lines) ahead (bench/bench_proxy_cost).
inline constexpr size_t kRowsAhead = 8;

/// softplus(a) - softplus(b) = max(a, 0) - max(b, 0) + log1p((e^-|a| - e^-|b|) / (1 + e^-|b|)), the difference of
/// exponentials taken as e^-|b| expm1(|b| - |a|): no cancellation however close a and b are, exact in both
/// tails (the log1p's argument stays in (-1/2, 1)), and three calls to libm where two softplus take four.
/// `eb` is e^-|b|, for callers that need it too.
inline double softplus_change(double a, double b, double eb) {
  const double gap = std::abs(b) - std::abs(a);
  const double d = gap < 700 ? eb * std::expm1(gap) : std::exp(-std::abs(a));  // e^-|b| may underflow
  return (std::max(a, 0.0) - std::max(b, 0.0)) + std::log1p(d / (1 + eb));
}
inline double softplus_change(double a, double b) { return softplus_change(a, b, std::exp(-std::abs(b))); }

/// log p(y | logistic(zt)) - log p(y | logistic(zf)) of a bernoulli observation y, as one softplus_change.
/// `ef` is e^-|zf|, for callers that need it too.
inline double logistic_log_density_change(double zf, double zt, double y, double ef) {
  if (y == 1.0) return -softplus_change(-zt, -zf, ef);
  if (y == 0.0) return -softplus_change(zt, zf, ef);
  return logistic_log_density(zt, y) - logistic_log_density(zf, y);
}
inline double logistic_log_density_change(double zf, double zt, double y) {
  return logistic_log_density_change(zf, zt, y, std::exp(-std::abs(zf)));
}

/// Whether the fused logistic scorer can run the plate's rows: a kLogistic body with dense feature vectors and
/// dense observed numbers or booleans.
bool fused_logistic_rows(const PlateNode& plate);

/// For a plate with fused_logistic_rows: the weights value `w` as a vector with the bias first (0 when w is as
/// long as a row's features); nullopt otherwise.
std::optional<Eigen::VectorXd> logistic_weights(const PlateNode& plate, const Value& w);

/// Calls f(j, rows[j]) for j = 0..k-1 with kRowsAhead of the scattered rows' features and observed values in
/// flight. The prefetches are written here, not in a lambda: GCC deems a lambda that only prefetches pure and
/// deletes its calls.
template <class F>
void for_rows_in_flight(const PlateNode& plate, const PlateColumn& xs, const uint32_t* rows, size_t k, F&& f) {
  for (size_t j = 0; j < k + kRowsAhead; ++j) {
    if (j < k) {
      __builtin_prefetch(xs.row(rows[j]));
      __builtin_prefetch(plate.observed.row(rows[j]));
    }
    if (j >= kRowsAhead) f(j - kRowsAhead, rows[j - kRowsAhead]);  // the row fetched kRowsAhead steps ago
  }
}

/// For a plate with fused_logistic_rows and weights `from` and `to` (bias first, as logistic_weights gives
/// them): calls score(j, x, zf, zt, y) for each row i = rows[j] with its features x (a D-vector), its z under
/// both weights and its observed value, rows kept in flight by for_rows_in_flight.
template <class Score>
void scan_logistic_rows(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                        const uint32_t* rows, size_t k, Score&& score) {
  const PlateColumn& xs = plate.args[plate.program->fused_param];
  const auto d = static_cast<Eigen::Index>(xs.width());
  const Eigen::Map<const Eigen::VectorXd> wf(from.data() + 1, d), wt(to.data() + 1, d);
  for_rows_in_flight(plate, xs, rows, k, [&](size_t j, uint32_t i) {
    const Eigen::Map<const Eigen::VectorXd> x(xs.row(i), d);
    score(j, x, from[0] + wf.dot(x), to[0] + wt.dot(x), *plate.observed.row(i));
  });
}

/// For a plate with fused_logistic_rows and weights `from` and `to` (bias first, as logistic_weights gives
/// them): out[j] = logistic_log_density_change of row rows[j], one pass over scattered rows.
void logistic_log_density_changes(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                                  const uint32_t* rows, size_t k, double* out);

/// The inputs' current values, in kInput order.
std::vector<const Value*> current_inputs(const PlateNode& plate);

/// plate.total, recomputed from the inputs' current values if it is not valid.
double plate_total(PlateNode& plate);

/// What a plate for `procedure` would read: nullopt if the procedure is not a global lambda whose body a
/// plate can run (then observations take the general path, one family per row).
struct PlatePlan {
  std::shared_ptr<const PlateProgram> program;
  Node* procedure = nullptr;
  std::vector<Node*> inputs;
};
std::optional<PlatePlan> plan_plate(Trace& trace, const std::string& procedure);

}  // namespace vnt
