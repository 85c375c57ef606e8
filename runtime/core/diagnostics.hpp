// Renders an Error gcc-style: "file:line:col: error: message", the source line and a caret.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "runtime/core/error.hpp"

namespace vnt {

/// Full multi-line rendering (first line, source excerpt with caret, call frames).
std::string render_error(const Error& e);

/// The message as every rendering shows it: control characters, bidirectional controls and malformed UTF-8 as
/// `\xNN` (shown_text), since names from a program or from C++ strings reach messages as they are.
std::string shown_message(const Error& e);

/// Only the first line: "file:line:col: error: message" (or "error: message" without a span).
std::string render_error_line(const Error& e);

/// "file:line:col" of a span, or "" when unknown.
std::string span_location(const SourceSpan& span);

}  // namespace vnt
