// Syntax errors of .vnt text: a structural check over the tokens that names what was expected and what was
// found, atom and string decoding, and the ANTLR listener that throws for anything the check let through.
// SPDX-License-Identifier: Apache-2.0
#include "parser/error_listener.hpp"

#include <antlr4-runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/read_double.hpp"
#include "runtime/core/source_text.hpp"
#include "runtime/core/utf8.hpp"

namespace vnt::parser::detail {

SourceMap::SourceMap(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) {
  line_starts_.push_back(0);
  std::string_view text = file_->text;
  for (size_t i = 0; i < text.size();) {
    if (size_t br = line_break_size(text.substr(i)); br > 0) {
      i += br;
      line_starts_.push_back(i);
      continue;
    }
    size_t n = utf8_column_size(text.substr(i));
    for (size_t k = 1; k < n; ++k) continuations_.push_back(i + k);
    i += n;
  }
}

uint32_t SourceMap::line_of(size_t offset) const {
  return static_cast<uint32_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                               line_starts_.begin());
}

size_t SourceMap::line_start(size_t offset) const { return line_starts_[line_of(offset) - 1]; }

uint32_t SourceMap::column(size_t start, size_t offset) const {
  // Two binary searches rather than a walk over the line, so that long lines of data parse in O(n log n).
  auto cont = static_cast<size_t>(std::lower_bound(continuations_.begin(), continuations_.end(), offset) -
                                  std::lower_bound(continuations_.begin(), continuations_.end(), start));
  return static_cast<uint32_t>(offset - start - cont + 1);
}

SourceSpan SourceMap::span(size_t begin, size_t end) const {
  SourceSpan s;
  s.file = file_;
  s.line = line_of(begin);
  s.col = column(line_start(begin), begin);
  if (end > begin) {
    // One past the last code point, on the last byte's own line, so a span ending in '\n' stays on that line.
    s.end_line = line_of(end - 1);
    s.end_col = column(line_start(end - 1), end);
  } else {
    s.end_line = s.line;
    s.end_col = s.col;
  }
  return s;
}

size_t SourceMap::antlr_offset(size_t line, size_t byte_col) const {
  // ANTLR ends a line at '\n' only, so its lines are not those of line_starts_ in text with a lone '\r'.
  std::string_view text = file_->text;
  size_t start = 0;
  for (size_t l = 1; l < line && start < text.size(); ++l) start = std::min(text.find('\n', start), text.size()) + 1;
  return std::min(size(), start + byte_col);
}

std::string_view SourceMap::text(size_t begin, size_t end) const {
  return std::string_view(file_->text).substr(begin, end - begin);
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

size_t skip_digits(std::string_view t, size_t i) {
  while (i < t.size() && is_digit(t[i])) ++i;
  return i;
}

// [+-]? (digits ('.' digits?)? | '.' digits) ([eE] [+-]? digits)?
bool is_number_syntax(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  size_t int_end = skip_digits(t, i);
  size_t digits = int_end - i;
  i = int_end;
  if (i < t.size() && t[i] == '.') {
    size_t frac_end = skip_digits(t, i + 1);
    digits += frac_end - (i + 1);
    i = frac_end;
  }
  if (digits == 0) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    size_t exp_end = skip_digits(t, i);
    if (exp_end == i) return false;
    i = exp_end;
  }
  return i == t.size();
}

// A digit, possibly after a sign and/or a dot: `1x` is a bad number, while `-`, `-x` and `...` are symbols.
bool starts_like_number(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  if (i < t.size() && t[i] == '.') ++i;
  return i < t.size() && is_digit(t[i]);
}

enum class NumberStatus { kOk, kBad, kOutOfRange };

NumberStatus convert_number(std::string_view t, double& value) {
  if (!is_number_syntax(t)) return NumberStatus::kBad;
  const std::errc ec = read_double(t[0] == '+' ? t.substr(1) : t, value);  // from_chars takes no '+'
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  return ec == std::errc() ? NumberStatus::kOk : NumberStatus::kBad;
}

// How a token appears after "found": quoted source text, cut at a line break, shortened if long, and with control
// characters escaped (a raw ESC would act on the terminal).
std::string describe(const Tok& t, const SourceMap& map) {
  if (t.kind == TokKind::kEof) return "end of input";
  std::string_view s = map.text(t.begin, t.end);
  size_t cut = std::min<size_t>(s.find_first_of("\r\n"), 24);
  if (cut < s.size()) return fmt::format("'{}...'", shown_text(s.substr(0, cut)));
  return fmt::format("'{}'", shown_text(s));
}

class Checker {
 public:
  Checker(const std::vector<Tok>& toks, const SourceMap& map, Mode mode) : toks_(toks), map_(map), mode_(mode) {}

  void run() {
    for (i_ = 0; i_ < toks_.size(); ++i_) {
      const Tok& t = toks_[i_];
      if (t.kind == TokKind::kBadString) fail(map_.span(t.begin, t.begin + 1), "unterminated string");
      if (t.kind == TokKind::kEof) return end_of_input(t);
      if (mode_ == Mode::kProgram && open_.empty())
        top_level(t);
      else
        inner(t);
    }
  }

