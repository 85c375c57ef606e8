// find_border: where the scaffold of one principal node splits into a global section and N local sections.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

#include "runtime/trace/plate.hpp"

namespace vnt {

/// The border of principal node v (Def. 6) and its number of children N, found without visiting them.
struct BorderInfo {
  Node* border = nullptr;  // nullptr: no node with several branches (N <= 1)
  size_t n = 0;
  std::string problem;     // non-empty: the scaffold breaks a precondition
  size_t examined = 0;     // nodes looked at: the depth of the border below v, whatever N is (tests check it)
};
BorderInfo find_border(Node* v);

/// Rows of the plates a border feeds (plates come first among its children).
inline size_t plate_rows(const Node* n) {
  size_t rows = 0;
  for (size_t i = 0; i < n->plate_children; ++i) rows += as_plate(n->children[i])->rows;
  return rows;
}

}  // namespace vnt
