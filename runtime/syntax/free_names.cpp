// A walk of the expression tree with the names bound around each node (a let is a lambda applied).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/syntax/free_names.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>

namespace vnt {
namespace {

struct Walk {
  std::vector<const std::string*> bound;  // innermost last
  std::unordered_set<std::string_view> seen;
  std::vector<const Expr*> out;
};

void collect(const Expr& e, Walk& w) {
  switch (e.kind) {
    case Expr::Kind::kConst: return;
    case Expr::Kind::kVar:
      if (std::none_of(w.bound.begin(), w.bound.end(), [&](const std::string* b) { return *b == e.name; }) &&
          w.seen.insert(e.name).second)
        w.out.push_back(&e);
      return;
    case Expr::Kind::kLambda: {
      const size_t mark = w.bound.size();
      for (const std::string& p : e.params) w.bound.push_back(&p);
      for (const auto& i : e.items) collect(*i, w);
      w.bound.resize(mark);
      return;
    }
    case Expr::Kind::kIf:
    case Expr::Kind::kApp:
      for (const auto& i : e.items) collect(*i, w);
      return;
  }
}

}  // namespace

std::vector<const Expr*> free_names(const Expr& e) {
  Walk w;
  collect(e, w);
  return std::move(w.out);
}

}  // namespace vnt
