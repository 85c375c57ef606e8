// Turns parser syntax into Exprs and validated directives: special forms, {params}, arity of forms.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parser/syntax.hpp"
#include "runtime/syntax/expr.hpp"

namespace vnt {

/// External parameters `{name}`: name -> value text as given on the command line or by the API.
using ParamMap = std::map<std::string, std::string, std::less<>>;

/// Analyzes one expression. Throws kSyntax for malformed special forms and kParam for a missing {param}.
ExprPtr analyze_expression(const parser::Syntax& s, const ParamMap& params);

/// The value of a parameter's text: a decimal number, true/false, or else a string. Throws kParam, at `span`,
/// for a number too large for a double.
Value parse_param_value(const std::string& text, const SourceSpan& span);

/// Replaces {param} nodes of raw syntax by their literal values (for the inference language). A replaced node keeps
/// its `{name}` span and, whatever its kind, the value's text as given in `text`.
parser::Syntax substitute_params(const parser::Syntax& s, const ParamMap& params);

/// One value column of observe_csv, as written: a header name, or a 0-based index (then `name` is empty).
struct CsvColumn {
  std::string name;
  long index = -1;
  SourceSpan span;
};

struct Directive {
  enum class Kind { kAssume, kObserve, kPredict, kInfer, kSample, kForget, kObserveCsv };
  Kind kind;
  std::string label;  // optional
  SourceSpan label_span;
  std::string name;   // assume: the bound name; forget: the label or name to forget
  SourceSpan name_span;
  ExprPtr expr;       // assume/observe/predict/sample
  ExprPtr value;      // observe: the observed value expression
  parser::Syntax infer;  // infer: the inference program (params substituted)
  // observe_csv: every row r of `path` observes (name [row index] (vector other columns)) = r[column], or with
  // column_list = (vector r[columns[0]] r[columns[1]] ...), the other columns then being those not in `columns`.
  std::string path;
  std::vector<CsvColumn> columns;  // one, unless written as a list
  bool column_list = false;
  bool with_index = false;
  SourceSpan span;
};

/// Validates a parsed directive and analyzes its expressions.
Directive analyze_directive(const parser::DirectiveSyntax& d, const ParamMap& params);

}  // namespace vnt
