// Named numeric constants.
// SPDX-License-Identifier: Apache-2.0
#include <numbers>

#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {

void register_constants(SpRegistry& r) {
  r.add_value("pi", Value(std::numbers::pi));
  r.add_value("e", Value(std::numbers::e));
}

}  // namespace vnt::stdlib
