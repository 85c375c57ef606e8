// Trace fingerprints for tests of exact restoration.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/fingerprint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "runtime/sp/sp.hpp"
#include "runtime/trace/plate.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {
namespace {

class Printer {
 public:
  explicit Printer(Trace& t) : t_(t) {}

  size_t id(Node* n) {
    auto [it, fresh] = ids_.emplace(n, ids_.size());
    if (fresh) pending_.push_back(n);
    return it->second;
  }

  void run(std::span<Node* const> roots) {
    for (Node* r : roots) id(r);
    for (size_t i = 0; i < pending_.size(); ++i) print(pending_[i]);
    out_ += fmt::format("random_choices={}\n", t_.random_choices().size());
  }
  std::string& out() { return out_; }

 private:
  void print(Node* n) {
    std::string v = to_string(n->value);
    if (is_procedure(n->value))
      if (auto* p = dynamic_cast<SpProcedure*>(std::get<ProcPtr>(n->value).get()); p && p->aux())
        v += " aux=" + p->aux()->to_string();
    out_ += fmt::format("#{} k={} v={} c={}{}{} req={} rc={}", ids_[n], static_cast<int>(n->kind), v,
                        n->children.size(), n->constrained ? " constrained" : "", n->observation_root ? " obs" : "",
                        n->num_requests, t_.random_choices().contains(n) ? 1 : 0);
    switch (n->kind) {
      case NodeKind::kConstant: break;
      case NodeKind::kLookup: out_ += fmt::format(" src=#{}", id(as_lookup(n)->source)); break;
      case NodeKind::kRequest: out_ += fmt::format(" esrs={}", as_request(n)->esrs.size()); break;
      case NodeKind::kOutput: {
        OutputNode* o = as_output(n);
        out_ += fmt::format(" op=#{}", id(o->op));
        for (Node* x : o->operands) out_ += fmt::format(" arg=#{}", id(x));
        out_ += fmt::format(" req=#{}", id(o->request));
        for (Node* e : o->esr_parents) out_ += fmt::format(" esr=#{}", id(e));
        break;
      }
      case NodeKind::kPlate: {
        // The cached total is not state; rows are fixed data, so their count identifies them.
        PlateNode* p = as_plate(n);
        out_ += fmt::format(" proc=#{} rows={}", id(p->procedure), p->rows);
        for (Node* x : p->inputs) out_ += fmt::format(" in=#{}", id(x));
        break;
      }
    }
    out_ += '\n';  // children only by count: their order may change on restore and carries no meaning
  }

  Trace& t_;
  std::unordered_map<Node*, size_t> ids_;
  std::vector<Node*> pending_;
  std::string out_;
};

}  // namespace

std::string fingerprint(Trace& trace, std::span<Node* const> roots) {
  Printer p(trace);
  p.run(roots);
  return std::move(p.out());
}

}  // namespace vnt
