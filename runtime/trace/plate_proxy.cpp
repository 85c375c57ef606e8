// Taylor proxies of fused logistic rows: building their sums, and scoring residuals a mini-batch at a time.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/plate_proxy.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/trace/plate.hpp"

namespace vnt {
namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

std::unique_ptr<LogisticProxy> LogisticProxy::build(const PlateNode& plate, const Eigen::VectorXd& ref) {
  auto p = std::make_unique<LogisticProxy>();
  if (!p->rebuild(plate, ref)) return nullptr;
  return p;
}

bool LogisticProxy::rebuild(const PlateNode& plate, const Eigen::VectorXd& ref) {
  if (!fused_logistic_rows(plate) || plate.rows == 0) return false;
  const PlateColumn& xs = plate.args[plate.program->fused_param];
  const auto d = static_cast<Eigen::Index>(xs.width());
  if (ref.size() != d + 1) return false;
  ref_ = ref;
  coef_.resize(plate.rows);  // in place when rebuilt: no fresh pages to fault in
  excess = 0;
  // With x~ = (1, x): g = sum d1 x~ and H = sum d2 x~ x~^T, in blocks of rows so no N x D temporary is made.
  // d1 and d2 are read in place from the per-row coefficients.
  static_assert(sizeof(Coef) == 3 * sizeof(double));
  using Strided = Eigen::Map<const Eigen::VectorXd, 0, Eigen::InnerStride<3>>;
  const auto rows = static_cast<Eigen::Index>(plate.rows);
  const Strided d1(&coef_[0].d1, rows), d2(&coef_[0].d2, rows);
  const Eigen::Map<const RowMajor> x(xs.row(0), rows, d);
  const Eigen::Map<const Eigen::VectorXd> w(ref.data() + 1, d);
  g_ = Eigen::VectorXd::Zero(d + 1);
  h_ = Eigen::MatrixXd::Zero(d + 1, d + 1);
  constexpr Eigen::Index kBlock = 4096;
  Eigen::VectorXd z(std::min(kBlock, rows));
  for (Eigen::Index first = 0; first < rows; first += kBlock) {
    const Eigen::Index k = std::min(kBlock, rows - first);
    const auto xb = x.middleRows(first, k);
    z.head(k).noalias() = xb * w;  // the block's z* = w*~ . x~ by one matrix-vector product
    for (Eigen::Index j = 0; j < k; ++j) {
      const auto i = static_cast<size_t>(first + j);
      const double y = *plate.observed.row(i);
      if (y != 0.0 && y != 1.0) return false;
      const double zi = ref[0] + z[j];
      // f(z) = log p(y | logistic(z)): f'(z) = y - logistic(z), f''(z) = -logistic(z) logistic(-z). Both
      // logistics from one exp of -|z|, which cannot overflow.
      const double e = std::exp(-std::abs(zi)), near = 1 / (1 + e), far = e * near;
      coef_[i] = Coef{y - (zi >= 0 ? near : far), -near * far, zi};
    }
    const auto a = d1.segment(first, k), b = d2.segment(first, k);
    g_[0] += a.sum();
    g_.tail(d) += xb.transpose() * a;
    h_(0, 0) += b.sum();
    h_.block(1, 0, d, 1) += xb.transpose() * b;
    h_.bottomRightCorner(d, d) += xb.transpose() * (b.asDiagonal() * xb);
  }
  h_.block(0, 1, 1, d) = h_.block(1, 0, d, 1).transpose();
  return true;
}

double LogisticProxy::sum(const Eigen::VectorXd& from, const Eigen::VectorXd& to) const {
  const Eigen::VectorXd a = to - ref_, b = from - ref_;
  return g_.dot(to - from) + 0.5 * (a.dot(h_ * a) - b.dot(h_ * b));
}

void LogisticProxy::residuals(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                              const uint32_t* rows, size_t k, double* r) const {
  scan_logistic_rows(plate, from, to, rows, k, coef_.data(), [&](size_t j, double zf, double zt, double y) {
    const Coef& c = coef_[rows[j]];
    // p(to) - p(from) = d1 (zt - zf) + d2/2 ((zt - z*)^2 - (zf - z*)^2), the difference of squares factored.
    const double dp = (zt - zf) * (c.d1 + 0.5 * c.d2 * ((zt - c.zref) + (zf - c.zref)));
    r[j] = logistic_log_density_change(zf, zt, y) - dp;
  });
}

}  // namespace vnt
