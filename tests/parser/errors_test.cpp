// Exact syntax error messages with their line:col, and garbage inputs that must give a clean error.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <random>
#include <string>
#include <string_view>

#include "parser/syntax.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/error.hpp"
#include "tests/support/source_file.hpp"

namespace vnt::parser::errors_tests {
namespace {

using test::source;

// "line:col: message" of the error, or "no error".
template <typename F>
std::string error_of(F&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kSyntax);
    return fmt::format("{}:{}: {}", e.span().line, e.span().col, e.message());
  }
  return "no error";
}
std::string program_error(std::string text) {
  return error_of([&] { parse_program(source(std::move(text))); });
}
std::string expression_error(std::string text) {
  return error_of([&] { parse_expression(source(std::move(text))); });
}

TEST_CASE("unclosed brackets: the span is the opening bracket") {
  CHECK(program_error("[assume a 1]\n[predict\n    (f x") ==
        "3:5: unexpected end of input: expected ')' to close '(' opened at 3:5");
  CHECK(program_error("[assume x (f (g 1)") ==
        "1:11: unexpected end of input: expected ')' to close '(' opened at 1:11");
  CHECK(program_error("[assume x 1") == "1:1: unexpected end of input: expected ']' to close '[' opened at 1:1");
  CHECK(program_error("[assume x 1\n[predict x]") == "2:1: expected ']' to close '[' opened at 1:1, found '['");
  CHECK(program_error("[assume x (f 1]") == "1:15: expected ')' to close '(' opened at 1:11, found ']'");
  CHECK(program_error("[assume x (f [1])]") == "1:14: expected ')' to close '(' opened at 1:11, found '['");
  CHECK(program_error("[") == "1:1: unexpected end of input: expected ']' to close '[' opened at 1:1");
}

TEST_CASE("stray closers") {
  CHECK(program_error("[assume x 1)]") == "1:12: unexpected ')'");
  CHECK(program_error("[assume x 1]\n)") == "2:1: unexpected ')'");
  CHECK(program_error("]") == "1:1: unexpected ']'");
  CHECK(program_error("[predict x}]") == "1:11: unexpected '}'");
  CHECK(program_error("[predict x: 1]") == "1:11: unexpected ':'");
  CHECK(program_error(":") == "1:1: unexpected ':'");
}

TEST_CASE("directive structure") {
  CHECK(program_error("[ ]") == "1:1: empty directive");
  CHECK(program_error("[assume x 1]\n  []") == "2:3: empty directive");
  CHECK(program_error("[(f) x]") == "1:2: expected a directive name after '[', found '('");
  CHECK(program_error("[1 x]") == "1:2: expected a directive name after '[', found '1'");
  CHECK(program_error("x") == "1:1: expected a directive in brackets, found 'x'");
  CHECK(program_error("[predict x]\n(f x)") == "2:1: expected a directive in brackets, found '('");
  CHECK(program_error("\"s\"") == "1:1: expected a directive in brackets, found '\"s\"'");
  CHECK(program_error("lbl: x") == "1:6: expected '[' after 'lbl:', found 'x'");
  CHECK(program_error("lbl:") == "1:5: expected '[' after 'lbl:', found end of input");
  CHECK(program_error("1: [predict x]") == "1:1: expected a label name before ':', found '1'");
}

TEST_CASE("atoms, strings and params") {
  CHECK(program_error("[predict \"abc") == "1:10: unterminated string");
  CHECK(program_error("[predict \"abc\\") == "1:10: unterminated string");
  CHECK(program_error("[predict \"a\nb\\\"") == "1:10: unterminated string");
  CHECK(program_error(R"([predict "a\qb"])") == R"(1:12: unknown escape '\q' in string)");
  CHECK(program_error(R"([predict "a\x4"])") == R"(1:12: malformed escape '\x4' in string: \x takes two hex digits)");
  CHECK(program_error(R"([predict "\xg1"])") == R"(1:11: malformed escape '\x' in string: \x takes two hex digits)");
  CHECK(program_error("[predict {}]") == "1:11: expected a parameter name in {...}, found '}'");
  CHECK(program_error("[predict {(x)}]") == "1:11: expected a parameter name in {...}, found '('");
  CHECK(program_error("[predict {a b}]") == "1:13: expected '}' to close '{' opened at 1:10, found 'b'");
  CHECK(program_error("[predict {") == "1:11: expected a parameter name in {...}, found end of input");
  CHECK(program_error("[predict 1x]") == "1:10: malformed number '1x'");
  CHECK(program_error("[predict (+ 1.2.3)]") == "1:13: malformed number '1.2.3'");
  CHECK(program_error("[predict 1e999]") == "1:10: number out of range: '1e999'");
  // A negative exponent does not make it small (this one was read as 0).
  CHECK(program_error("[predict 1" + std::string(400, '0') + "e-1]") ==
        "1:10: number out of range: '1" + std::string(23, '0') + "...'");
  CHECK(program_error("[predict '(a ')]") == "1:15: expected an expression after ''', found ')'");
  CHECK(program_error("[predict ']") == "1:11: expected an expression after ''', found ']'");
  CHECK(program_error("[predict x] 'y") == "1:13: expected a directive in brackets, found '''");
  CHECK(program_error(std::string(30, 'a')) ==
        "1:1: expected a directive in brackets, found 'aaaaaaaaaaaaaaaaaaaaaaaa...'");
}

