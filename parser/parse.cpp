// Parses .vnt text into Syntax trees: runs the generated ANTLR lexer and parser (Vnt.g4) and converts the
// parse tree, giving every node the span of its tokens.
// SPDX-License-Identifier: Apache-2.0
#include <antlr4-runtime.h>

#include <algorithm>
#include <utility>

#include "VntLexer.h"
#include "VntParser.h"
#include "parser/error_listener.hpp"
#include "parser/syntax.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/interrupt.hpp"
#include "runtime/core/oom_reserve.hpp"
#include "runtime/core/source_text.hpp"

namespace vnt::parser {
namespace {

using detail::AtomKind;
using detail::Mode;
using detail::SourceMap;
using detail::Tok;
using detail::TokKind;
using vnt_gen::VntLexer;
using vnt_gen::VntParser;

// ANTLR 4.9 decodes its input as UTF-8 and throws on invalid bytes. Re-encoding each byte as the code point of
// the same value (Latin-1) makes every input valid and keeps ANTLR's indices equal to byte offsets.
std::string bytes_as_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x80) {
      out += c;
    } else {
      out += static_cast<char>(0xC0 | (b >> 6));
      out += static_cast<char>(0x80 | (b & 0x3F));
    }
  }
  return out;
}

TokKind tok_kind(size_t type) {
  switch (type) {
    case VntLexer::LPAREN:
      return TokKind::kLParen;
    case VntLexer::RPAREN:
      return TokKind::kRParen;
    case VntLexer::LBRACK:
      return TokKind::kLBrack;
    case VntLexer::RBRACK:
      return TokKind::kRBrack;
    case VntLexer::LBRACE:
      return TokKind::kLBrace;
    case VntLexer::RBRACE:
      return TokKind::kRBrace;
    case VntLexer::QUOTE:
      return TokKind::kQuote;
    case VntLexer::COLON:
      return TokKind::kColon;
    case VntLexer::STRING:
      return TokKind::kString;
    case VntLexer::BAD_STRING:
      return TokKind::kBadString;
    case VntLexer::ATOM:
      return TokKind::kAtom;
    case antlr4::Token::EOF:
      return TokKind::kEof;
    default:
      break;
  }
  raise(ErrorKind::kInternal, "internal error: unknown token type {} from the .vnt lexer", type);
}

// The lexer and parser call OomReserve::checkpoint where ANTLR holds none of its locks: before each token, and at
// each rule and token the parser takes. There they also poll for an interrupt, every so often: a large input
// takes seconds to parse.
constexpr unsigned kStepsPerPoll = 4096;

class CheckedLexer : public VntLexer {
 public:
  using VntLexer::VntLexer;
  std::unique_ptr<antlr4::Token> nextToken() override {
    step();
    return VntLexer::nextToken();
  }
  // nextToken goes on past skipped tokens (comments, white space) without returning.
  void skip() override {
    step();
    VntLexer::skip();
  }

 private:
  void step() {
    OomReserve::checkpoint();
    if (++tokens_ % kStepsPerPoll == 0) poll_interrupt();
  }
  unsigned tokens_ = 0;
};

class Checkpoints : public antlr4::tree::ParseTreeListener {
 public:
  void visitTerminal(antlr4::tree::TerminalNode*) override { OomReserve::checkpoint(); }
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void enterEveryRule(antlr4::ParserRuleContext*) override {
    OomReserve::checkpoint();
    if (++rules_ % kStepsPerPoll == 0) poll_interrupt();
  }
  void exitEveryRule(antlr4::ParserRuleContext*) override {}  // ANTLR calls it while unwinding: it may not throw

 private:
  unsigned rules_ = 0;
};

// The ANTLR objects of one parse. Nothing is shared between parses, so parsing is reentrant. (The generated
// code keeps ANTLR's own DFA cache in statics; the ANTLR runtime locks it.)
struct Pipeline {
  Pipeline(const std::shared_ptr<const SourceFile>& file, Mode mode)
      : map(file),
        listener(detail::make_error_listener(map)),
        input(bytes_as_utf8(file->text)),
        lexer(&input),
        tokens(&lexer),
        parser(&tokens) {
    OomReserve::checkpoint();  // after making ANTLR's objects
    lexer.removeErrorListeners();
    lexer.addErrorListener(listener.get());
    parser.removeErrorListeners();
    parser.addErrorListener(listener.get());
    parser.addParseListener(&checkpoints);
    tokens.fill();
    std::vector<Tok> toks;
    for (antlr4::Token* t : tokens.getTokens()) {
      TokKind kind = tok_kind(t->getType());
      size_t begin = t->getStartIndex();
      toks.push_back({kind, begin, kind == TokKind::kEof ? begin : t->getStopIndex() + 1});
    }
    // Clear messages for the common errors come from here; the parser below then sees well-formed input.
    detail::check_structure(toks, map, mode);
  }

  OomReserve reserve;  // first: it must outlive every ANTLR object
  SourceMap map;
  std::unique_ptr<antlr4::ANTLRErrorListener> listener;
  antlr4::ANTLRInputStream input;
  CheckedLexer lexer;
  antlr4::CommonTokenStream tokens;
  Checkpoints checkpoints;
  VntParser parser;
};

class Builder {
 public:
  explicit Builder(const SourceMap& map) : map_(map) {}

