// Helpers for runtime tests: run program text through an Engine, fingerprint its trace.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <unordered_set>
#include <string>
#include <vector>

#include "parser/syntax.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/regen/walk.hpp"
#include "runtime/trace/fingerprint.hpp"

namespace vnt::test {

inline void run(Engine& e, const std::string& text, const std::string& name = "test.vnt") {
  e.run_source(std::make_shared<const SourceFile>(SourceFile{name, text}));
}

/// The roots of every directive's families: an observe_csv kept one family per row (plates off, or a body no
/// plate can run) has no root of its own, only the root of each row.
inline std::vector<Node*> directive_roots(Engine& e) {
  std::vector<Node*> roots;
  for (const DirectiveRecord& r : e.directives()) {
    if (r.root != nullptr) roots.push_back(r.root);
    roots.insert(roots.end(), r.rows.begin(), r.rows.end());
  }
  return roots;
}

inline std::string fingerprint_of(Engine& e) { return fingerprint(e.trace(), directive_roots(e)); }

/// The root of the assume of `name` (the node that holds its value), or nullptr.
inline Node* assumed_root(Engine& e, const std::string& name) {
  for (const DirectiveRecord& r : e.directives())
    if (r.name == name) return r.root;
  return nullptr;
}

/// An expression kept by the engine, as a directive's.
inline const Expr* expression(Engine& e, const std::string& text, const std::string& name = "<expr>") {
  auto file = std::make_shared<const SourceFile>(SourceFile{name, text});
  return e.keep(analyze_expression(parser::parse_expression(file), {}));
}

/// The value of an expression evaluated against the current trace (sample semantics), as a number.
inline double sample_number(Engine& e, const std::string& text) {
  return std::get<double>(e.sample(expression(e, text, "<sample>")));
}

/// Counts deterministic nodes whose value differs from what their inputs give now (stale values).
inline size_t inconsistent_nodes(Engine& e) {
  std::vector<Node*> todo = directive_roots(e);
  std::unordered_set<Node*> seen;
  size_t bad = 0;
  Rng rng(0);
  while (!todo.empty()) {
    Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->kind == NodeKind::kLookup) {
      todo.push_back(as_lookup(n)->source);
      if (!values_equal(n->value, as_lookup(n)->source->value)) ++bad;
    } else if (n->kind == NodeKind::kOutput) {
      OutputNode* o = as_output(n);
      todo.push_back(o->op);
      for (Node* x : o->operands) todo.push_back(x);
      for (Node* x : o->esr_parents) todo.push_back(x);
      const SpProcedure* p = primitive_at(o);
      if (p == nullptr) {
        if (!o->esr_parents.empty() && !values_equal(n->value, o->esr_parents.back()->value)) ++bad;
      } else if (!p->sp().is_random() && !is_procedure(n->value)) {  // made procedures compare by identity
        ArgBuffer buf(o);
        if (!values_equal(n->value, p->sp().simulate(buf.args(p->aux()), rng))) ++bad;
      }
    }
  }
  return bad;
}

}  // namespace vnt::test
