// A kernel's block, as the inference language would give it: scope, mode, kernel name and, for a given block,
// its value.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>

#include "runtime/infer/mix.hpp"

namespace vnt::test {

inline BlockSpec block(const char* scope, BlockSpec::Mode mode, const char* kernel = "mh", Value value = {}) {
  BlockSpec s;
  s.scope = std::string(scope);
  s.mode = mode;
  s.kernel = std::string(kernel);
  s.block = std::move(value);
  return s;
}

}  // namespace vnt::test