TEST_CASE("parse_expression errors") {
  CHECK(expression_error("") == "1:1: expected an expression, found end of input");
  CHECK(expression_error("  ; nothing\n") == "2:1: expected an expression, found end of input");
  CHECK(expression_error("x y") == "1:3: expected end of input after the expression, found 'y'");
  CHECK(expression_error("(f x))") == "1:6: expected end of input after the expression, found ')'");
  CHECK(expression_error("[predict x]") == "1:1: unexpected '['");
  CHECK(expression_error(")") == "1:1: unexpected ')'");
  CHECK(expression_error("(f\n  (g") == "2:3: unexpected end of input: expected ')' to close '(' opened at 2:3");
  CHECK(expression_error("'") == "1:2: expected an expression after ''', found end of input");
  CHECK(expression_error("lbl: x") == "1:4: expected end of input after the expression, found ':'");
}

// The full rendering of a program's syntax error, or "no error".
std::string rendered_error(std::string text) {
  try {
    parse_program(source(std::move(text)));
  } catch (const Error& e) {
    return render_error(e);
  }
  return "no error";
}

TEST_CASE("rendered gcc-style with a caret") {
  CHECK(rendered_error("[assume x 1]\n[predict (f x]\n") ==
        "t.vnt:2:14: error: expected ')' to close '(' opened at 2:10, found ']'\n"
        "    2 | [predict (f x]\n"
        "      |              ^\n");
}

// Columns count code points, so the caret lines up under text with multi-byte UTF-8 before it (it was shifted
// right by one per continuation byte); a tab before the column is kept as a tab in the padding.
TEST_CASE("columns count code points and the caret lines up after multi-byte UTF-8 and tabs") {
  CHECK(rendered_error("[predict (list \"h\xC3\xA9\" '\xE2\x88\x9A\xF0\x9D\x91\xA5 (f x]\n") ==
        "t.vnt:1:29: error: expected ')' to close '(' opened at 1:25, found ']'\n"
        "    1 | [predict (list \"h\xC3\xA9\" '\xE2\x88\x9A\xF0\x9D\x91\xA5 (f x]\n"
        "      |                             ^\n");
  CHECK(rendered_error("[predict\t(list '\xC3\xA9\xC3\xA9 (g \xC3\xA9]") ==
        "t.vnt:1:24: error: expected ')' to close '(' opened at 1:20, found ']'\n"
        "    1 | [predict\t(list '\xC3\xA9\xC3\xA9 (g \xC3\xA9]\n"
        "      |         \t              ^\n");
  // A wide character takes two cells in a terminal, and two blanks or tildes under it; the column counts it once.
  CHECK(rendered_error("[predict (list \"\xE6\x97\xA5\xE6\x9C\xAC\" (f \xE6\x97\xA5]") ==
        "t.vnt:1:25: error: expected ')' to close '(' opened at 1:21, found ']'\n"
        "    1 | [predict (list \"\xE6\x97\xA5\xE6\x9C\xAC\" (f \xE6\x97\xA5]\n"
        "      |                            ^\n");
  CHECK(rendered_error("[predict 1\xEF\xBC\x91]") ==  // a fullwidth digit one
        "t.vnt:1:10: error: malformed number '1\xEF\xBC\x91'\n"
        "    1 | [predict 1\xEF\xBC\x91]\n"
        "      |          ^~~\n");
}

