// Columns of .vnt text count code points, not bytes: the two conversions between them for UTF-8 text.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string_view>

namespace vnt {

/// Whether a byte continues a UTF-8 sequence (10xxxxxx). Every other byte starts a code point; so does a stray
/// byte of malformed text, which keeps both conversions below total and inverse to each other.
inline bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// The number of code points in `text`.
inline size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += is_utf8_continuation(c) ? 0 : 1;
  return n;
}

/// The byte offset at which code point `index` (0-based) of `text` starts; text.size() past the end.
inline size_t utf8_offset(std::string_view text, size_t index) {
  size_t i = 0;
  for (; i < text.size(); ++i) {
    if (is_utf8_continuation(text[i])) continue;
    if (index == 0) return i;
    --index;
  }
  return i;
}

}  // namespace vnt
