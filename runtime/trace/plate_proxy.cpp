// Taylor proxies of fused logistic rows: building their sums, and scoring residuals a mini-batch at a time.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/plate_proxy.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/trace/plate.hpp"

namespace vnt {
namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// f'(z) and f''(z) of f(z) = log p(y | logistic(z)): y - logistic(z) and -logistic(z) logistic(-z), both
/// logistics from e = exp(-|z|), which cannot overflow. A select, not a branch, on the sign of z (builds run it
/// over blocks of rows, where the sign is random).
struct Slopes {
  double d1, d2;
};
inline Slopes slopes(double z, double e, double y) {
  const double near = 1 / (1 + e), far = e * near;
  return {y - (z >= 0 ? near : far), -near * far};
}

/// p(to) - p(from) of a row's Taylor proxy around z* = zr with slopes c there: d1 (zt - zf) + d2/2 ((zt - z*)^2 -
/// (zf - z*)^2), the difference of squares factored.
inline double proxy_change(double zf, double zt, double zr, Slopes c) {
  return (zt - zf) * (c.d1 + 0.5 * c.d2 * ((zt - zr) + (zf - zr)));
}

/// A row's l_i(to) - l_i(from) (as logistic_log_density_change), adding to `taylor` the change of its Taylor proxy
/// around `from`. Both share e^-|zf|.
inline double change_and_taylor(double zf, double zt, double y, double& taylor) {
  const double ef = std::exp(-std::abs(zf));
  taylor += proxy_change(zf, zt, zf, slopes(zf, ef, y));
  return logistic_log_density_change(zf, zt, y, ef);
}

}  // namespace

std::unique_ptr<LogisticProxy> LogisticProxy::build(const PlateNode& plate, const Eigen::VectorXd& ref) {
  auto p = std::make_unique<LogisticProxy>();
  if (!p->rebuild(plate, ref)) return nullptr;
  return p;
}

bool LogisticProxy::rebuild(const PlateNode& plate, const Eigen::VectorXd& ref) {
  rows_ = 0;
  excess = 0;
  if (!fused_logistic_rows(plate) || plate.rows == 0) return false;
  const PlateColumn& xs = plate.args[plate.program->fused_param];
  const auto d = static_cast<Eigen::Index>(xs.width());
  if (ref.size() != d + 1) return false;
  // With x~ = (1, x): g = sum d1 x~ and H = sum d2 x~ x~^T, a block of rows at a time, each step over the whole
  // block: one matrix-vector product for z*, one SIMD exp, one plain loop for the slopes, and products for the
  // sums.
  const auto rows = static_cast<Eigen::Index>(plate.rows);
  const Eigen::Map<const RowMajor> x(xs.row(0), rows, d);
  const Eigen::Map<const Eigen::ArrayXd> observed(plate.observed.row(0), rows);
  const Eigen::Map<const Eigen::VectorXd> w(ref.data() + 1, d);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(d + 1);
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(d + 1, d + 1);
  constexpr Eigen::Index kBlock = 1024, kFewFeatures = 4;
  const Eigen::Index block = std::min(kBlock, rows);
  Eigen::ArrayXd z(block), e(block), d1(block), d2(block);
  RowMajor scaled(d <= kFewFeatures ? 0 : block, d);
  for (Eigen::Index first = 0; first < rows; first += kBlock) {
    const Eigen::Index k = std::min(kBlock, rows - first);
    const auto xb = x.middleRows(first, k);
    const auto y = observed.segment(first, k);
    if ((y * (1 - y) != 0).any()) return false;  // an observed value other than 0 and 1
    auto zb = z.head(k), eb = e.head(k), a = d1.head(k), b = d2.head(k);
    zb.matrix().noalias() = xb * w;
    zb += ref[0];
    eb = (-zb.abs()).exp();
    for (Eigen::Index j = 0; j < k; ++j) {  // a loop the compiler vectorizes (Eigen's select() branches)
      const Slopes c = slopes(zb[j], eb[j], y[j]);
      a[j] = c.d1;
      b[j] = c.d2;
    }
    g[0] += a.sum();
    g.tail(d).noalias() += xb.transpose() * a.matrix();
    h(0, 0) += b.sum();
    h.block(1, 0, d, 1).noalias() += xb.transpose() * b.matrix();
    if (d <= kFewFeatures) {
      // A general matrix product packs its operands first, which costs more than the product at this width.
      for (Eigen::Index i = 0; i < d; ++i)
        for (Eigen::Index l = 0; l <= i; ++l) h(1 + i, 1 + l) += (b * xb.col(i).array() * xb.col(l).array()).sum();
    } else {
      auto sb = scaled.topRows(k);
      sb.noalias() = b.matrix().asDiagonal() * xb;
      h.bottomRightCorner(d, d).noalias() += xb.transpose() * sb;
    }
  }
  h.triangularView<Eigen::StrictlyUpper>() = h.transpose();
  ref_ = ref;
  g_ = std::move(g);
  h_ = std::move(h);
  rows_ = plate.rows;
  return true;
}

double LogisticProxy::sum(const Eigen::VectorXd& from, const Eigen::VectorXd& to) const {
  const Eigen::VectorXd a = to - ref_, b = from - ref_;
  return g_.dot(to - from) + 0.5 * (a.dot(h_ * a) - b.dot(h_ * b));
}

double LogisticProxy::residuals(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                                const uint32_t* rows, size_t k, double* r, double* taylor_from) const {
  const Eigen::Map<const Eigen::VectorXd> wr(ref_.data() + 1, ref_.size() - 1);
  double sum = 0, taylor = 0;
  scan_logistic_rows(plate, from, to, rows, k, [&](size_t j, const auto& x, double zf, double zt, double y) {
    const double zr = ref_[0] + wr.dot(x);
    const double dp = proxy_change(zf, zt, zr, slopes(zr, std::exp(-std::abs(zr)), y));
    sum += dp;
    const double l =
        taylor_from != nullptr ? change_and_taylor(zf, zt, y, taylor) : logistic_log_density_change(zf, zt, y);
    r[j] = l - dp;
  });
  if (taylor_from != nullptr) *taylor_from += taylor;
  return sum;
}

double LogisticProxy::changes_and_taylor(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                                         const uint32_t* rows, size_t k, double* out) {
  double taylor = 0;
  scan_logistic_rows(plate, from, to, rows, k, [&](size_t j, const auto&, double zf, double zt, double y) {
    out[j] = change_and_taylor(zf, zt, y, taylor);
  });
  return taylor;
}

}  // namespace vnt