 private:
  struct Open {
    TokKind kind;  // kLParen or kLBrack
    size_t tok;
    size_t quotes;  // quotes applied to this list, e.g. 2 for ''(a b)
  };

  [[noreturn]] void fail(const SourceSpan& span, std::string message) const {
    throw Error(ErrorKind::kSyntax, std::move(message), span);
  }
  [[noreturn]] void fail(const Tok& t, std::string message) const {
    fail(map_.span(t.begin, t.end), std::move(message));
  }
  [[noreturn]] void fail_found(const Tok& t, std::string_view expected) const {
    fail(t, fmt::format("expected {}, found {}", expected, describe(t, map_)));
  }
  [[noreturn]] void fail_unexpected(const Tok& t) const { fail(t, fmt::format("unexpected {}", describe(t, map_))); }

  std::string location(size_t tok) const {
    SourceSpan s = map_.span(toks_[tok].begin, toks_[tok].end);
    return fmt::format("{}:{}", s.line, s.col);
  }
  std::string closer(const Open& o) const {
    bool paren = o.kind == TokKind::kLParen;
    return fmt::format("'{}' to close '{}' opened at {}", paren ? ')' : ']', paren ? '(' : '[', location(o.tok));
  }
  std::string_view text(const Tok& t) const { return map_.text(t.begin, t.end); }

  void deeper(const Tok& t) {
    if (++depth_ > kMaxDepth) fail(t, fmt::format("nesting too deep: more than {} levels", kMaxDepth));
  }

  void top_level(const Tok& t) {
    switch (t.kind) {
      case TokKind::kLBrack:
        return open_directive(t);
      case TokKind::kAtom:
        if (toks_[i_ + 1].kind == TokKind::kColon) return label(t);
        break;
      case TokKind::kRParen:
      case TokKind::kRBrack:
      case TokKind::kRBrace:
      case TokKind::kColon:
        fail_unexpected(t);
      default:
        break;
    }
    fail_found(t, "a directive in brackets");
  }

  void label(const Tok& t) {
    if (atom_kind(text(t)) != AtomKind::kSymbol) fail_found(t, "a label name before ':'");
    const Tok& next = toks_[i_ + 2];
    if (next.kind != TokKind::kLBrack) fail_found(next, fmt::format("'[' after '{}:'", text(t)));
    ++i_;  // the loop moves on to the '['
  }

  void open_directive(const Tok& t) {
    const Tok& keyword = toks_[i_ + 1];
    if (keyword.kind == TokKind::kRBrack) fail(map_.span(t.begin, keyword.end), "empty directive");
    bool reported_later = keyword.kind == TokKind::kEof || keyword.kind == TokKind::kBadString;
    if (!reported_later && (keyword.kind != TokKind::kAtom || atom_kind(text(keyword)) != AtomKind::kSymbol))
      fail_found(keyword, "a directive name after '['");
    open_.push_back({TokKind::kLBrack, i_, 0});  // not a level of depth_: kMaxDepth counts lists and quotes
    if (keyword.kind == TokKind::kAtom) ++i_;  // the keyword is not an argument
  }

  void inner(const Tok& t) {
    switch (t.kind) {
      case TokKind::kLParen:
        open_.push_back({TokKind::kLParen, i_, quotes_});
        quotes_ = 0;
        return deeper(t);
      case TokKind::kQuote:
        ++quotes_;
        return deeper(t);
      case TokKind::kAtom:
        check_atom(t);
        return datum_done();
      case TokKind::kString:
        check_string(t);
        return datum_done();
      case TokKind::kLBrace:
        param();
        return datum_done();
      default:
        return closing(t);
    }
  }

  // `)`, `]`, `}`, `:` and a misplaced `[`.
  void closing(const Tok& t) {
    if (quotes_ > 0) fail_found(t, "an expression after '''");
    bool in_list = !open_.empty() && open_.back().kind == TokKind::kLParen;
    if (t.kind == TokKind::kRParen && in_list) {
      depth_ -= 1 + open_.back().quotes;
      open_.pop_back();
      return datum_done();
    }
    if (t.kind == TokKind::kRBrack && !open_.empty()) {
      if (in_list) fail_found(t, closer(open_.back()));
      open_.pop_back();
      return;
    }
    if (t.kind == TokKind::kLBrack && !open_.empty()) fail_found(t, closer(open_.back()));
    fail_unexpected(t);
  }

  void param() {
    const Tok& name = toks_[i_ + 1];
    if (name.kind != TokKind::kAtom) fail_found(name, "a parameter name in {...}");
    const Tok& close = toks_[i_ + 2];
    if (close.kind != TokKind::kRBrace) fail_found(close, fmt::format("'}}' to close '{{' opened at {}", location(i_)));
    i_ += 2;
  }

  void datum_done() {
    depth_ -= quotes_;
    quotes_ = 0;
    if (mode_ == Mode::kExpression && open_.empty()) {
      done_ = true;
      const Tok& next = toks_[i_ + 1];
      if (next.kind != TokKind::kEof) fail_found(next, "end of input after the expression");
    }
  }

