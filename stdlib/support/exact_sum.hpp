// A sum of doubles kept exactly (Shewchuk's non-overlapping partials), read correctly rounded: adding a value and
// subtracting it again gives back the same sum, bit for bit, in any order. The sufficient statistics of a collapsed
// procedure are such sums, so that a rejected move, which unincorporates what it incorporated, restores them exactly
// and millions of moves accumulate no rounding.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/container/small_vector.hpp>
#include <cmath>
#include <cstddef>

namespace vnt::stdlib {

class ExactSum {
 public:
  /// Adds x (finite: the caller keeps infinities and NaN out, as they have no exact sum).
  void add(double x) {
    size_t kept = 0;
    for (double p : partials_) {
      if (std::abs(x) < std::abs(p)) std::swap(x, p);
      const double hi = x + p;
      const double lo = p - (hi - x);  // exact: |x| >= |p|
      if (lo != 0) partials_[kept++] = lo;
      x = hi;
    }
    partials_.resize(kept);
    if (x != 0) partials_.push_back(x);
  }

  /// The exact sum rounded to the nearest double (ties to even), a function of the exact sum alone.
  double value() const {
    if (partials_.empty()) return 0;
    size_t i = partials_.size() - 1;
    double hi = partials_[i], lo = 0;
    while (i > 0) {
      const double x = hi, y = partials_[--i];
      hi = x + y;
      lo = y - (hi - x);
      if (lo != 0) break;
    }
    // hi + lo is the sum's head, the partials below i its tail: a tail on lo's side makes a halfway lo more than half.
    if (i > 0 && ((lo < 0 && partials_[i - 1] < 0) || (lo > 0 && partials_[i - 1] > 0))) {
      const double y = lo * 2, x = hi + y;
      if (y == x - hi) hi = x;
    }
    return hi;
  }

  bool operator==(const ExactSum& o) const { return value() == o.value(); }

 private:
  // Non-overlapping, increasing magnitude. A few in place: sums of ordinary data hold two or three, so the state of
  // a new table (made whenever a seat's move weighs one) allocates nothing for them.
  boost::container::small_vector<double, 3> partials_;
};

}  // namespace vnt::stdlib
