// The parser's trees and spans: each form, labels, comments, numbers, strings, quote, params, span_text.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <thread>

#include "parser/syntax.hpp"
#include "tests/support/source_file.hpp"

namespace vnt::parser::parse_tests {
namespace {

using Kind = Syntax::Kind;

using test::source;
std::vector<DirectiveSyntax> program(std::string text) { return parse_program(source(std::move(text))); }
Syntax expression(std::string text) { return parse_expression(source(std::move(text))); }

// "line:col-end_line:end_col"
std::string where(const SourceSpan& s) { return fmt::format("{}:{}-{}:{}", s.line, s.col, s.end_line, s.end_col); }

TEST_CASE("a directive: keyword, arguments and spans") {
  auto ds = program("[assume x (normal 0 1)]");
  REQUIRE(ds.size() == 1);
  const DirectiveSyntax& d = ds[0];
  CHECK(d.label.empty());
  CHECK(d.keyword == "assume");
  CHECK(where(d.keyword_span) == "1:2-1:8");
  CHECK(where(d.span) == "1:1-1:24");
  REQUIRE(d.args.size() == 2);
  CHECK(d.args[0].kind == Kind::kSymbol);
  CHECK(d.args[0].text == "x");
  CHECK(where(d.args[0].span) == "1:9-1:10");
  const Syntax& call = d.args[1];
  CHECK(call.kind == Kind::kList);
  CHECK(where(call.span) == "1:11-1:23");
  REQUIRE(call.items.size() == 3);
  CHECK(call.items[0].text == "normal");
  CHECK(call.items[1].kind == Kind::kNumber);
  CHECK(call.items[2].number == 1.0);
  CHECK(where(call.items[2].span) == "1:21-1:22");
  CHECK(span_text(call.span) == "(normal 0 1)");
}

TEST_CASE("normalized_text: atoms as written, one space between items, no comments") {
  auto ds = program("[predict ( f  1.50 ; a comment\n  '( a   \"s  t\" ) {n}\t( ) )]");
  REQUIRE(ds.size() == 1);
  CHECK(normalized_text(ds[0].args[0]) == "(f 1.50 '(a \"s  t\") {n} ())");
}

TEST_CASE("keywords and argument counts are not validated here") {
  auto ds = program("[observe (normal x 1) 2.5] [predict x] [infer (mh default one 10)] [sample] [frobnicate 1 2 3]");
  REQUIRE(ds.size() == 5);
  CHECK(ds[0].keyword == "observe");
  CHECK(ds[0].args.size() == 2);
  CHECK(ds[3].keyword == "sample");
  CHECK(ds[3].args.empty());
  CHECK(ds[4].keyword == "frobnicate");
  CHECK(ds[4].args.size() == 3);
}

TEST_CASE("labels: the directive span covers the label") {
  auto ds = program("[assume x 1]\n  lbl: [predict x]\nother :\n [forget lbl]");
  REQUIRE(ds.size() == 3);
  CHECK(ds[0].label.empty());
  CHECK(ds[1].label == "lbl");
  CHECK(where(ds[1].label_span) == "2:3-2:6");
  CHECK(where(ds[1].span) == "2:3-2:19");
  CHECK(span_text(ds[1].span) == "lbl: [predict x]");
  CHECK(ds[2].label == "other");
  CHECK(ds[2].keyword == "forget");
  CHECK(ds[2].args[0].text == "lbl");
  CHECK(where(ds[2].span) == "3:1-4:14");
}

TEST_CASE("comments and whitespace") {
  CHECK(program("").empty());
  CHECK(program("  ; only a comment\n\t\n").empty());
  auto ds = program("; model\n[assume x ; the prior\n  (normal 0 1)] ; done\r\n[predict x];end");
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].args.size() == 2);
  CHECK(where(ds[0].args[1].span) == "3:3-3:15");
  CHECK(where(ds[1].span) == "4:1-4:12");
  CHECK(expression("  ; lead\n x ; trail").text == "x");
}

TEST_CASE("numbers") {
  struct Case {
    const char* text;
    double value;
  };
  for (Case c : {Case{"1", 1}, Case{"-2.5", -2.5}, Case{"1e-3", 1e-3}, Case{".5", 0.5}, Case{"+3", 3},
                 Case{"1E+2", 100}, Case{"-.5e1", -5}, Case{"1.", 1}, Case{"007", 7}, Case{"1e-400", 0},
                 Case{"-1e-400", -0.0}, Case{"0.000000000000000000001e-300", 1e-321}}) {
    CAPTURE(c.text);
    Syntax s = expression(c.text);
    CHECK(s.kind == Kind::kNumber);
    CHECK(s.number == c.value);
  }
  Syntax list = expression("(- -1 - -x)");
  REQUIRE(list.items.size() == 4);
  CHECK(list.items[0].kind == Kind::kSymbol);
  CHECK(list.items[1].kind == Kind::kNumber);
  CHECK(list.items[1].number == -1);
  CHECK(list.items[2].kind == Kind::kSymbol);
  CHECK(list.items[3].kind == Kind::kSymbol);
  CHECK(list.items[3].text == "-x");
}

