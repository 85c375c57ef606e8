// The parser's output: plain syntax trees with spans. No ANTLR types leak out of parser/*.cpp.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/source_span.hpp"

namespace vnt::parser {

struct Syntax {
  enum class Kind {
    kNumber,  // 1, -2.5, 1e-3
    kBool,    // true, false
    kString,  // "text" (escapes \" \\ \n \t resolved)
    kSymbol,  // x, +, <=, make_csp
    kParam,   // {name}: an external parameter; `text` is the name
    kQuote,   // 'x : items[0] is the quoted datum
    kList,    // (a b c)
  };
  Kind kind = Kind::kList;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<Syntax> items;
  SourceSpan span;
  // Set by substitute_params on what a {param} became: a number, a boolean, or a symbol holding its text (the
  // name of a scope in an inference program; a string in an expression). `span` is still the `{name}`.
  bool from_param = false;
};

/// One bracketed directive: optional `label:`, then `[keyword args...]`.
struct DirectiveSyntax {
  std::string label;          // empty if none
  SourceSpan label_span;
  std::string keyword;        // assume, observe, predict, infer, sample, forget, ... (not validated here)
  SourceSpan keyword_span;
  std::vector<Syntax> args;
  SourceSpan span;            // the whole directive including the label
};

/// Parses a whole program (directives and `;` comments). Throws vnt::Error (kSyntax) with a span
/// on the first error; the message says what was expected and what was found. Columns count bytes.
/// For a '(' or '[' left open at the end of input, the span is the opening bracket. Nesting deeper
/// than 1000 lists/quotes is an error ("nesting too deep"), so no input can overflow the stack.
std::vector<DirectiveSyntax> parse_program(const std::shared_ptr<const SourceFile>& file);

/// How many directives a program text opens (its '[' tokens, which only open directives), whether or not it
/// parses: the REPL's note on an input that a syntax error stopped as a whole.
size_t count_directives(const std::shared_ptr<const SourceFile>& file);

/// Parses exactly one expression (used by the embedding API and the inference language).
/// Throws vnt::Error (kSyntax) as parse_program does, also when anything follows the expression.
Syntax parse_expression(const std::shared_ptr<const SourceFile>& file);

/// The exact source text a span covers.
std::string span_text(const SourceSpan& span);

/// The source text of `s` with its atoms as written, one space between a list's items and comments dropped: the
/// same expression written with other spacing, or over several lines, gives the same text (collect's column names,
/// such as `(lookup w 0)`).
std::string normalized_text(const Syntax& s);

namespace detail {
/// Empties ANTLR's cache of what it has learnt from earlier parses (its DFA), kept for the whole process, so that
/// the next parse takes the paths that fill it again: for tests of running out of memory there. No parse may run
/// meanwhile, on any thread.
void forget_learnt_parses();
}  // namespace detail

}  // namespace vnt::parser
