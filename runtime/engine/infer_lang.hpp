// The inference language of [infer ...] (infer_lang.cpp): checking a program's text, and running it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "parser/syntax.hpp"
#include "runtime/syntax/analyze.hpp"

namespace vnt {

class Engine;

/// Checks what an inference program's text and the params decide: its commands, their arguments and options, and
/// collect's expressions as syntax. Scopes and blocks depend on the trace: run_infer_program checks them. Throws
/// Error (kInference, or kSyntax/kParam from a collect expression) at the offending part.
void check_infer_program(const parser::Syntax& program, const ParamMap& params);

/// Checks the program against the trace, then runs it: a sequence of transactions, one per transition.
void run_infer_program(Engine& engine, const parser::Syntax& program);

}  // namespace vnt
