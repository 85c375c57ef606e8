// Every partition of the points 0 .. n-1 (Bell(n) of them), and the clusters of an assignment, for exact posteriors
// of mixtures by enumeration.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

namespace vnt::test {

/// A partition: its blocks, each the points in it, in increasing order.
using Partition = std::vector<std::vector<size_t>>;

namespace detail {
inline void extend_partitions(size_t next, size_t n, Partition& p, const std::function<void(const Partition&)>& f) {
  if (next == n) return f(p);
  for (size_t c = 0; c < p.size(); ++c) {  // by index: the calls below grow p, which may move its blocks
    p[c].push_back(next);
    extend_partitions(next + 1, n, p, f);
    p[c].pop_back();
  }
  p.push_back({next});
  extend_partitions(next + 1, n, p, f);
  p.pop_back();
}
}  // namespace detail

/// Calls f with every partition of 0 .. n-1.
inline void for_each_partition(size_t n, const std::function<void(const Partition&)>& f) {
  Partition p;
  detail::extend_partitions(0, n, p, f);
}

/// How many clusters an assignment of labels (any numbers) to points makes.
template <size_t N>
size_t distinct_labels(const std::array<double, N>& z) {
  size_t k = 0;
  for (size_t i = 0; i < N; ++i) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = z[j] == z[i];
    k += seen ? 0 : 1;
  }
  return k;
}

}  // namespace vnt::test
