// subsampled_transition: one transition through the partitioned scaffold (Alg. 3), for subsampled_mh.cpp.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

#include "runtime/infer/find_border.hpp"
#include "runtime/infer/mix.hpp"
#include "runtime/infer/subsampled_mh.hpp"

namespace vnt {

class BorderReach;
class Trace;
struct Scaffold;

/// A precondition of the partitioned scaffold does not hold; carries the reason.
struct NotPartitionable {
  std::string reason;
  bool local = false;  // a local section that exact mh's partition regenerates by itself (brush, a choice to resample)
  /// A section never to be left stale: it puts a choice in a block computed from the parameter (kernels select by
  /// block), or has brush (a kernel on a choice that its brush reads meets the brush without passing the stale
  /// root, so no repair would come first).
  bool never_stale = false;
};

/// What can be checked of the partition before a transition draws anything, so a refused partition leaves the
/// stream as exact mh would find it. A plate's rows are local sections only if the border is the one input the
/// proposal changes: an input in the global section, or computed from the border (a local section of its own),
/// would be read by every row. Node sections usually share one shape, so one of them is checked here; the others
/// by check_every_section before an [infer], and as they are visited.
void check_structure(Trace& t, const Scaffold& global, BorderReach& reach, bool exact);
/// Checks the node sections of the border that `which` names as check_structure checks one (a section left stale
/// must be one that changes no structure and no scope when repaired: nothing but values read it then). O(N) node
/// sections for all of them; [infer] runs it before its first transition. With `never_stale_only`, only
/// NotPartitionable::never_stale refusals are thrown: a kernel that may fall back leaves sections with a choice to
/// resample stale, which repairs handle, but not those. Returns how many sections it looked at.
size_t check_every_section(Trace& t, BorderReach& reach, const SectionsToLook& which, bool never_stale_only = false);
/// All of them.
size_t check_every_section(Trace& t, BorderReach& reach);

/// One transition of `choice` (one principal node) through the partitioned scaffold of info.border: Alg. 3, or
/// with `exact` exact MH through every section in order (partitioned_mh_transition). Throws NotPartitionable and
/// DeferredRepair (runtime/regen/refresh.hpp) after restoring the trace, and ShapeMoved before proposing anything.
bool subsampled_transition(Trace& t, const BlockSpec& spec, const SubsampledOptions& opts, SubsampledState& st,
                           const BlockChoice& choice, const BorderInfo& info, bool exact);

}  // namespace vnt
