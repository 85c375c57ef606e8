// A matrix that must be symmetric positive definite (a covariance, a scale matrix), checked and factorised once:
// multivariate_normal's cov and make_niw_normal's S0 share the checks and their words.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <memory>
#include <string>

namespace vnt::stdlib {

struct SpdFactor {
  Eigen::MatrixXd matrix;           // the contents, to match a different handle with equal entries
  Eigen::LLT<Eigen::MatrixXd> llt;  // matrix = L L^T
  double log_det = 0;
  std::string problem;  // why it is not symmetric positive definite (a message's tail); empty if it is
};

/// Each pair within 1e-8 of sqrt(|c_ii c_jj|), the scale of a covariance entry: against the largest entry of the
/// matrix, [[1e10 0.5] [-0.5 1e-10]] passed, and was read from its lower triangle.
inline bool symmetric_enough(const Eigen::MatrixXd& c) {
  constexpr double kTolerance = 1e-8;
  const Eigen::ArrayXd sd = c.diagonal().array().abs().sqrt();
  const Eigen::ArrayXXd scale = sd.matrix() * sd.matrix().transpose();
  return ((c - c.transpose()).array().abs() <= kTolerance * scale).all();
}

/// The factor of a square matrix, or the reason it has none in `problem`.
inline std::shared_ptr<const SpdFactor> factorise_spd(const Eigen::MatrixXd& c) {
  auto f = std::make_shared<SpdFactor>();
  f->matrix = c;
  if (!c.allFinite()) {
    f->problem = "has a non-finite entry, but must be symmetric positive definite";
  } else if (!symmetric_enough(c)) {
    f->problem = "is not symmetric, but must be symmetric positive definite";
  } else {
    f->llt.compute(c);
    if (f->llt.info() != Eigen::Success)
      f->problem = "is not positive definite, but must be symmetric positive definite";
    else
      f->log_det = 2 * f->llt.matrixLLT().diagonal().array().log().sum();
  }
  return f;
}

}  // namespace vnt::stdlib