  void end_of_input(const Tok& t) const {
    if (quotes_ > 0) fail_found(t, "an expression after '''");
    if (!open_.empty()) {
      // The span is the unclosed bracket (the end of input is often an empty line, with nothing to underline).
      const Tok& open = toks_[open_.back().tok];
      fail(open, fmt::format("unexpected end of input: expected {}", closer(open_.back())));
    }
    if (mode_ == Mode::kExpression && !done_) fail_found(t, "an expression");
  }

  void check_atom(const Tok& t) const {
    double value = 0;
    std::string_view s = text(t);
    if (!starts_like_number(s)) return;
    NumberStatus status = convert_number(s, value);
    if (status == NumberStatus::kBad) fail(t, fmt::format("malformed number {}", describe(t, map_)));
    if (status == NumberStatus::kOutOfRange) fail(t, fmt::format("number out of range: {}", describe(t, map_)));
  }

  void check_string(const Tok& t) const {
    std::string_view s = text(t);
    for (size_t k = 1; k + 1 < s.size(); ++k) {
      if (s[k] != '\\') continue;
      char c = s[k + 1];
      if (c == 'x' && !(k + 3 < s.size() && is_hex(s[k + 2]) && is_hex(s[k + 3]))) {
        // Exactly two digits, so that the text after an escape never changes the byte it stands for.
        size_t end = k + 2;
        while (end < s.size() - 1 && end < k + 4 && is_hex(s[end])) ++end;
        const std::string shown = shown_text(s.substr(k, end - k));
        fail(map_.span(t.begin + k, t.begin + end),
             fmt::format("malformed escape '{}' in string: \\x takes two hex digits", shown));
      }
      if (c != '"' && c != '\\' && c != 'n' && c != 't' && c != 'r' && c != 'x') {
        auto byte = static_cast<unsigned char>(c);
        std::string shown = byte >= 0x20 && byte < 0x7f ? std::string(1, c) : fmt::format("x{:02x}", byte);
        fail(map_.span(t.begin + k, t.begin + k + 2), fmt::format("unknown escape '\\{}' in string", shown));
      }
      ++k;
    }
  }

  static bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

  const std::vector<Tok>& toks_;
  const SourceMap& map_;
  Mode mode_;
  std::vector<Open> open_;
  size_t i_ = 0;
  size_t quotes_ = 0;  // quotes still waiting for their datum
  size_t depth_ = 0;   // open lists plus pending quotes (each is one level of parser recursion)
  bool done_ = false;  // kExpression: the one expression is complete
};

class ThrowingListener final : public antlr4::BaseErrorListener {
 public:
  explicit ThrowingListener(const SourceMap& map) : map_(map) {}

  void syntaxError(antlr4::Recognizer*, antlr4::Token* offending, size_t line, size_t col, const std::string& msg,
                   std::exception_ptr) override {
    if (offending == nullptr) {
      // A lexer error. Vnt.g4's lexer accepts every input, so this is a safety net. ANTLR's column counts the
      // bytes of the line (parse.cpp feeds it one code point per byte).
      size_t at = map_.antlr_offset(line, col);
      throw Error(ErrorKind::kSyntax, fmt::format("unexpected character ({})", msg),
                  map_.span(at, std::min(at + 1, map_.size())));
    }
    size_t begin = offending->getStartIndex();
    bool eof = offending->getType() == antlr4::Token::EOF;
    size_t end = eof ? begin : offending->getStopIndex() + 1;
    Tok t{eof ? TokKind::kEof : TokKind::kAtom, begin, end};
    throw Error(ErrorKind::kSyntax, fmt::format("unexpected {} ({})", describe(t, map_), msg), map_.span(begin, end));
  }

 private:
  const SourceMap& map_;
};

}  // namespace

void check_structure(const std::vector<Tok>& toks, const SourceMap& map, Mode mode) { Checker(toks, map, mode).run(); }

AtomKind atom_kind(std::string_view text) {
  if (text == "true" || text == "false") return AtomKind::kBool;
  if (!starts_like_number(text)) return AtomKind::kSymbol;
  double value = 0;
  return convert_number(text, value) == NumberStatus::kOk ? AtomKind::kNumber : AtomKind::kBadNumber;
}

double atom_number(std::string_view text) {
  double value = 0;
  convert_number(text, value);
  return value;
}

std::string unescape_string(std::string_view token) {
  std::string out;
  std::string_view body = token.substr(1, token.size() - 2);
  out.reserve(body.size());
  for (size_t k = 0; k < body.size(); ++k) {
    char c = body[k];
    if (c == '\\' && k + 1 < body.size()) {
      char e = body[++k];
      if (e == 'x' && k + 2 < body.size()) {  // check_string saw two hex digits
        unsigned byte = 0;
        std::from_chars(body.data() + k + 1, body.data() + k + 3, byte, 16);
        c = static_cast<char>(byte);
        k += 2;
      } else {
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      }
    }
    out += c;
  }
  return out;
}

std::unique_ptr<antlr4::ANTLRErrorListener> make_error_listener(const SourceMap& map) {
  return std::make_unique<ThrowingListener>(map);
}

}  // namespace vnt::parser::detail
