// Room for one more element, made before a change that must not fail halfway.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace vnt {

/// Grows `v` (a std::vector) as push_back would, so the next push_back does not allocate: a change that allocates
/// first and then links can leave nothing half done when memory runs out.
template <class Vector>
void make_room(Vector& v) {
  if (v.size() == v.capacity()) v.reserve(v.empty() ? 1 : 2 * v.size());
}

}  // namespace vnt