// What rendered_error() gives for an error at `where` ("line:col: message") on a line shown as `shown`, with the
// caret after `blanks` blanks and `tildes` tildes after it.
std::string rendering(std::string_view where, std::string_view shown, size_t blanks, size_t tildes = 0) {
  uint32_t line = static_cast<uint32_t>(std::stoul(std::string(where)));
  return fmt::format("t.vnt:{}\n{:>5} | {}\n      | {}^{}\n", where, line, shown, std::string(blanks, ' '),
                     std::string(tildes, '~'));
}

// Control characters in the excerpt and in a quoted token are escaped (a raw ESC would act on the terminal, a raw
// NUL cut the line), and the caret and tildes stay under their columns, each escape as wide as it is shown.
TEST_CASE("control characters are shown escaped and the caret stays under its column") {
  // 27 columns before the ']', two of them shown as 4 characters.
  CHECK(rendered_error("[predict (list \"\x1b[2J\x07\" (f x]\n") ==
        rendering("1:28: error: expected ')' to close '(' opened at 1:24, found ']'",
                  "[predict (list \"\\x1b[2J\\x07\" (f x]", 25 + 2 * 4));
  // The underline of a token spans its escapes: 1 + 4 + 4 characters.
  CHECK(rendered_error("[predict 1\x1b\x7f]") ==
        rendering("1:10: error: malformed number '1\\x1b\\x7f'", "[predict 1\\x1b\\x7f]", 9, 8));
  // U+009B, a C1 control (some terminals take it for ESC [), is one column shown as 8 characters.
  CHECK(rendered_error("[predict 2\xC2\x9B]") ==
        rendering("1:10: error: malformed number '2\\xc2\\x9b'", "[predict 2\\xc2\\x9b]", 9, 8));
  // So is U+202E, a bidirectional control that would show the rest of the line reversed: 12 characters.
  CHECK(rendered_error("[predict 3\xE2\x80\xAE]") ==
        rendering("1:10: error: malformed number '3\\xe2\\x80\\xae'", "[predict 3\\xe2\\x80\\xae]", 9, 12));
}

// A byte that is not part of a well-formed UTF-8 character is one column, in line:col and under the caret alike
// (a stray continuation byte counted none, and the caret after it was one column left of the reported column).
TEST_CASE("each byte of malformed UTF-8 is one column, shown escaped") {
  // 25 columns before the ']', four of them malformed bytes shown as 4 characters each.
  CHECK(rendered_error("[predict (list '\x80\xff\xE2\x82 (f x]") ==
        rendering("1:26: error: expected ')' to close '(' opened at 1:22, found ']'",
                  "[predict (list '\\x80\\xff\\xe2\\x82 (f x]", 21 + 4 * 4));
  // Overlong forms and surrogates are malformed too; a well-formed character after them is one column.
  CHECK(program_error("[predict '\xC0\xAF\xED\xA0\x80\xC3\xA9 (f x]") ==
        "1:22: expected ')' to close '(' opened at 1:18, found ']'");
}

// A line ends at LF, CR LF or a lone CR: the excerpt shows no CR, and a file of CR-only lines has as many lines
// as it shows (it was one line, and a comment ran to the end of the file).
TEST_CASE("line breaks: LF, CR LF and a lone CR") {
  const std::string where = "3:14: error: expected ')' to close '(' opened at 3:10, found ']'";
  for (const char* text : {"[assume x 1]\n; note\n[predict (f x]\n", "[assume x 1]\r\n; note\r\n[predict (f x]\r\n",
                           "[assume x 1]\r; note\r[predict (f x]\r"})
    CHECK(rendered_error(text) == rendering(where, "[predict (f x]", 13));
  CHECK(program_error("[assume x 1]\n; note\r\r\n\r\r\n\r[predict (f x]") ==
        "7:14: expected ')' to close '(' opened at 7:10, found ']'");
  // The quoted token is cut at a line break of any kind.
  CHECK(program_error("[predict x]\"a\rb\"") == "1:12: expected a directive in brackets, found '\"a...'");
}

// A line longer than 160 columns is shown as 160 of them around the error's column, "..." where it is cut: a 6 MB
// line of one program was echoed whole with its error.
TEST_CASE("the excerpt of a long line is a window around the error") {
  CHECK(rendered_error("[predict " + std::string(10000, '(')) ==
        "t.vnt:1:1010: error: nesting too deep: more than 1000 levels\n"
        "    1 | ..." + std::string(160, '(') + "...\n"
        "      | " + std::string(3 + 60, ' ') + "^\n");
  // Near the end of the line, the window ends with it; near its start, it starts with it.
  CHECK(rendered_error("[predict (list" + std::string(300, ' ') + "(f x]") ==
        "t.vnt:1:319: error: expected ')' to close '(' opened at 1:315, found ']'\n"
        "    1 | ..." + std::string(155, ' ') + "(f x]\n"
        "      | " + std::string(3 + 159, ' ') + "^\n");
  CHECK(rendered_error("[predict (f x]" + std::string(300, ' ')) ==
        "t.vnt:1:14: error: expected ')' to close '(' opened at 1:10, found ']'\n"
        "    1 | [predict (f x]" + std::string(146, ' ') + "...\n"
        "      |              ^\n");
}

