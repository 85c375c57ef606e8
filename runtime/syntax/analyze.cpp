// Special forms (quote, lambda, if, let) and directive shapes. `let` becomes ((lambda (x...) body) e...).
// SPDX-License-Identifier: Apache-2.0
#include "runtime/syntax/analyze.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/read_double.hpp"

namespace vnt {

using parser::Syntax;

std::string Expr::text() const { return parser::span_text(span); }

namespace {

/// A {name} that no parameter gives: pprun takes parameters on its command line, an application in Options.
[[noreturn]] void missing_param(const parser::Syntax& s) {
  raise_at(s.span, ErrorKind::kParam,
           "missing parameter {{{}}} (give it with --param {}=VALUE, or Options::params in the C++ API)", s.text,
           s.text);
}

bool is_symbol(const Syntax& s, std::string_view name) {
  return s.kind == Syntax::Kind::kSymbol && s.text == name;
}

Value datum_value(const Syntax& s) {
  switch (s.kind) {
    case Syntax::Kind::kNumber: return s.number;
    case Syntax::Kind::kBool: return s.boolean;
    case Syntax::Kind::kString: return make_string(s.text);
    case Syntax::Kind::kSymbol: return make_symbol(s.text);
    case Syntax::Kind::kQuote: return make_list({make_symbol("quote"), datum_value(s.items[0])});
    case Syntax::Kind::kParam:
      raise_at(s.span, ErrorKind::kSyntax, "a parameter {{{}}} cannot appear inside a quoted datum", s.text);
    case Syntax::Kind::kList: {
      std::vector<Value> items;
      for (const Syntax& i : s.items) items.push_back(datum_value(i));
      return make_list(std::move(items));
    }
  }
  return Nil{};
}

ExprPtr make_const(Value v, const SourceSpan& span) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kConst;
  e->value = std::move(v);
  e->span = span;
  return e;
}

std::vector<std::string> param_names(const Syntax& list, std::string_view form) {
  if (list.kind != Syntax::Kind::kList)
    raise_at(list.span, ErrorKind::kSyntax, "{}: expected a parameter list in parentheses", form);
  std::vector<std::string> names;
  for (const Syntax& p : list.items) {
    if (p.kind != Syntax::Kind::kSymbol)
      raise_at(p.span, ErrorKind::kSyntax, "{}: parameter names must be symbols", form);
    // A repeated name would silently bind the first argument and ignore the other.
    if (std::find(names.begin(), names.end(), p.text) != names.end())
      raise_at(p.span, ErrorKind::kSyntax, "{}: parameter '{}' appears twice", form, p.text);
    names.push_back(p.text);
  }
  return names;
}

void check_form_size(const Syntax& s, size_t n, std::string_view form, std::string_view shape) {
  if (s.items.size() != n) raise_at(s.span, ErrorKind::kSyntax, "{}: expected {}", form, shape);
}

ExprPtr analyze(const Syntax& s, const ParamMap& params);

ExprPtr analyze_list(const Syntax& s, const ParamMap& params) {
  if (s.items.empty()) return make_const(make_list({}), s.span);
  const Syntax& head = s.items[0];
  auto e = std::make_unique<Expr>();
  e->span = s.span;
  if (is_symbol(head, "quote")) {
    check_form_size(s, 2, "quote", "(quote datum)");
    return make_const(datum_value(s.items[1]), s.span);
  }
  if (is_symbol(head, "lambda")) {
    check_form_size(s, 3, "lambda", "(lambda (params...) body)");
    e->kind = Expr::Kind::kLambda;
    e->params = param_names(s.items[1], "lambda");
    e->items.push_back(analyze(s.items[2], params));
    return e;
  }
  if (is_symbol(head, "if")) {
    check_form_size(s, 4, "if", "(if condition consequent alternative)");
    e->kind = Expr::Kind::kIf;
    for (size_t i = 1; i < 4; ++i) e->items.push_back(analyze(s.items[i], params));
    return e;
  }
  if (is_symbol(head, "let")) {
    check_form_size(s, 3, "let", "(let ((name expr) ...) body)");
    const Syntax& bindings = s.items[1];
    if (bindings.kind != Syntax::Kind::kList)
      raise_at(bindings.span, ErrorKind::kSyntax, "let: expected a list of bindings ((name expr) ...)");
    auto lambda = std::make_unique<Expr>();
    lambda->kind = Expr::Kind::kLambda;
    lambda->span = s.span;
    e->kind = Expr::Kind::kApp;
    e->items.push_back(nullptr);
    for (const Syntax& b : bindings.items) {
      if (b.kind != Syntax::Kind::kList || b.items.size() != 2 || b.items[0].kind != Syntax::Kind::kSymbol)
        raise_at(b.span, ErrorKind::kSyntax, "let: each binding must be (name expr)");
      if (std::find(lambda->params.begin(), lambda->params.end(), b.items[0].text) != lambda->params.end())
        raise_at(b.items[0].span, ErrorKind::kSyntax, "let: '{}' is bound twice", b.items[0].text);
      lambda->params.push_back(b.items[0].text);
      e->items.push_back(analyze(b.items[1], params));
    }
    lambda->items.push_back(analyze(s.items[2], params));
    e->items[0] = std::move(lambda);
    return e;
  }
  e->kind = Expr::Kind::kApp;
  for (const Syntax& i : s.items) e->items.push_back(analyze(i, params));
  return e;
}

ExprPtr analyze(const Syntax& s, const ParamMap& params) {
  switch (s.kind) {
    case Syntax::Kind::kNumber: return make_const(s.number, s.span);
    case Syntax::Kind::kBool: return make_const(s.boolean, s.span);
    case Syntax::Kind::kString: return make_const(make_string(s.text), s.span);
    case Syntax::Kind::kQuote: return make_const(datum_value(s.items[0]), s.span);
    case Syntax::Kind::kParam: {
      auto it = params.find(s.text);
      if (it == params.end()) missing_param(s);
      return make_const(parse_param_value(it->second, s.span), s.span);
    }
    case Syntax::Kind::kSymbol: {
      // A {param} of an inference program (a collect expression) is a string, as in any other expression.
      if (s.from_param) return make_const(make_string(s.text), s.span);
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::kVar;
      e->name = s.text;
      e->span = s.span;
      return e;
    }
    case Syntax::Kind::kList: return analyze_list(s, params);
  }
  return nullptr;
}

}  // namespace

