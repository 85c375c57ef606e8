// The decision step of the austerity sequential test, run once per mini-batch.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/austerity/sequential_test.hpp"

#include <limits>

#include "runtime/core/error.hpp"

namespace vnt {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

void SequentialTestConfig::validate_options(size_t batch, double epsilon, size_t min_batches) {
  if (batch < 1) raise(ErrorKind::kInference, "subsampled_mh: Nbatch must be a positive integer, got {}", batch);
  if (!(epsilon >= 0.0 && epsilon < 1.0))
    raise(ErrorKind::kInference, "subsampled_mh: eps must be in [0, 1), got {}", epsilon);
  if (min_batches < 1)
    raise(ErrorKind::kInference, "subsampled_mh: k0 must be a positive integer, got {}", min_batches);
}

void SequentialTestConfig::validate() const {
  validate_options(batch, epsilon, min_batches);
  if (population < 1)
    raise(ErrorKind::kInference, "subsampled_mh: the number of local sections N must be positive, got {}",
          population);
  if (std::isnan(mu0))
    raise(ErrorKind::kInference, "subsampled_mh: the threshold mu0 = (log u - alpha_g) / N is NaN");
}

SequentialTest::SequentialTest(const SequentialTestConfig& cfg, TQuantileCache& cache)
    : cfg_(cfg), cache_(cache) {
  cfg_.validate();
  cache_.bind(cfg_.epsilon, cfg_.batch, cfg_.spending);
  // alpha_g = −inf (the global section has zero density under the proposal) gives mu0 = +inf: no mean can
  // reach it, so the exact decision is known before drawing anything. −inf (the current global section has
  // density zero) accepts, unless a section has density zero under the proposal: with eps = 0 all N are seen.
  if (cfg_.mu0 == kInf || (cfg_.mu0 == -kInf && cfg_.epsilon > 0.0)) finish(cfg_.mu0 < 0.0, true);
}

void SequentialTest::add_nonfinite(double l) {
  if (std::isnan(l))
    raise(ErrorKind::kInference, "subsampled_mh: the log-weight l_i of a local section is NaN (value {} of {})",
          n_, cfg_.population);
  (l > 0.0 ? pos_inf_ : neg_inf_) = true;
}

bool SequentialTest::end_batch() {
  VNT_ASSERT(!done_, "sequential test: end_batch after the decision");
  const size_t expected = std::min(cfg_.batch, cfg_.population - n_closed_);
  VNT_ASSERT(n_ - n_closed_ == expected, "sequential test: mini-batch of {} values, expected {}",
             n_ - n_closed_, expected);
  n_closed_ = n_;
  ++result_.batches;
  result_.n_used = n_;

  // One infinite l_i makes μ infinite. −inf (probability zero under the proposal) rejects whatever the unseen
  // values are, also +inf ones: MH takes a move out of a state of probability zero (+inf) only into positive
  // probability. So +inf decides exactly only once all N are seen, as eps = 0 asks.
  if (neg_inf_) {
    result_.mean = -kInf;
    result_.sd = std::numeric_limits<double>::quiet_NaN();
    finish(false, true);
    return true;
  }
  if (pos_inf_) {
    result_.mean = kInf;
    result_.sd = std::numeric_limits<double>::quiet_NaN();
    if (cfg_.epsilon == 0.0 && n_ < cfg_.population) return false;
    finish(true, true);
    return true;
  }

  const auto n = static_cast<double>(n_);
  result_.mean = mean_;
  result_.sd = n_ >= 2 ? std::sqrt(m2_ / (n - 1.0)) : 0.0;
  if (n_ == cfg_.population) {  // all of the population seen: the exact MH decision
    finish(mean_ >= cfg_.mu0, true);
    return true;
  }
  if (result_.batches < cfg_.min_batches) return false;
  // s_l = 0 (all values seen are equal, or n = 1): no test; a small subset of equal values must not
  // decide (sublinear-MH paper, section 3.2). Welford keeps m2_ exactly 0 for equal values.
  if (n_ < 2 || m2_ == 0.0) return false;
  // Eq. 4: s = s_l/√n · √(1 − (n−1)/(N−1)) with s_l² = M2/(n−1), and 1 − (n−1)/(N−1) = (N−n)/(N−1).
  const auto big_n = static_cast<double>(cfg_.population);
  const double s = std::sqrt((big_n - n) / (big_n - 1.0) * m2_ / (n * (n - 1.0)));
  if (!(s > 0.0)) return false;  // underflow: as s_l = 0
  const double t = (mean_ - cfg_.mu0) / s;  // Eq. 5
  result_.t = t;
  have_t_ = true;
  // Test k sees n = k·Nbatch values (only the last, partial batch is shorter, and it has n = N).
  switch (cache_.classify(t, result_.batches)) {
    case TestOutcome::kAccept: finish(true, false); return true;
    case TestOutcome::kReject: finish(false, false); return true;
    case TestOutcome::kContinue: return false;
  }
  return false;
}

void SequentialTest::finish(bool accept, bool exact) {
  done_ = true;
  result_.accept = accept;
  result_.exact = exact;
  if (!have_t_) result_.t = accept ? kInf : -kInf;
}

}  // namespace vnt
