// log(2 pi) and its half, which every Gaussian and Stirling-series density subtracts.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace vnt::stdlib {

inline constexpr double kLog2Pi = 1.83787706640934548356;
inline constexpr double kHalfLog2Pi = 0.91893853320467274178;

}  // namespace vnt::stdlib