ExprPtr analyze_expression(const Syntax& s, const ParamMap& params) { return analyze(s, params); }

Value parse_param_value(const std::string& text, const SourceSpan& span) {
  // Only decimal numbers, as in a program: from_chars alone also reads "nan", "inf" and "infinity".
  size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
  bool decimal = sign < text.size() && (std::isdigit(static_cast<unsigned char>(text[sign])) || text[sign] == '.');
  double d = 0;
  if (decimal) {
    // As for a literal: too small is 0, too large an error (both used to become strings).
    const std::errc ec = read_double(text, d);
    if (ec == std::errc()) return d;
    if (ec == std::errc::result_out_of_range)
      raise_at(span, ErrorKind::kParam, "parameter value '{}' is too large for a number", text);
  }
  if (text == "true") return true;
  if (text == "false") return false;
  return make_string(text);
}

namespace {

Syntax substitute(const Syntax& s, const ParamMap& params) {
  if (s.kind == Syntax::Kind::kParam) {
    auto it = params.find(s.text);
    if (it == params.end()) missing_param(s);
    Syntax out;
    out.span = s.span;
    out.from_param = true;
    out.text = it->second;  // the value as given, for messages (the span's text is `{name}`)
    Value v = parse_param_value(it->second, s.span);
    if (is_number(v)) {
      out.kind = Syntax::Kind::kNumber;
      out.number = std::get<double>(v);
    } else if (is_bool(v)) {
      out.kind = Syntax::Kind::kBool;
      out.boolean = std::get<bool>(v);
    } else {
      out.kind = Syntax::Kind::kSymbol;
    }
    return out;
  }
  Syntax out = s;
  for (Syntax& i : out.items) i = substitute(i, params);
  return out;
}

void expect_args(const parser::DirectiveSyntax& d, size_t n, std::string_view shape) {
  if (d.args.size() != n)
    raise_at(d.span, ErrorKind::kSyntax, "{}: expected [{}], got {} argument{}", d.keyword, shape, d.args.size(),
             d.args.size() == 1 ? "" : "s");
}

/// One value column of observe_csv: a name (a symbol or a string) or a 0-based index; nullopt for anything else.
std::optional<CsvColumn> csv_column(const Syntax& s) {
  CsvColumn c;
  c.span = s.span;
  // The bound keeps the cast to long defined (1e300 is not an index).
  if (s.kind == Syntax::Kind::kSymbol || s.kind == Syntax::Kind::kString)
    c.name = s.text;
  else if (s.kind == Syntax::Kind::kNumber && s.number >= 0 && s.number < 9007199254740992.0 &&
           s.number == std::floor(s.number))
    c.index = static_cast<long>(s.number);
  else
    return std::nullopt;
  return c;
}

/// observe_csv's value column `col` into `out`: one column, or a parenthesised list of them (the value a vector).
void csv_value_columns(const Syntax& col, Directive& out) {
  if (col.kind != Syntax::Kind::kList) {
    std::optional<CsvColumn> c = csv_column(col);
    if (!c)
      raise_at(col.span, ErrorKind::kSyntax,
               "observe_csv: the value column must be a column name, a 0-based index or a list of them");
    out.columns.push_back(std::move(*c));
    return;
  }
  if (col.items.empty()) raise_at(col.span, ErrorKind::kSyntax, "observe_csv: the list of value columns is empty");
  out.column_list = true;
  for (const Syntax& item : col.items) {
    std::optional<CsvColumn> c = csv_column(item);
    if (!c)
      raise_at(item.span, ErrorKind::kSyntax,
               "observe_csv: each value column in a list must be a column name or a 0-based index");
    out.columns.push_back(std::move(*c));
  }
}

Directive directive(const parser::DirectiveSyntax& d, const ParamMap& params) {
  Directive out;
  out.label = d.label;
  out.label_span = d.label_span;
  out.span = d.span;
  const std::string& k = d.keyword;
  if (k == "assume") {
    expect_args(d, 2, "assume name expression");
    if (d.args[0].kind != Syntax::Kind::kSymbol)
      raise_at(d.args[0].span, ErrorKind::kSyntax, "assume: the name must be a symbol");
    out.kind = Directive::Kind::kAssume;
    out.name = d.args[0].text;
    out.name_span = d.args[0].span;
    out.expr = analyze(d.args[1], params);
  } else if (k == "observe") {
    expect_args(d, 2, "observe expression value");
    out.kind = Directive::Kind::kObserve;
    out.expr = analyze(d.args[0], params);
    out.value = analyze(d.args[1], params);
  } else if (k == "predict" || k == "sample") {
    expect_args(d, 1, k + " expression");
    out.kind = k == "predict" ? Directive::Kind::kPredict : Directive::Kind::kSample;
    out.expr = analyze(d.args[0], params);
  } else if (k == "infer") {
    expect_args(d, 1, "infer expression");
    out.kind = Directive::Kind::kInfer;
    out.infer = substitute(d.args[0], params);
  } else if (k == "forget") {
    expect_args(d, 1, "forget label");
    if (d.args[0].kind != Syntax::Kind::kSymbol)
      raise_at(d.args[0].span, ErrorKind::kSyntax, "forget: expected a directive label");
    out.kind = Directive::Kind::kForget;
    out.name = d.args[0].text;
    out.name_span = d.args[0].span;
  } else if (k == "observe_csv") {
    constexpr std::string_view kShape =
        "[observe_csv procedure \"file.csv\" value-column-or-(columns...) ['with_index]]";
    if (d.args.size() < 3 || d.args.size() > 4)
      raise_at(d.span, ErrorKind::kSyntax, "observe_csv: expected {}", kShape);
    // {name} parameters may stand for any argument; a parameter's text (a symbol once substituted) is a file name.
    std::vector<Syntax> args;
    for (const Syntax& a : d.args) args.push_back(substitute(a, params));
    if (args[0].kind != Syntax::Kind::kSymbol)
      raise_at(args[0].span, ErrorKind::kSyntax, "observe_csv: the procedure must be a name, in {}", kShape);
    bool file_param = d.args[1].kind == Syntax::Kind::kParam && args[1].kind == Syntax::Kind::kSymbol;
    if (args[1].kind != Syntax::Kind::kString && !file_param)
      raise_at(args[1].span, ErrorKind::kSyntax, "observe_csv: the file must be a string, in {}", kShape);
    out.kind = Directive::Kind::kObserveCsv;
    out.name = args[0].text;
    out.name_span = args[0].span;
    out.path = args[1].text;
    csv_value_columns(args[2], out);
    if (args.size() == 4) {
      // 'with_index, with_index or the long form (quote with_index).
      const Syntax& a3 = args[3];
      bool long_quote = a3.kind == Syntax::Kind::kList && a3.items.size() == 2 && is_symbol(a3.items[0], "quote");
      const Syntax& f = a3.kind == Syntax::Kind::kQuote ? a3.items[0] : long_quote ? a3.items[1] : a3;
      if (f.kind != Syntax::Kind::kSymbol || f.text != "with_index")
        raise_at(args[3].span, ErrorKind::kSyntax, "observe_csv: unknown option (known: 'with_index)");
      out.with_index = true;
    }
  } else {
    raise_at(d.keyword_span, ErrorKind::kSyntax,
             "unknown directive '{}' (expected assume, observe, observe_csv, predict, infer, sample or forget)", k);
  }
  // A label names what forget and report can find, or a printed value: one on these would be silently dropped.
  if (!d.label.empty() && (out.kind == Directive::Kind::kInfer || out.kind == Directive::Kind::kForget))
    raise_at(d.label_span, ErrorKind::kSyntax,
             "{}: cannot carry a label (a label names an assume, observe, observe_csv, predict or sample)", k);
  return out;
}

}  // namespace

Syntax substitute_params(const Syntax& s, const ParamMap& params) { return substitute(s, params); }

Directive analyze_directive(const parser::DirectiveSyntax& d, const ParamMap& params) { return directive(d, params); }

}  // namespace vnt
