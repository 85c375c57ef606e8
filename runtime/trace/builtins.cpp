// Builtins that need the trace's own procedure kinds: mem and scope_include.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/builtins.hpp"

#include "runtime/sp/sp.hpp"
#include "runtime/trace/procedures.hpp"
#include "runtime/value/coerce.hpp"

namespace vnt {
namespace {

class MemSp final : public Sp {
 public:
  std::string_view name() const override { return "mem"; }
  Value simulate(const Args& args, Rng&) const override {
    check_arity("mem", args, 1);
    if (!is_procedure(args[0])) throw_arg_type(ArgRef{"mem", 1, "f"}, "a procedure", args[0]);
    return ProcPtr(std::make_shared<MemProcedure>(args[0]));
  }
};

/// (scope_include scope block expr) returns expr's value; the trace registers the tagged node.
class ScopeIncludeSp final : public Sp {
 public:
  std::string_view name() const override { return "scope_include"; }
  Value simulate(const Args& args, Rng&) const override {
    check_arity("scope_include", args, 3);
    if (!is_symbol(args[0]) && !is_string(args[0]))
      throw_arg_type(ArgRef{"scope_include", 1, "scope"}, "a symbol", args[0]);
    // Kernels on 'default take every random choice, one by one or all: its blocks could never be named.
    if (scope_name(args[0]) == "default")
      raise(ErrorKind::kDomain, "scope_include: 'default is the scope of every random choice; name another scope");
    return args[2];
  }
};

}  // namespace

void register_trace_builtins(SpRegistry& r) {
  r.add(std::make_shared<MemSp>());
  r.add(std::make_shared<ScopeIncludeSp>(), {"tag"});
}

std::string scope_name(const Value& v) {
  if (is_symbol(v)) return std::string(std::get<Symbol>(v).str());
  if (is_string(v)) return *std::get<StringPtr>(v);
  return to_string(v);
}

}  // namespace vnt
