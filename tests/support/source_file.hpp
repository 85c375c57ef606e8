// Program text as the file the parser's tests name in their expected messages.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "runtime/core/source_span.hpp"

namespace vnt::test {

/// `text` as the file t.vnt.
inline std::shared_ptr<const SourceFile> source(std::string text) {
  return std::make_shared<const SourceFile>(SourceFile{"t.vnt", std::move(text)});
}

}  // namespace vnt::test
