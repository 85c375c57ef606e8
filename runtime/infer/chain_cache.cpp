// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/chain_cache.hpp"

#include <algorithm>

#include "runtime/trace/trace.hpp"

namespace vnt {

void ChainCache::begin(const Trace& trace, const Node* border) {
  if (trace_ != trace.id()) {
    chains_ = {};  // keys of another trace could alias this one's nodes
    sections_ = {};
    watches_ = {};
    trace_ = trace.id();
    trusted_ = false;
  }
  // Epochs only grow, so a new window is never one an entry was stamped with.
  const uint64_t now = trace.shape_epoch();
  if (!trusted_ || (now != epoch_ && !trace.shape_log().kept_old(epoch_, now, made_from_, borders_))) {
    window_ = now;
    borders_.clear();
  }
  if (std::find(borders_.begin(), borders_.end(), border->seq) == borders_.end()) borders_.push_back(border->seq);
  start_ = now;
}

void ChainCache::end(Trace& trace, bool procedures) {
  const bool quiet = trace.shape_epoch() == start_;
  const uint64_t now = procedures ? trace.touch_shape() : trace.shape_epoch();
  trusted_ = quiet;  // otherwise the next transition opens a new window
  if (!quiet) return;
  epoch_ = now;
  made_from_ = trace.next_seq();
  trace.shape_log().watch(now);
}

void ChainCache::forget(const Trace& trace) { window_ = trace.shape_epoch(); }  // a new epoch: no entry has it

const SectionChain* ChainCache::find(const Node* root) const {
  const Entry* e = chains_.find(root);
  if (e == nullptr || e->window != window_) return nullptr;
  ++hits_;
  return &e->chain;
}

const std::shared_ptr<const SectionDag>* ChainCache::section(const Node* root) const {
  const Section* s = sections_.find(root);
  return s != nullptr && s->window == window_ ? &s->section : nullptr;
}

void ChainCache::put_section(std::shared_ptr<const SectionDag> section) {
  for (Node* r : section->roots()) sections_[r] = Section{window_, section};
}

FreshWatch& ChainCache::watch(Node* root) {
  Watch& w = watches_[root];
  if (w.window != window_) w = Watch{window_, {}};
  return w.watch;
}

void ChainCache::put(Node* root, const SectionChain& chain) { chains_[root] = Entry{window_, chain}; }

}  // namespace vnt
