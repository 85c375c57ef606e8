// Node allocation, edges and lookups of the concrete trace.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/trace.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <utility>

#include "runtime/core/source_text.hpp"
#include "runtime/sp/sp.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/procedures.hpp"

namespace vnt {

Trace::Trace(const SpRegistry& builtins, uint64_t seed)
    : seed_(seed), rng_(seed), builtins_(builtins), branch_(ProcPtr(std::make_shared<BranchProcedure>())) {
  static std::atomic<uint64_t> traces{0};
  id_ = ++traces;
  if (const Value* s = builtins_.find("scope_include"); s && is_procedure(*s))
    if (auto* p = dynamic_cast<SpProcedure*>(std::get<ProcPtr>(*s).get())) scope_include_sp_ = &p->sp();
}

Trace::~Trace() = default;

// A node is counted and numbered once it is made and linked: out of memory on the way leaves the trace as it was.
ConstantNode* Trace::new_constant(const Expr* e, Value v) {
  auto* n = new ConstantNode(e, std::move(v));
  ++live_nodes_;
  n->seq = next_seq_++;
  return n;
}

LookupNode* Trace::new_lookup(const Expr* e, Node* source) {
  auto n = std::make_unique<LookupNode>(e, source);
  n->seq = next_seq_;
  add_new_child(source, n.get());
  ++next_seq_;
  ++live_nodes_;
  return n.release();
}

OutputNode* Trace::new_application(const Expr* e, Node* op, std::vector<Node*>&& operands, EnvPtr env) {
  auto out = std::make_unique<OutputNode>(e, op, std::vector<Node*>(), std::move(env));
  auto req = std::make_unique<RequestNode>(e, out.get());
  out->operands = std::move(operands);
  out->seq = next_seq_;
  req->seq = next_seq_ + 1;
  out->request = req.get();
  size_t made = 0;  // edges, in the order they are made
  auto link = [&](Node* parent, Node* child) {
    add_new_child(parent, child);
    ++made;
  };
  try {
    link(op, req.get());
    link(op, out.get());
    for (Node* o : out->operands) {
      link(o, req.get());
      link(o, out.get());
    }
    link(req.get(), out.get());
  } catch (...) {
    const size_t ops = out->operands.size();
    while (made > 0) {
      const size_t i = --made;  // edge i of the order above
      Node* child = i % 2 == 0 ? static_cast<Node*>(req.get()) : out.get();
      if (i == 2 * ops + 2)
        remove_child(req.get(), out.get());
      else
        remove_child(i < 2 ? op : out->operands[i / 2 - 1], child);
    }
    operands = std::move(out->operands);
    throw;
  }
  next_seq_ += 2;
  live_nodes_ += 2;
  req.release();
  return out.release();
}

void Trace::delete_node(Node* n) {
  --live_nodes_;
  shape_log_.note_deleted(shape_epoch_, n->seq);
  if (!section_orders_.empty()) section_orders_.erase(n);
  // A family is destroyed without removing its operands' edges one by one, so a stale count kept for one of its
  // nodes (a lookup of a border has the border's version) would outlive the node.
  if (!stale_borders_.empty()) stale_borders_.erase(n);
  switch (n->kind) {
    case NodeKind::kConstant: delete static_cast<ConstantNode*>(n); break;
    case NodeKind::kLookup: delete static_cast<LookupNode*>(n); break;
    case NodeKind::kRequest: delete static_cast<RequestNode*>(n); break;
    case NodeKind::kOutput: delete static_cast<OutputNode*>(n); break;
    case NodeKind::kPlate: delete static_cast<PlateNode*>(n); break;
  }
}

void Trace::destroy_family(Node* root) {
  if (root->kind == NodeKind::kOutput) {
    OutputNode* out = as_output(root);
    for (auto it = out->operands.rbegin(); it != out->operands.rend(); ++it) destroy_family(*it);
    destroy_family(out->op);
    delete_node(out->request);
  }
  delete_node(root);
}

void Trace::attach_plate(PlateNode* plate) {
  plate->seq = next_seq_;
  add_child(plate->procedure, plate);
  size_t made = 0;
  try {
    for (; made < plate->inputs.size(); ++made) add_child(plate->inputs[made], plate);
  } catch (...) {
    while (made > 0) remove_child(plate->inputs[--made], plate);
    remove_child(plate->procedure, plate);
    throw;
  }
  ++next_seq_;
  ++live_nodes_;
}

void Trace::destroy_plate(PlateNode* plate) {
  for (auto it = plate->inputs.rbegin(); it != plate->inputs.rend(); ++it) remove_child(*it, plate);
  remove_child(plate->procedure, plate);
  delete_node(plate);
}

void Trace::remove_child(Node* parent, Node* child) {
  move_shape({ShapeEvent::Kind::kRemove, parent->kind == NodeKind::kConstant, parent->seq, child->seq, parent, child});
  auto& c = parent->children;
  auto it = std::find(c.rbegin(), c.rend(), child);
  VNT_ASSERT(it != c.rend(), "child edge missing on removal");
  c.erase(std::next(it).base());
  if (child->kind == NodeKind::kRequest) --parent->request_children;
  if (child->kind == NodeKind::kPlate) {
    --parent->plate_children;
    return;
  }
  if (auto s = stale_borders_.find(parent); s != stale_borders_.end() && child->version != parent->version)
    if (--s->second == 0) stale_borders_.erase(s);
}

std::vector<uint32_t>& Trace::section_order(Node* border, size_t n) {
  std::vector<uint32_t>& order = section_orders_[border];
  const size_t had = order.size();
  if (had == n) return order;
  // New children (a datum observed) are appended: still an arrangement of 0..n-1, in O(new children).
  // Fewer children (a datum forgotten) leave indices past n: start over.
  const size_t from = had < n ? had : 0;
  order.resize(n);
  std::iota(order.begin() + static_cast<std::ptrdiff_t>(from), order.end(), static_cast<uint32_t>(from));
  return order;
}

void Trace::warn(const std::string& message) {
  const std::string shown = shown_text(message);
  if (warning_sink_)
    warning_sink_(shown);
  else if (warnings_.size() < kMaxWarnings)
    warnings_.push_back(shown);
  else
    ++warnings_dropped_;  // an embedding that never takes them must not grow without bound
}

std::vector<std::string> Trace::take_warnings() {
  std::vector<std::string> out = std::move(warnings_);
  warnings_.clear();
  if (warnings_dropped_ > 0)
    out.push_back(fmt::format("... and {} more warning{}", warnings_dropped_, warnings_dropped_ == 1 ? "" : "s"));
  warnings_dropped_ = 0;
  return out;
}

Node* Trace::global(std::string_view name) const {
  auto it = globals_.find(std::string(name));
  return it == globals_.end() ? nullptr : it->second;
}

void Trace::begin_transaction(bool moves_shape) {
  if (moves_shape) move_shape({ShapeEvent::Kind::kDirective});
  if (transaction_depth_++ > 0) return;
  rng_at_begin_ = rng_;
  random_choices_.record(true);
  scopes_.record(true);
}

void Trace::end_transaction(bool failed) {
  VNT_ASSERT(transaction_depth_ > 0, "transaction ended twice");
  if (--transaction_depth_ > 0) return;
  if (failed) {
    rng_ = rng_at_begin_;
    random_choices_.rollback();
    scopes_.rollback();
  }
  random_choices_.record(false);
  scopes_.record(false);
}

void Trace::throw_interrupted(const SourceSpan& span) const {
  throw Error(ErrorKind::kInference, fmt::format("{}: the directive is undone", interrupt_what_), span);
}

Node* Trace::passed_on(Node* n) const {
  if (n->kind == NodeKind::kLookup) return as_lookup(n)->source;
  if (n->kind != NodeKind::kOutput) return nullptr;
  OutputNode* out = as_output(n);
  if (!is_procedure(out->op->value)) return nullptr;
  Procedure& p = *std::get<ProcPtr>(out->op->value);
  if (p.kind() != Procedure::Kind::kPrimitive) return out->esr_parents.empty() ? nullptr : out->esr_parents.back();
  const Sp& sp = static_cast<SpProcedure&>(p).sp();
  return &sp == scope_include_sp_ && out->operands.size() == 3 ? out->operands[2] : nullptr;
}

Node* Trace::constrainable(Node* root) const {
  Node* n = root;
  for (Node* next = passed_on(n); next != nullptr; next = passed_on(n)) n = next;
  // The chain ends at a primitive application, which must be random.
  if (n->kind != NodeKind::kOutput || !is_procedure(as_output(n)->op->value)) return nullptr;
  const Procedure& p = *std::get<ProcPtr>(as_output(n)->op->value);
  return p.kind() == Procedure::Kind::kPrimitive && static_cast<const SpProcedure&>(p).sp().is_random() ? n : nullptr;
}

Procedure& operator_procedure(const OutputNode* out) {
  const Value& v = out->op->value;
  if (!is_procedure(v)) {
    SourceSpan span = out->op->expr ? out->op->expr->span : SourceSpan{};
    throw Error(ErrorKind::kType, fmt::format("cannot apply {} ({}): not a procedure", kind_name(v), to_string(v)),
                span);
  }
  return *std::get<ProcPtr>(v);
}

}  // namespace vnt