TEST_CASE("booleans and symbols") {
  CHECK(expression("true").kind == Kind::kBool);
  CHECK(expression("true").boolean);
  CHECK_FALSE(expression("false").boolean);
  for (const char* sym : {"x", "+", "<=", "make_csp", "y_x", "-", "...", "inf", "truex", "a.b", "\xce\xb1"}) {
    CAPTURE(sym);
    Syntax s = expression(sym);
    CHECK(s.kind == Kind::kSymbol);
    CHECK(s.text == sym);
  }
}

TEST_CASE("strings with escapes") {
  Syntax s = expression(R"("say \"hi\"\\ \n\tok")");
  CHECK(s.kind == Kind::kString);
  CHECK(s.text == "say \"hi\"\\ \n\tok");
  CHECK(where(s.span) == "1:1-1:22");
  CHECK(expression(R"("")").text.empty());
  CHECK(expression("\"a;b(c)\"").text == "a;b(c)");
  CHECK(expression(R"("a\rb")").text == "a\rb");
  // \xNN is one byte, whatever follows; bytes that are not UTF-8 are kept as they are.
  CHECK(expression(R"("\x1b[0m\x7F\x00z\xff")").text == std::string("\x1b[0m\x7f\0z\xff", 8));
  Syntax multi = expression("\"two\nlines\"");
  CHECK(multi.text == "two\nlines");
  CHECK(where(multi.span) == "1:1-2:7");
}

TEST_CASE("quote") {
  Syntax q = expression("'x");
  CHECK(q.kind == Kind::kQuote);
  REQUIRE(q.items.size() == 1);
  CHECK(q.items[0].kind == Kind::kSymbol);
  CHECK(where(q.span) == "1:1-1:3");
  Syntax ql = expression("(f ' (a 1) ''b)");
  REQUIRE(ql.items.size() == 3);
  CHECK(ql.items[1].kind == Kind::kQuote);
  CHECK(ql.items[1].items[0].kind == Kind::kList);
  CHECK(span_text(ql.items[1].span) == "' (a 1)");
  CHECK(ql.items[2].items[0].kind == Kind::kQuote);
  CHECK(ql.items[2].items[0].items[0].text == "b");
}

TEST_CASE("params and lists") {
  Syntax p = expression("(normal {mu} { sigma })");
  REQUIRE(p.items.size() == 3);
  CHECK(p.items[1].kind == Kind::kParam);
  CHECK(p.items[1].text == "mu");
  CHECK(where(p.items[1].span) == "1:9-1:13");
  CHECK(p.items[2].text == "sigma");
  CHECK(span_text(p.items[2].span) == "{ sigma }");
  Syntax empty = expression("( )");
  CHECK(empty.kind == Kind::kList);
  CHECK(empty.items.empty());
  CHECK(where(empty.span) == "1:1-1:4");
}

TEST_CASE("multi-line spans and span_text") {
  std::string text = "[assume f\n  (lambda (x)\n    (+ x 1))]\n";
  auto ds = program(text);
  const Syntax& lambda = ds[0].args[1];
  CHECK(where(lambda.span) == "2:3-3:13");
  CHECK(span_text(lambda.span) == "(lambda (x)\n    (+ x 1))");
  CHECK(span_text(lambda.items[2].span) == "(+ x 1)");
  CHECK(span_text(ds[0].span) == "[assume f\n  (lambda (x)\n    (+ x 1))]");
  CHECK(span_text(SourceSpan{}).empty());
}

TEST_CASE("parse_expression takes exactly one expression") {
  Syntax s = expression("\n (lookup w 0)\n");
  CHECK(s.kind == Kind::kList);
  CHECK(where(s.span) == "2:2-2:14");
  CHECK(span_text(s.span) == "(lookup w 0)");
}

TEST_CASE("parsing is reentrant") {
  std::string text;
  for (int i = 0; i < 50; ++i) text += fmt::format("l{}: [assume x{} (f '(a {{p}}) \"s\" {})]\n", i, i, i);
  std::vector<size_t> counts(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < counts.size(); ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) counts[t] += program(text).size();
    });
  for (std::thread& th : threads) th.join();
  for (size_t c : counts) CHECK(c == 250);
}

}  // namespace
}  // namespace vnt::parser::parse_tests
