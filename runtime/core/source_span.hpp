// Source positions of .vnt text: every syntax node and every error carries one.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace vnt {

/// One source text (a file, a REPL line, an API string) kept alive by the spans that point into it.
struct SourceFile {
  std::string name;  ///< shown in diagnostics, e.g. "model.vnt" or "<repl>"
  std::string text;
};

/// A 1-based line/column range in a SourceFile. A default-constructed span is "unknown".
struct SourceSpan {
  std::shared_ptr<const SourceFile> file;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;

  bool known() const { return file != nullptr && line > 0; }
};

}  // namespace vnt
