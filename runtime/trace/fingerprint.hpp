// A canonical text of everything reachable from some roots: structure, values, request counts, constraints,
// registrations and auxiliary state. Two traces with equal fingerprints are the same trace (a test aid).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>

namespace vnt {

class Trace;
struct Node;

std::string fingerprint(Trace& trace, std::span<Node* const> roots);

}  // namespace vnt
