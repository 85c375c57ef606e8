// One renderer for every error the runtime reports.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "runtime/core/source_text.hpp"
#include "runtime/core/utf8.hpp"

namespace vnt {
namespace {

// A line of more columns than this is shown as a window of that many around the span's start, its cut ends marked
// "...": a program of one long line (6 MB, say) would otherwise be echoed whole with each error.
constexpr size_t kMaxColumns = 160;
constexpr size_t kColumnsBefore = 60;  // of the window, before the span's start

// The source line of `s` with a caret under its first column and tildes under the rest of its span. Each column
// takes the width it is shown with (an escaped control byte takes four), and a tab under a tab, so the caret lands
// under its column however a terminal expands tabs; a wide character (CJK, say) takes two.
std::string excerpt(const SourceSpan& s) {
  std::string_view line = source_line(s.file->text, s.line);
  const size_t length = utf8_length(line);
  if (line.empty() || s.col > length + 1) return {};
  size_t width = 1;
  if (s.end_line == s.line && s.end_col > s.col) width = s.end_col - s.col;
  width = std::min(width, length + 1 - (s.col - 1));
  size_t first = 1, last = length;  // the columns shown
  if (length > kMaxColumns) {
    first = s.col > kColumnsBefore ? std::min(s.col - kColumnsBefore, length + 1 - kMaxColumns) : 1;
    last = first + kMaxColumns - 1;
  }
  std::string shown = first > 1 ? "..." : "", padding = first > 1 ? "   " : "", marker;
  size_t col = 1;
  for (size_t i = 0; i < line.size() && col <= last; ++col) {
    std::string_view column = line.substr(i, utf8_column_size(line.substr(i)));
    i += column.size();
    if (col < first) continue;
    shown += shown_column(column);
    const size_t cells = shown_width(column);
    if (col < s.col)
      padding += column == "\t" ? std::string("\t") : std::string(cells, ' ');
    else if (col < s.col + width)
      marker.append(cells, '~');
  }
  if (s.col + width > col) marker += '~';  // the span takes in the end of the line, or goes on past the window
  if (last < length) shown += "...";
  marker[0] = '^';
  std::string num = fmt::format("{:>5}", s.line);
  return fmt::format("{} | {}\n{} | {}{}\n", num, shown, std::string(num.size(), ' '), padding, marker);
}

}  // namespace

std::string span_location(const SourceSpan& span) {
  if (!span.known()) return {};
  return fmt::format("{}:{}:{}", span.file->name, span.line, span.col);
}

std::string shown_message(const Error& e) { return shown_text(e.message()); }

std::string render_error_line(const Error& e) {
  if (!e.has_span()) return fmt::format("error: {}", shown_message(e));
  return fmt::format("{}: error: {}", span_location(e.span()), shown_message(e));
}

std::string render_error(const Error& e) {
  std::string out = render_error_line(e);
  out += '\n';
  if (e.has_span()) out += excerpt(e.span());
  const std::vector<ErrorFrame>& frames = e.frames();
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i + 1 == frames.size() && e.omitted_frames() > 0)
      out += fmt::format("  ... {} more call{}\n", e.omitted_frames(), e.omitted_frames() == 1 ? "" : "s");
    out += fmt::format("  {}", shown_text(frames[i].text));
    if (frames[i].repeats > 1) out += fmt::format(" (repeated {} times)", frames[i].repeats);
    out += '\n';
  }
  return out;
}

}  // namespace vnt
