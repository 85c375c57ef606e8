// Procedures the trace implements itself: compound (lambda), memoized (mem), and the `if` requester.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/trace/env.hpp"
#include "runtime/value/value.hpp"

namespace vnt {

struct Expr;
struct Node;

class CompoundProcedure final : public Procedure {
 public:
  CompoundProcedure(const Expr* lambda, EnvPtr env) : Procedure(Kind::kCompound), lambda_(lambda), env_(std::move(env)) {}
  std::string_view name() const override { return "lambda"; }
  const Expr* lambda() const { return lambda_; }
  const EnvPtr& env() const { return env_; }

 private:
  const Expr* lambda_;
  EnvPtr env_;
};

/// (mem f): one family per distinct argument list, shared by every application with equal arguments.
class MemProcedure final : public Procedure {
 public:
  explicit MemProcedure(Value inner) : Procedure(Kind::kMem), inner_(std::move(inner)) {}
  std::string_view name() const override { return "mem"; }
  const Value& inner() const { return inner_; }
  std::unordered_map<Value, Node*, KeyHash, KeyEqual>& families() { return families_; }

 private:
  Value inner_;
  std::unordered_map<Value, Node*, KeyHash, KeyEqual> families_;
};

/// The operator of `(if c a b)` nodes: requests the chosen branch as a family of its own.
class BranchProcedure final : public Procedure {
 public:
  BranchProcedure() : Procedure(Kind::kBranch) {}
  std::string_view name() const override { return "if"; }
};

}  // namespace vnt
