// Private to parser/: byte offsets to spans (columns in code points), the structural check that gives each
// common syntax error one clear message, and the ANTLR listener that turns anything else into vnt::Error.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/source_span.hpp"

namespace antlr4 {
class ANTLRErrorListener;
}

namespace vnt::parser::detail {

/// Maps byte offsets of one SourceFile to 1-based lines and columns (source_text.hpp and utf8.hpp say what they count).
class SourceMap {
 public:
  explicit SourceMap(std::shared_ptr<const SourceFile> file);

  /// The span of the bytes [begin, end); an empty range gives an empty span at `begin`.
  SourceSpan span(size_t begin, size_t end) const;
  std::string_view text(size_t begin, size_t end) const;
  size_t size() const { return file_->text.size(); }
  /// The byte offset of byte `byte_col` (0-based) of a 1-based line as ANTLR counts lines, clamped to the text.
  size_t antlr_offset(size_t line, size_t byte_col) const;

 private:
  size_t line_start(size_t offset) const;
  uint32_t line_of(size_t offset) const;
  uint32_t column(size_t line_start, size_t offset) const;

  std::shared_ptr<const SourceFile> file_;
  std::vector<size_t> line_starts_;
  std::vector<size_t> continuations_;  // offsets of the bytes after the first of a character, which start no column
};

/// The token kinds of Vnt.g4, free of ANTLR types (parse.cpp maps the generated token types).
enum class TokKind {
  kLParen,
  kRParen,
  kLBrack,
  kRBrack,
  kLBrace,
  kRBrace,
  kQuote,
  kColon,
  kString,
  kBadString,
  kAtom,
  kEof
};

/// One token: its kind and its bytes [begin, end).
struct Tok {
  TokKind kind;
  size_t begin, end;
};

enum class Mode { kProgram, kExpression };

/// Deepest nesting of lists, quotes and directives accepted (the ANTLR parser recurses once per level).
inline constexpr size_t kMaxDepth = 1000;

/// Checks the token sequence (ending in kEof) against the grammar of `mode` and throws vnt::Error (kSyntax)
/// for the first error in source order. After it returns, the ANTLR parser accepts the same tokens.
void check_structure(const std::vector<Tok>& toks, const SourceMap& map, Mode mode);

enum class AtomKind { kNumber, kBool, kSymbol, kBadNumber };

/// What an atom is: a number (`1`, `-2.5`, `.5`, `+3`, `1e-3`), `true`/`false`, a symbol (`x`, `-`, `-x`, `...`),
/// or text that starts like a number but is not one (`1x`, `1.2.3`, `1e999`), which check_structure rejects.
AtomKind atom_kind(std::string_view text);

/// The value of an atom for which atom_kind() returned kNumber (and check_structure accepted).
double atom_number(std::string_view text);

/// The contents of a STRING token (quotes included) with the escapes \" \\ \n \t resolved.
std::string unescape_string(std::string_view token);

/// A listener that throws vnt::Error (kSyntax) with the span of the offending token. parse.cpp installs it
/// on the lexer and the parser after removeErrorListeners(); `map` must outlive it.
std::unique_ptr<antlr4::ANTLRErrorListener> make_error_listener(const SourceMap& map);

}  // namespace vnt::parser::detail
