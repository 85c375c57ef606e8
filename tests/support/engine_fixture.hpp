// Helpers for runtime tests: run program text through an Engine, fingerprint its trace.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/engine/engine.hpp"
#include "runtime/trace/fingerprint.hpp"

namespace vnt::test {

inline void run(Engine& e, const std::string& text, const std::string& name = "test.vnt") {
  e.run_source(std::make_shared<const SourceFile>(SourceFile{name, text}));
}

inline std::string fingerprint_of(Engine& e) {
  std::vector<Node*> roots;
  for (const auto& r : e.directives()) roots.push_back(r.root);
  return fingerprint(e.trace(), roots);
}

}  // namespace vnt::test
