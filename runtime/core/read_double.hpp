// Reading a number the one way literals, --param values and CSV cells are read.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

namespace vnt {

/// Reads all of `text` (std::from_chars syntax: no leading '+') as a double. std::errc() with `value`, also for a
/// number too small for a double, which is 0 (or -0, as strtod rounds it); result_out_of_range for one too large (an
/// error rather than a silent infinity; a negative exponent does not tell the two apart: 1 and 400 zeros, e-1, is
/// 1e399); invalid_argument if `text` is empty or not wholly a number.
inline std::errc read_double(std::string_view text, double& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return std::errc::invalid_argument;
  if (ec != std::errc::result_out_of_range) return ec;
  const double rounded = std::strtod(std::string(text).c_str(), nullptr);
  if (!std::isfinite(rounded)) return ec;
  value = rounded;
  return std::errc();
}

}  // namespace vnt