  DirectiveSyntax directive(VntParser::DirectiveContext* ctx) const {
    DirectiveSyntax d;
    if (ctx->label != nullptr) {
      d.label = text(ctx->label);
      d.label_span = span(ctx->label, ctx->label);
    }
    d.keyword = text(ctx->keyword);
    d.keyword_span = span(ctx->keyword, ctx->keyword);
    std::vector<VntParser::ExprContext*> args = ctx->expr();
    d.args.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) fill(args[i], d.args[i]);
    d.span = span(ctx->getStart(), ctx->getStop());
    return d;
  }

  Syntax expr(VntParser::ExprContext* ctx) const {
    Syntax s;
    fill(ctx, s);
    return s;
  }

 private:
  // Recursion is bounded by detail::kMaxDepth (check_structure). Leaves are handled in leaf() so that the
  // recursive frame stays small (it matters under AddressSanitizer).
  void fill(VntParser::ExprContext* ctx, Syntax& s) const {
    s.span = span(ctx->getStart(), ctx->getStop());
    if (ctx->LPAREN() == nullptr && ctx->QUOTE() == nullptr) return leaf(ctx, s);
    s.kind = ctx->LPAREN() != nullptr ? Syntax::Kind::kList : Syntax::Kind::kQuote;
    std::vector<VntParser::ExprContext*> children = ctx->expr();
    s.items.resize(children.size());
    for (size_t i = 0; i < children.size(); ++i) fill(children[i], s.items[i]);
  }

  void leaf(VntParser::ExprContext* ctx, Syntax& s) const {
    if (ctx->LBRACE() != nullptr) {
      s.kind = Syntax::Kind::kParam;
      s.text = text(ctx->ATOM()->getSymbol());
    } else if (ctx->STRING() != nullptr) {
      s.kind = Syntax::Kind::kString;
      s.text = detail::unescape_string(text(ctx->STRING()->getSymbol()));
    } else {
      atom(text(ctx->ATOM()->getSymbol()), s);
    }
  }

  static void atom(std::string_view t, Syntax& s) {
    switch (detail::atom_kind(t)) {
      case AtomKind::kNumber:
        s.kind = Syntax::Kind::kNumber;
        s.number = detail::atom_number(t);
        return;
      case AtomKind::kBool:
        s.kind = Syntax::Kind::kBool;
        s.boolean = t == "true";
        return;
      case AtomKind::kSymbol:
        s.kind = Syntax::Kind::kSymbol;
        s.text = std::string(t);
        return;
      case AtomKind::kBadNumber:
        break;
    }
    raise(ErrorKind::kInternal, "internal error: malformed number '{}' passed the structural check", t);
  }

  std::string text(const antlr4::Token* t) const {
    return std::string(map_.text(t->getStartIndex(), t->getStopIndex() + 1));
  }
  SourceSpan span(const antlr4::Token* first, const antlr4::Token* last) const {
    return map_.span(first->getStartIndex(), last->getStopIndex() + 1);
  }

  const SourceMap& map_;
};

}  // namespace

std::vector<DirectiveSyntax> parse_program(const std::shared_ptr<const SourceFile>& file) {
  VNT_ASSERT(file != nullptr, "parse_program needs a source file");
  Pipeline p(file, Mode::kProgram);
  Builder builder(p.map);
  std::vector<DirectiveSyntax> out;
  // Directive by directive (check_structure has seen the whole input), freeing each one's parse tree once it is
  // converted: the parse trees of a large input were most of its peak memory.
  while (p.tokens.LA(1) != antlr4::Token::EOF) {
    out.push_back(builder.directive(p.parser.directive()));
    p.parser.getTreeTracker().reset();
  }
  p.reserve.finish();
  return out;
}

size_t count_directives(const std::shared_ptr<const SourceFile>& file) {
  VNT_ASSERT(file != nullptr, "count_directives needs a source file");
  OomReserve reserve;
  antlr4::ANTLRInputStream input(bytes_as_utf8(file->text));
  CheckedLexer lexer(&input);
  lexer.removeErrorListeners();  // the lexer accepts every input (Vnt.g4)
  size_t n = 0;
  for (auto t = lexer.nextToken(); t->getType() != antlr4::Token::EOF; t = lexer.nextToken())
    n += t->getType() == VntLexer::LBRACK ? 1 : 0;
  reserve.finish();
  return n;
}

Syntax parse_expression(const std::shared_ptr<const SourceFile>& file) {
  VNT_ASSERT(file != nullptr, "parse_expression needs a source file");
  Pipeline p(file, Mode::kExpression);
  VntParser::ExpressionContext* tree = p.parser.expression();
  p.reserve.finish();
  return Builder(p.map).expr(tree->expr());
}

void detail::forget_learnt_parses() {
  antlr4::ANTLRInputStream input("");
  CheckedLexer lexer(&input);
  antlr4::CommonTokenStream tokens(&lexer);
  VntParser parser(&tokens);
  lexer.getInterpreter<antlr4::atn::LexerATNSimulator>()->clearDFA();
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->clearDFA();
}

std::string span_text(const SourceSpan& span) {
  if (!span.known()) return {};
  const std::string& text = span.file->text;
  size_t begin = source_offset(text, span.line, span.col);
  size_t end = source_offset(text, span.end_line, span.end_col);
  return end > begin ? text.substr(begin, end - begin) : std::string();
}

std::string normalized_text(const Syntax& s) {
  switch (s.kind) {
    case Syntax::Kind::kList: {
      std::string out = "(";
      for (size_t i = 0; i < s.items.size(); ++i) {
        if (i > 0) out += ' ';
        out += normalized_text(s.items[i]);
      }
      return out + ')';
    }
    case Syntax::Kind::kQuote:
      return "'" + normalized_text(s.items[0]);
    default:
      return span_text(s.span);  // an atom, a string or a {param}, as written
  }
}

}  // namespace vnt::parser
