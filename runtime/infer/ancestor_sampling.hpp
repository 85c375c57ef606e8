// When pgibbs can draw the retained particle's ancestor too (ancestor sampling, Lindsten, Jordan & Schön 2014): the
// scaffold's structure decides whether the density of the retained values given an ancestor is one group's weight.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace vnt {

struct Node;
struct Scaffold;
class Trace;

/// The principals each group's walk regenerates first (the ones a regen of the group sets to the retained values).
using ForcedByGroup = std::vector<std::vector<Node*>>;

/// Ancestor sampling weighs a candidate ancestor i of group g's retained values x' by w_i times the density of the
/// whole retained future given i's path, over that of i's path. The first factor of that ratio is the weight of a
/// regeneration of group g on i's path with its principals set to x'; the rest cancels between candidates when no
/// later group reads anything computed from groups before g - 1 (a Markov chain of order one over the groups), and
/// the forced regeneration reproduces the retained state when it makes nothing random but the principals (no
/// request in the resampling set but those of `if`s whose branches are pure, whose brush it makes the same again,
/// their reads counted as the `if`'s; no random choice resampled that is not a principal). Returns the
/// principals of each group's walk if so, nullopt otherwise (pgibbs then resamples without it).
/// `borders` is the scaffold's border split by group (pgibbs's groups), `principals` the principals by group.
std::optional<ForcedByGroup> plan_ancestor_sampling(Trace& trace, const Scaffold& s,
                                                    std::span<const std::vector<Node*>> borders,
                                                    std::span<const std::vector<Node*>> principals);

}  // namespace vnt