// The text of a span is cut at code points too (infer_lang quotes it in its messages).
TEST_CASE("span_text of an expression after multi-byte UTF-8") {
  std::vector<DirectiveSyntax> d = parse_program(source("[predict (list '\xC3\xA9\xC3\xA9 (g '\xC3\xA9) 1)]"));
  REQUIRE(d.size() == 1);
  const Syntax& call = d[0].args[0].items[2];
  CHECK(call.span.col == 20);
  CHECK(call.span.end_col == 26);
  CHECK(span_text(call.span) == "(g '\xC3\xA9)");
}

TEST_CASE("deep nesting: a clean error, no stack overflow") {
  std::string deep = "[predict " + std::string(10000, '(');
  CHECK(program_error(deep) == "1:1010: nesting too deep: more than 1000 levels");  // the directive's '[' is no level
  CHECK(expression_error(std::string(10000, '\'') + "x") == "1:1001: nesting too deep: more than 1000 levels");
  std::string mixed;
  for (int i = 0; i < 5000; ++i) mixed += "'(";
  CHECK(expression_error(mixed) == "1:1001: nesting too deep: more than 1000 levels");
  // Exactly at the limit still parses.
  std::string ok = std::string(1000, '(') + std::string(1000, ')');
  Syntax s = parse_expression(source(ok));
  CHECK(s.kind == Syntax::Kind::kList);
  std::string ok_program = "[predict " + std::string(1000, '(') + std::string(1000, ')') + "]";
  CHECK(parse_program(source(ok_program)).size() == 1);
  CHECK(program_error("[predict " + std::string(1001, '(') + std::string(1001, ')') + "]") ==
        "1:1010: nesting too deep: more than 1000 levels");
}

// Every input either parses or gives a kSyntax error from the structural check. Messages that end in ')' come
// from the ANTLR fallback listener ("unexpected X (antlr message)"), which the check should make unreachable.
void check_garbage(const std::string& text) {
  CAPTURE(text);
  for (bool as_program : {true, false}) {
    try {
      if (as_program)
        parse_program(source(text));
      else
        parse_expression(source(text));
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kSyntax);
      CHECK(e.has_span());
      CHECK(e.message().back() != ')');
    }
  }
}

TEST_CASE("garbage inputs give a clean error") {
  std::mt19937 rng(12345);
  for (int n = 0; n < 200; ++n) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    check_garbage(bytes);
  }
  const char alphabet[] = "()[]{}'\":;\\ \nax1-.e";
  for (int n = 0; n < 2000; ++n) {
    std::string soup(rng() % 16, ' ');
    for (char& c : soup) c = alphabet[rng() % (sizeof alphabet - 1)];
    check_garbage(soup);
    check_garbage("[assume " + soup + "]");
  }
  const std::string nul(1, '\0');
  for (const std::string& text : {"\xff\xfe[predict x]" + nul, "[predict " + nul + "x]", std::string("[[[["),
                                  std::string("]]]]"), std::string("{{}}"), std::string("'''''"), std::string("\"\\"),
                                  std::string("a:b:c"), std::string("x: y: [z]"), std::string("[a]b")})
    check_garbage(text);
  CHECK(program_error("[predict x]" + nul) == "1:12: expected a directive in brackets, found '\\x00'");
}

TEST_CASE("count_directives counts the directives an input opens, whether or not it parses") {
  auto count = [](std::string text) {
    return count_directives(source(std::move(text)));
  };
  CHECK(count("") == 0);
  CHECK(count("[predict 1] a: [predict (+ 1 2))] [predict 3") == 3);
  CHECK(count("; [predict 1]\n[predict \"[ ]\"] [predict 2]") == 2);  // not in comments or strings
  CHECK(count("[predict 1] [predict \"abc] [predict 2]") == 2);      // an unterminated string runs to the end
  CHECK(count("\xff[\x80") == 1);
}

}  // namespace
}  // namespace vnt::parser::errors_tests
