// Named numeric constants; `inf`, `-inf` and `nan` are also how numbers that are not finite print, so that a
// printed number reads back.
// SPDX-License-Identifier: Apache-2.0
#include <limits>
#include <numbers>

#include "runtime/sp/registry.hpp"

namespace vnt::stdlib {

void register_constants(SpRegistry& r) {
  r.add_value("pi", Value(std::numbers::pi));
  r.add_value("e", Value(std::numbers::e));
  r.add_value("inf", Value(std::numeric_limits<double>::infinity()));
  r.add_value("-inf", Value(-std::numeric_limits<double>::infinity()));
  r.add_value("nan", Value(std::numeric_limits<double>::quiet_NaN()));
}

}  // namespace vnt::stdlib
