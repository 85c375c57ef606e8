// Lines of .vnt text, and escaping of the source text that messages print.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/source_text.hpp"

#include <fmt/format.h>

#include <utility>

#include "runtime/core/utf8.hpp"

namespace vnt {
namespace {

size_t line_start(std::string_view text, uint32_t line) {
  size_t pos = 0;
  for (uint32_t l = 1; l < line; ++l) {
    while (pos < text.size() && line_break_size(text.substr(pos)) == 0) ++pos;
    if (pos == text.size()) return pos;
    pos += line_break_size(text.substr(pos));
  }
  return pos;
}

size_t line_length(std::string_view rest) {
  size_t n = 0;
  while (n < rest.size() && line_break_size(rest.substr(n)) == 0) ++n;
  return n;
}

bool is_escaped(std::string_view column) {
  if (utf8_sequence_size(column) == 0) return true;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(column[i]); };
  const unsigned char lead = byte(0);
  if (column.size() == 1) return (lead < 0x20 && lead != '\t') || lead == 0x7F;
  // C1 controls, U+0080 to U+009F: some terminals take U+009B as the start of an escape sequence, as ESC [.
  if (column.size() == 2) return (lead == 0xC2 && byte(1) < 0xA0) || (lead == 0xD8 && byte(1) == 0x9C);
  // Bidirectional controls (U+061C above, U+200E-F, U+202A-E, U+2066-9) reorder what a terminal shows, so a
  // message could display text other than the bytes it quotes.
  if (column.size() != 3 || lead != 0xE2) return false;
  return (byte(1) == 0x80 && (byte(2) == 0x8E || byte(2) == 0x8F || (byte(2) >= 0xAA && byte(2) <= 0xAE))) ||
         (byte(1) == 0x81 && byte(2) >= 0xA6 && byte(2) <= 0xA9);
}

/// The code point of a well-formed UTF-8 sequence.
char32_t code_point(std::string_view seq) {
  auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(seq[i])); };
  if (seq.size() == 1) return byte(0);
  char32_t cp = byte(0) & (0x7F >> seq.size());
  for (size_t i = 1; i < seq.size(); ++i) cp = (cp << 6) | (byte(i) & 0x3F);
  return cp;
}

/// East Asian width W or F (Unicode 15, UAX #11), merged into ranges; the scattered wide symbols below U+2E80
/// (watch, hourglass, a few dingbats) are left narrow.
bool is_wide(char32_t cp) {
  static constexpr std::pair<char32_t, char32_t> kWide[] = {
      {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
      {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
      {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF},
      {0x1AFF0, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
      {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF},
      {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};
  for (const auto& [lo, hi] : kWide)
    if (cp <= hi) return cp >= lo;
  return false;
}

}  // namespace

size_t shown_width(std::string_view column) {
  if (is_escaped(column)) return shown_column(column).size();
  return is_wide(code_point(column)) ? 2 : 1;
}

std::string_view source_line(std::string_view text, uint32_t line) {
  std::string_view rest = text.substr(line_start(text, line));
  return rest.substr(0, line_length(rest));
}

size_t source_offset(std::string_view text, uint32_t line, uint32_t col) {
  size_t start = line_start(text, line);
  return start + utf8_offset(text.substr(start), col > 0 ? col - 1 : 0);
}

std::string shown_column(std::string_view column) {
  if (!is_escaped(column)) return std::string(column);
  std::string out;
  for (char c : column) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  return out;
}

size_t shown_text_width(std::string_view text) {
  size_t cells = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_column_size(text.substr(i));
    cells += shown_width(text.substr(i, n));
    i += n;
  }
  return cells;
}

std::string shown_text(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_column_size(text.substr(i));
    out += shown_column(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace vnt
