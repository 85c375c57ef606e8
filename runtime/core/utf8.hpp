// Columns of .vnt text count characters, not bytes: the two conversions between them for UTF-8 text.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string_view>

namespace vnt {

/// The size of the well-formed UTF-8 sequence (Unicode Table 3-7) at the start of `text`, or 0 if it does not
/// start with one: a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or past U+10FFFF.
inline size_t utf8_sequence_size(std::string_view text) {
  if (text.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  return n;
}

/// The size of the column at the start of `text` (not empty): a well-formed sequence, or one byte of malformed
/// text. Every byte that is not part of a character is a column of its own, so the conversions below are total.
inline size_t utf8_column_size(std::string_view text) {
  const size_t n = utf8_sequence_size(text);
  return n > 0 ? n : 1;
}

/// The number of columns of `text`.
inline size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); i += utf8_column_size(text.substr(i))) ++n;
  return n;
}

/// The byte offset at which column `index` (0-based) of `text` starts; text.size() past the end.
inline size_t utf8_offset(std::string_view text, size_t index) {
  size_t i = 0;
  for (; i < text.size() && index > 0; --index) i += utf8_column_size(text.substr(i));
  return i;
}

}  // namespace vnt
