// Lines of .vnt text and how source text is shown in messages: the one definition that line:col, the excerpt
// under an error and the parser's quoted tokens all follow.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vnt {

/// The size of the line break at the start of `text`: 2 for CR LF, 1 for LF or a lone CR, and 0 otherwise.
inline size_t line_break_size(std::string_view text) {
  if (text.empty()) return 0;
  if (text[0] == '\n') return 1;
  if (text[0] != '\r') return 0;
  return text.size() > 1 && text[1] == '\n' ? 2 : 1;
}

/// Line `line` (1-based) of `text`, without its line break; empty past the end.
std::string_view source_line(std::string_view text, uint32_t line);

/// The byte offset of column `col` (1-based, columns as in utf8.hpp) of line `line` of `text`; text.size() past
/// the end of the text. (A column past the end of its line counts on through the line break, byte by byte.)
size_t source_offset(std::string_view text, uint32_t line, uint32_t col);

/// One column of source text as a message shows it: itself, or the `\xNN` escapes of its bytes if it is a control
/// character other than tab or a bidirectional control (which a terminal would act on), or a byte of malformed UTF-8.
std::string shown_column(std::string_view column);

/// The terminal cells a column of source text takes in a message, for the underline under it: the size of its
/// escapes if shown_column() escapes it, 2 for a character of East Asian width Wide or Fullwidth (CJK, Hangul,
/// fullwidth forms, most emoji), 1 otherwise (combining marks too: a close approximation, never an empty caret).
size_t shown_width(std::string_view column);

/// Source text as a message shows it, each column through shown_column().
std::string shown_text(std::string_view text);

/// The terminal cells shown_text(text) takes: the sum of its columns' shown_width().
size_t shown_text_width(std::string_view text);

}  // namespace vnt
