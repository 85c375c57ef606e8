// The austerity sequential test (Korattikara et al. 2014, Alg. 1; sublinear-MH paper, Alg. 2): decides
// whether mean(l_1..l_N) >= mu0 from l_i drawn without replacement, a mini-batch at a time. No trace here:
// subsampled_mh feeds the l_i through a callback. Rule: design note subsampled-mh.md, "The sequential test".
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "runtime/infer/austerity/t_quantile_cache.hpp"

namespace vnt {

struct SequentialTestConfig {
  double mu0;              ///< threshold (log u − α_g)/N; ±inf decides at once without drawing
  size_t population;       ///< N, the number of l_i
  size_t batch;            ///< m (Nbatch), the mini-batch size
  double epsilon;          ///< ε, the error bound of one test; 0 runs to n = N (exact MH)
  size_t min_batches = 1;  ///< k0, mini-batches seen before the first test
  ErrorSpending spending = ErrorSpending::kPerTest;  ///< what ε bounds: each test, or the whole decision

  /// Checks the user-facing options Nbatch ≥ 1, 0 ≤ eps < 1, k0 ≥ 1. Throws kInference naming the option.
  static void validate_options(size_t batch, double epsilon, size_t min_batches);
  /// validate_options, plus N ≥ 1 and mu0 not NaN. Throws kInference.
  void validate() const;
};

struct SequentialTestResult {
  bool accept = false;  ///< decided mean(l) >= mu0
  size_t n_used = 0;    ///< number of l_i drawn
  size_t batches = 0;   ///< number of mini-batches drawn
  double t = 0.0;       ///< last t statistic computed; +inf (accept) or −inf (reject) if none was
  double mean = 0.0;    ///< mean of the l_i seen (0 if none; ±inf if one was infinite)
  double sd = 0.0;      ///< sample sd s_l of the l_i seen, n − 1 denominator (0 if n < 2; NaN if infinite)
  bool exact = false;   ///< the MH decision: n = N, an infinite mu0 or l_i (+inf: if no −inf is unseen)
};

/// The test as a state machine, for callers that run their own mini-batch loop (e.g. evaluating a batch
/// of local sections at once): while (!done()) { add() next_batch_size() values; end_batch(); }.
/// The functions below are thin loops over it.
class SequentialTest {
 public:
  /// Validates cfg (throws kInference) and binds cache to (ε, Nbatch); the cache must outlive the test.
  /// mu0 = +inf (α_g = −inf) is decided at once as reject, mu0 = −inf as accept (with eps > 0), n_used = 0.
  SequentialTest(const SequentialTestConfig& cfg, TQuantileCache& cache);

  /// True once decided; result() is then final.
  bool done() const { return done_; }
  /// Size of the next mini-batch, min(Nbatch, N − n); 0 once done.
  size_t next_batch_size() const { return done_ ? 0 : std::min(cfg_.batch, cfg_.population - n_); }

  /// Adds one value of the current mini-batch (Welford update). NaN throws kInference. An infinite value
  /// decides when the mini-batch ends: −inf rejects, also with a +inf; +inf accepts (with eps = 0 only once all
  /// N are seen without a −inf), as MH leaves a state of probability zero for one of positive probability.
  void add(double l) {
    ++n_;
    if (!std::isfinite(l)) return add_nonfinite(l);
    // 1/n does not depend on the running mean, so its division overlaps the previous value's update instead
    // of lengthening the chain of dependent operations (the loop is latency-bound).
    const double inv_n = 1.0 / static_cast<double>(n_);
    const double d = l - mean_;
    mean_ += d * inv_n;
    m2_ += d * (l - mean_);
  }

  /// Ends the mini-batch (exactly next_batch_size() values must have been added; else kInternal) and runs
  /// the test on everything seen. Returns done().
  bool end_batch();

  /// The decision so far (final once done()).
  const SequentialTestResult& result() const { return result_; }

 private:
  void add_nonfinite(double l);
  void finish(bool accept, bool exact);

  SequentialTestConfig cfg_;
  TQuantileCache& cache_;
  size_t n_ = 0;  // values added, including the open mini-batch
  size_t n_closed_ = 0;  // values in closed mini-batches
  double mean_ = 0.0;
  double m2_ = 0.0;  // Σ (l − mean)², Welford
  bool pos_inf_ = false;
  bool neg_inf_ = false;
  bool have_t_ = false;  // result_.t holds a computed statistic
  bool done_ = false;
  SequentialTestResult result_;
};

/// Runs the test, drawing l_i one at a time from next() (drawing without replacement is the caller's job).
/// Throws kInference for a bad config or a NaN l_i. Keep `cache` across transitions.
template <class Next>
  requires std::invocable<Next&> && std::convertible_to<std::invoke_result_t<Next&>, double>
SequentialTestResult sequential_test(const SequentialTestConfig& cfg, TQuantileCache& cache, Next&& next) {
  SequentialTest test(cfg, cache);
  while (!test.done()) {
    for (size_t i = test.next_batch_size(); i > 0; --i) test.add(static_cast<double>(next()));
    test.end_batch();
  }
  return test.result();
}

/// As above with a cache of its own (the critical values are recomputed on every call).
template <class Next>
  requires std::invocable<Next&> && std::convertible_to<std::invoke_result_t<Next&>, double>
SequentialTestResult sequential_test(const SequentialTestConfig& cfg, Next&& next) {
  TQuantileCache cache;
  return sequential_test(cfg, cache, next);
}

/// Runs the test a mini-batch at a time: fill(k, out) writes the next k l_i to out[0..k). The buffer lives
/// on the stack for Nbatch ≤ 256 and is allocated once per call above that. Throws as sequential_test.
template <class Fill>
  requires std::invocable<Fill&, size_t, double*>
SequentialTestResult sequential_test_batched(const SequentialTestConfig& cfg, TQuantileCache& cache,
                                             Fill&& fill) {
  SequentialTest test(cfg, cache);
  if (test.done()) return test.result();
  std::array<double, 256> small;
  std::vector<double> large;
  double* out = small.data();
  if (cfg.batch > small.size()) {
    large.resize(std::min(cfg.batch, cfg.population));
    out = large.data();
  }
  while (!test.done()) {
    const size_t k = test.next_batch_size();
    fill(k, out);
    for (size_t i = 0; i < k; ++i) test.add(out[i]);
    test.end_batch();
  }
  return test.result();
}

}  // namespace vnt
