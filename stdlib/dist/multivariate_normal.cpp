// multivariate_normal(mean, cov): the Gaussian on R^n; the Cholesky factor of cov is cached per matrix.
// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cmath>
#include <mutex>
#include <string>

#include "runtime/core/error.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/value/coerce.hpp"
#include "stdlib/support/log_2pi.hpp"
#include "stdlib/support/spd_factor.hpp"

namespace vnt::stdlib {
namespace {

constexpr std::string_view kMvnName = "multivariate_normal";

class MultivariateNormal final : public Sp {
 public:
  std::string_view name() const override { return kMvnName; }
  bool is_random() const override { return true; }
  bool real_valued() const override { return true; }

  Value simulate(const Args& args, Rng& rng) const override {
    const Eigen::VectorXd& mean = mean_arg(args);
    std::string why;
    auto f = factor(args, mean, why);
    if (!f) raise(ErrorKind::kDomain, "{}: {}", kMvnName, why);
    Eigen::VectorXd z(mean.size());
    for (Eigen::Index i = 0; i < z.size(); ++i) z[i] = rng.normal();
    return make_vector(mean + f->llt.matrixL() * z);
  }

  double log_density(const Value& x, const Args& args) const override {
    const Eigen::VectorXd& mean = mean_arg(args);
    std::string why;
    auto f = factor(args, mean, why);
    const auto* xv = std::get_if<VectorPtr>(&x);
    if (!f || !xv || (*xv)->size() != mean.size() || !(*xv)->allFinite()) return kNegInf;
    Eigen::VectorXd w = f->llt.matrixL().solve(**xv - mean);
    return -0.5 * (static_cast<double>(mean.size()) * kLog2Pi + f->log_det + w.squaredNorm());
  }

 private:
  static const Eigen::VectorXd& mean_arg(const Args& args) {
    check_arity(kMvnName, args, 2);
    return as_vector(args[0], ArgRef{kMvnName, 1, "mean"});
  }

  // The factor of a valid (mean, cov), or nullptr with the reason in `why`. Throws kType if cov is no matrix.
  std::shared_ptr<const SpdFactor> factor(const Args& args, const Eigen::VectorXd& mean, std::string& why) const {
    const Eigen::MatrixXd& cov = as_matrix(args[1], ArgRef{kMvnName, 2, "cov"});
    if (mean.size() == 0) {
      why = "argument 1 (mean) is empty, but must have at least one element";
    } else if (!mean.allFinite()) {
      why = "argument 1 (mean) has a non-finite element, but must be finite";
    } else if (cov.rows() != cov.cols()) {
      why = fmt::format("argument 2 (cov) is {}x{}, but must be square", cov.rows(), cov.cols());
    } else if (cov.rows() != mean.size()) {
      why = fmt::format("argument 2 (cov) is {0}x{0}, but must be {1}x{1} to match argument 1 (mean)", cov.rows(),
                        mean.size());
    } else {
      auto f = cached(std::get<MatrixPtr>(args[1]));
      if (f->problem.empty()) return f;
      why = "argument 2 (cov) " + f->problem;
    }
    return nullptr;
  }

  // Looks the matrix up by handle, then by contents (an equal matrix built again); factorises on a miss.
  std::shared_ptr<const SpdFactor> cached(const MatrixPtr& cov) const {
    {
      std::lock_guard lock(mutex_);
      for (Entry& e : cache_)
        if (e.factor && !e.handle.owner_before(cov) && !cov.owner_before(e.handle)) return e.factor;
      for (Entry& e : cache_) {
        if (e.factor && e.factor->matrix.rows() == cov->rows() && e.factor->matrix == *cov) {
          e.handle = cov;
          return e.factor;
        }
      }
    }
    auto f = factorise_spd(*cov);  // outside the lock: O(n^3)
    std::lock_guard lock(mutex_);
    cache_[next_] = Entry{cov, f};
    next_ = (next_ + 1) % cache_.size();
    return f;
  }

  struct Entry {
    std::weak_ptr<const Eigen::MatrixXd> handle;  // owner identity; the control block outlives the matrix
    std::shared_ptr<const SpdFactor> factor;
  };
  mutable std::mutex mutex_;
  mutable std::array<Entry, 8> cache_;
  mutable size_t next_ = 0;
};

}  // namespace

void register_multivariate_normal(SpRegistry& r) { r.add(std::make_shared<MultivariateNormal>()); }

}  // namespace vnt::stdlib
