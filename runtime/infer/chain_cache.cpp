// SPDX-License-Identifier: Apache-2.0
#include "runtime/infer/chain_cache.hpp"

#include <algorithm>

#include "runtime/scaffold/scaffold.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {

void ChainCache::begin(const Trace& trace, const Node* border) {
  if (trace_ != trace.id()) {
    chains_ = {};  // keys of another trace could alias this one's nodes
    sections_ = {};
    watches_ = {};
    holders_ = {};
    trace_ = trace.id();
    trusted_ = false;
  }
  // Epochs only grow, so a new window is never one an entry was stamped with.
  const uint64_t now = trace.shape_epoch();
  if (!trusted_ || (now != epoch_ && !trace.shape_log().kept_old(epoch_, now, made_from_, borders_))) {
    watch_window_ = now;
    if (!trusted_ || !forget_touched(trace, now)) {
      window_ = now;
      borders_.clear();
      holders_.clear();
      all_held_once_ = true;
    }
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

void ChainCache::forget(const Trace& trace) {  // a new epoch: no entry has it
  window_ = watch_window_ = trace.shape_epoch();
  holders_.clear();
  all_held_once_ = true;
}

bool ChainCache::forget_touched(const Trace& trace, uint64_t now) {
  const auto events = trace.shape_log().since(epoch_, now);
  if (!events || !all_held_once_) return false;
  using K = ShapeEvent::Kind;
  for (const ShapeEvent& e : *events)
    if (e.kind == K::kOther) return false;
  // A cached chain or section holds its nodes, and the addresses of what they read (operands, which never change,
  // and the family an output passes on): a node that gained or lost an edge, or was observed or no longer, is named
  // by an event, and one deleted since lost its edges first. Nodes made since are in no entry.
  for (const ShapeEvent& e : *events) {
    if (e.kind == K::kDirective) continue;
    if (e.parent_node != nullptr && e.parent < made_from_) forget_holder(e.parent_node);
    if (e.child_node != nullptr && e.child < made_from_) forget_holder(e.child_node);
  }
  return true;
}

void ChainCache::forget_holder(const Node* n) {
  Node* const* holder = holders_.find(n);
  if (holder == nullptr) return;
  Node* root = *holder;
  // The entries' nodes are keys here, never read: some may be deleted.
  auto unhold = [&](Node* x) { holders_.erase(x); };
  if (const Entry* c = chains_.find(root)) {
    c->chain.for_each_node(unhold);
    chains_.erase(root);
  }
  if (const Section* sec = sections_.find(root)) {
    const std::shared_ptr<const SectionDag> dag = sec->section;  // the entries of its roots share it
    dag->for_each_node(unhold);
    for (Node* r : dag->roots()) sections_.erase(r);
  }
  holders_.erase(n);
}

const SectionChain* ChainCache::find(const Node* root) const {
  const Entry* e = chains_.find(root);
  if (e == nullptr || e->window != window_) return nullptr;
  ++hits_;
  return &e->chain;
}

const std::shared_ptr<const SectionDag>* ChainCache::section(const Node* root) const {
  const Section* s = sections_.find(root);
  if (s == nullptr || s->window != window_) return nullptr;
  ++section_hits_;
  return &s->section;
}

void ChainCache::put_section(std::shared_ptr<const SectionDag> section, const Scaffold* scaffold) {
  for (Node* r : section->roots()) sections_[r] = Section{window_, section};
  Node* root = section->roots()[0];
  section->for_each_node([&](Node* n) { hold(n, root); });
  if (scaffold == nullptr) return;
  scaffold->drg.for_each([&](Node* n, int) { hold(n, root); });
  scaffold->absorbing.for_each([&](Node* n) { hold(n, root); });
}

FreshWatch& ChainCache::watch(Node* root) {
  Watch& w = watches_[root];
  if (w.window != watch_window_) w = Watch{watch_window_, {}};
  return w.watch;
}

void ChainCache::put(Node* root, const SectionChain& chain) {
  chains_[root] = Entry{window_, chain};
  hold(root, root);
  chain.for_each_node([&](Node* n) { hold(n, root); });
}

}  // namespace vnt
