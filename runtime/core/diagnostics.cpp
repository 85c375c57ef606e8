// One renderer for every error the runtime reports.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "runtime/core/utf8.hpp"

namespace vnt {
namespace {

std::string_view source_line(const SourceFile& file, uint32_t line) {
  std::string_view text = file.text;
  for (uint32_t l = 1; l < line; ++l) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return {};
    text.remove_prefix(nl + 1);
  }
  return text.substr(0, text.find('\n'));
}

// Blanks under the first `columns` code points of `line`: one per code point, and a tab under a tab, so the caret
// lands under its column however a terminal expands tabs. (Wide characters, e.g. CJK, still take one blank.)
std::string caret_padding(std::string_view line, size_t columns) {
  std::string out;
  for (size_t i = 0; i < line.size() && columns > 0; ++i) {
    if (is_utf8_continuation(line[i])) continue;
    out += line[i] == '\t' ? '\t' : ' ';
    --columns;
  }
  return out;
}

}  // namespace

std::string span_location(const SourceSpan& span) {
  if (!span.known()) return {};
  return fmt::format("{}:{}:{}", span.file->name, span.line, span.col);
}

std::string render_error_line(const Error& e) {
  if (!e.has_span()) return fmt::format("error: {}", e.message());
  return fmt::format("{}: error: {}", span_location(e.span()), e.message());
}

std::string render_error(const Error& e) {
  std::string out = render_error_line(e);
  out += '\n';
  if (e.has_span()) {
    const SourceSpan& s = e.span();
    std::string_view line = source_line(*s.file, s.line);
    const size_t length = utf8_length(line);  // columns count code points
    if (!line.empty() && s.col <= length + 1) {
      std::string num = fmt::format("{:>5}", s.line);
      out += fmt::format("{} | {}\n", num, line);
      size_t width = 1;
      if (s.end_line == s.line && s.end_col > s.col) width = s.end_col - s.col;
      width = std::min(width, length + 1 - (s.col - 1));
      std::string marker(std::max<size_t>(width, 1), '~');
      marker[0] = '^';
      out += fmt::format("{} | {}{}\n", std::string(num.size(), ' '), caret_padding(line, s.col - 1), marker);
    }
  }
  const std::vector<ErrorFrame>& frames = e.frames();
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i + 1 == frames.size() && e.omitted_frames() > 0)
      out += fmt::format("  ... {} more call{}\n", e.omitted_frames(), e.omitted_frames() == 1 ? "" : "s");
    out += fmt::format("  {}", frames[i].text);
    if (frames[i].repeats > 1) out += fmt::format(" (repeated {} times)", frames[i].repeats);
    out += '\n';
  }
  return out;
}

}  // namespace vnt
