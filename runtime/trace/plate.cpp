// Plate rows: column storage, scoring (a generic interpreter of the compiled body, and the fused logistic
// scorer), and the compiler from a global lambda to a plate program.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/trace/plate.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "runtime/sp/sp.hpp"
#include "runtime/syntax/expr.hpp"
#include "runtime/trace/procedures.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {

void PlateColumn::push(const Value& v) {
  if (!generic_) {
    const bool number = is_number(v);
    const bool boolean = std::holds_alternative<bool>(v);
    const bool vector = is_vector(v) && std::get<VectorPtr>(v)->size() > 0;
    if (size_ == 0 && (number || boolean || vector)) {
      vectors_ = vector;
      booleans_ = boolean;
      width_ = vector ? static_cast<size_t>(std::get<VectorPtr>(v)->size()) : 0;
    }
    if ((number && !vectors_ && !booleans_) || (boolean && booleans_)) {
      data_.push_back(boolean ? (std::get<bool>(v) ? 1.0 : 0.0) : std::get<double>(v));
      ++size_;
      return;
    }
    if (vector && vectors_ && static_cast<size_t>(std::get<VectorPtr>(v)->size()) == width_) {
      const Eigen::VectorXd& x = *std::get<VectorPtr>(v);
      data_.insert(data_.end(), x.data(), x.data() + x.size());
      ++size_;
      return;
    }
    make_generic();
  }
  values_.push_back(v);
  ++size_;
}

void PlateColumn::push_vector(const double* x, size_t n) {
  if (!generic_ && n > 0 && (size_ == 0 || (vectors_ && width_ == n))) {
    vectors_ = true;
    width_ = n;
    data_.insert(data_.end(), x, x + n);
    ++size_;
    return;
  }
  push(make_vector(Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n))));
}

void PlateColumn::pop() {
  --size_;
  if (!generic_) {
    data_.resize(data_.size() - stride());
    return;
  }
  values_.pop_back();
  // Popping the row that made the column generic (a row that failed to be observed) makes it dense again, so a
  // failed observation does not leave its plate on the generic scorer, without the fused one and its proxies.
  if (size_ == generic_from_) make_dense();
}

Value PlateColumn::value(size_t i) const {
  if (generic_) return values_[i];
  if (booleans_) return data_[i] != 0;
  if (!vectors_) return data_[i];
  return make_vector(Eigen::Map<const Eigen::VectorXd>(row(i), static_cast<Eigen::Index>(width_)));
}

void PlateColumn::make_generic() {
  std::vector<Value> values;
  values.reserve(size_ + 1);
  for (size_t i = 0; i < size_; ++i) values.push_back(value(i));
  values_ = std::move(values);
  data_ = {};
  generic_ = true;
  generic_from_ = size_;
}

void PlateColumn::make_dense() {
  std::vector<double> data;
  data.reserve(size_ * stride());
  for (const Value& v : values_) {
    if (booleans_)
      data.push_back(std::get<bool>(v) ? 1.0 : 0.0);
    else if (vectors_)
      data.insert(data.end(), std::get<VectorPtr>(v)->data(), std::get<VectorPtr>(v)->data() + width_);
    else
      data.push_back(std::get<double>(v));
  }
  data_ = std::move(data);
  values_ = {};
  generic_ = false;
}

size_t PlateColumn::bytes() const {
  return data_.capacity() * sizeof(double) + values_.capacity() * sizeof(Value);
}

// ---------------------------------------------------------------------------------------------------------
// Scoring.

bool fused_logistic_rows(const PlateNode& plate) {
  const PlateProgram& prog = *plate.program;
  if (prog.fused != PlateProgram::Fused::kLogistic) return false;
  const PlateColumn& x = plate.args[prog.fused_param];
  return x.dense() && x.vectors() && plate.observed.dense() && !plate.observed.vectors();
}

std::optional<Eigen::VectorXd> logistic_weights(const PlateNode& plate, const Value& w) {
  if (!fused_logistic_rows(plate) || !is_vector(w)) return std::nullopt;
  // Sizes the SP would reject are left to the generic path, which raises its error.
  const Eigen::VectorXd& wv = *std::get<VectorPtr>(w);
  const auto width = static_cast<Eigen::Index>(plate.args[plate.program->fused_param].width());
  if (wv.size() == width + 1) return wv;
  if (wv.size() != width) return std::nullopt;
  Eigen::VectorXd out(width + 1);
  out[0] = 0;
  out.tail(width) = wv;
  return out;
}

void logistic_log_density_changes(const PlateNode& plate, const Eigen::VectorXd& from, const Eigen::VectorXd& to,
                                  const uint32_t* rows, size_t k, double* out) {
  scan_logistic_rows(plate, from, to, rows, k, [out](size_t j, const auto&, double zf, double zt, double y) {
    out[j] = logistic_log_density_change(zf, zt, y);
  });
}

PlateEvaluator::PlateEvaluator(const PlateNode& plate, std::vector<const Value*> inputs)
    : p_(plate), in_(std::move(inputs)) {
  const PlateProgram& prog = *p_.program;
  slots_.resize(prog.ops.size());
  size_t arity = 0;
  for (const PlateOp& op : prog.ops) arity = std::max(arity, op.args.size());
  ptrs_.resize(prog.ops.size() + arity);
  if (prog.fused != PlateProgram::Fused::kLogistic) return;
  std::optional<Eigen::VectorXd> w = logistic_weights(p_, *in_[prog.fused_input]);
  if (!w) return;
  w_ = std::move(*w);
  width_ = p_.args[prog.fused_param].width();
  fused_ = true;
}

double PlateEvaluator::logistic(size_t i) const {
  const auto d = static_cast<Eigen::Index>(width_);
  Eigen::Map<const Eigen::VectorXd> x(p_.args[p_.program->fused_param].row(i), d);
  const double z = w_[0] + Eigen::Map<const Eigen::VectorXd>(w_.data() + 1, d).dot(x);  // Eigen's SIMD reduction
  return logistic_log_density(z, *p_.observed.row(i));
}

namespace {

/// The observed application's operands as earlier ops of the row computed them: Args::log_odds applies the op
/// that made one again.
class OpOrigins final : public ArgOrigins {
 public:
  OpOrigins(const PlateProgram& prog, const PlateOp& leaf, const Value* const* ptrs)
      : prog_(prog), leaf_(leaf), ptrs_(ptrs) {}

  std::optional<double> log_odds(size_t a) const override {
    const PlateOp& op = prog_.ops[leaf_.args[a]];
    constexpr size_t kMaxArity = 8;
    if (op.kind != PlateOp::Kind::kApply || op.args.size() > kMaxArity) return std::nullopt;
    const Value* in[kMaxArity];
    for (size_t j = 0; j < op.args.size(); ++j) in[j] = ptrs_[op.args[j]];
    return op.sp->log_odds(Args(std::span<const Value* const>(in, op.args.size())));
  }

 private:
  const PlateProgram& prog_;
  const PlateOp& leaf_;
  const Value* const* ptrs_;
};

}  // namespace

double PlateEvaluator::generic(size_t i, Rng* rng) {
  thread_local Rng unused(0);  // deterministic SPs draw nothing
  const PlateProgram& prog = *p_.program;
  const size_t n = prog.ops.size();
  const Value** arg = ptrs_.data() + n;
  for (size_t k = 0; k < n; ++k) {
    const PlateOp& op = prog.ops[k];
    switch (op.kind) {
      case PlateOp::Kind::kParam: {
        const PlateColumn& c = p_.args[op.index];
        if (const Value* v = c.stored(i)) {
          ptrs_[k] = v;
        } else {
          slots_[k] = c.value(i);
          ptrs_[k] = &slots_[k];
        }
        break;
      }
      case PlateOp::Kind::kInput: ptrs_[k] = in_[op.index]; break;
      case PlateOp::Kind::kConst: ptrs_[k] = &op.constant; break;
      case PlateOp::Kind::kApply: {
        for (size_t a = 0; a < op.args.size(); ++a) arg[a] = ptrs_[op.args[a]];
        Args args(std::span<const Value* const>(arg, op.args.size()));
        try {
          if (k + 1 < n) {
            slots_[k] = op.sp->simulate(args, unused);
            ptrs_[k] = &slots_[k];
            break;
          }
          if (rng != nullptr) {
            drawn_ = op.sp->simulate(args, *rng);
            return 0;
          }
          OpOrigins origins(prog, op, ptrs_.data());
          Args scored(std::span<const Value* const>(arg, op.args.size()), nullptr, &origins);
          if (const Value* y = p_.observed.stored(i)) return op.sp->log_density(*y, scored);
          return op.sp->log_density(p_.observed.value(i), scored);
        } catch (Error& e) {
          if (op.expr != nullptr) e.attach_span(op.expr->span);
          throw;
        }
      }
    }
  }
  return kNegInf;  // unreachable: the last op is the observed application
}

double PlateEvaluator::row(size_t i) { return fused_ ? logistic(i) : generic(i, nullptr); }

void PlateEvaluator::rows(const uint32_t* rows, size_t k, double* out) {
  if (fused_) {
    // Rows drawn at random are far apart in a large plate: their cache misses overlap instead of queueing.
    for_rows_in_flight(p_, p_.args[p_.program->fused_param], rows, k,
                       [&](size_t j, uint32_t i) { out[j] = logistic(i); });
  } else {
    for (size_t j = 0; j < k; ++j) out[j] = generic(rows[j], nullptr);
  }
}

void PlateEvaluator::range(size_t first, size_t k, double* out) {
  if (fused_) {
    for (size_t j = 0; j < k; ++j) out[j] = logistic(first + j);
  } else {
    for (size_t j = 0; j < k; ++j) out[j] = generic(first + j, nullptr);
  }
}

double PlateEvaluator::sum() {
  double s = 0;
  if (fused_) {
    for (size_t i = 0; i < p_.rows; ++i) s += logistic(i);
  } else {
    for (size_t i = 0; i < p_.rows; ++i) s += generic(i, nullptr);
  }
  return s;
}

Value PlateEvaluator::simulate(size_t i, Rng& rng) {
  generic(i, &rng);
  return std::move(drawn_);
}

std::vector<const Value*> current_inputs(const PlateNode& plate) {
  std::vector<const Value*> in;
  in.reserve(plate.inputs.size());
  for (const Node* n : plate.inputs) in.push_back(&n->value);
  return in;
}

double plate_total(PlateNode& plate) {
  if (!plate.total_valid) {
    plate.total = PlateEvaluator(plate, current_inputs(plate)).sum();
    plate.total_valid = true;
  }
  return plate.total;
}

// ---------------------------------------------------------------------------------------------------------
// Compiling a global lambda's body.

namespace {

class Compiler {
 public:
  Compiler(Trace& t, const Expr* lambda) : t_(t), lambda_(lambda) {}

  /// Adds the ops of `e`; returns its op number, or nullopt if a plate cannot run it.
  std::optional<uint32_t> compile(const Expr* e) {
    switch (e->kind) {
      case Expr::Kind::kConst: return push_const(e->value);
      case Expr::Kind::kVar: {
        for (size_t j = 0; j < lambda_->params.size(); ++j)
          if (lambda_->params[j] == e->name) {
            PlateOp op;
            op.kind = PlateOp::Kind::kParam;
            op.index = static_cast<uint32_t>(j);
            return push(std::move(op), false);
          }
        if (Node* g = t_.global(e->name)) {
          auto [it, fresh] = input_index_.emplace(g, static_cast<uint32_t>(inputs_.size()));
          if (fresh) inputs_.push_back(g);
          PlateOp op;
          op.kind = PlateOp::Kind::kInput;
          op.index = it->second;
          return push(std::move(op), true);
        }
        if (const Value* b = t_.builtin(e->name)) return push_const(*b);
        return std::nullopt;  // unbound: the general path reports it
      }
      case Expr::Kind::kApp: {
        const Sp* sp = builtin_sp(e->items[0].get());
        if (sp == nullptr || sp == t_.scope_include_sp()) return std::nullopt;
        PlateOp op;
        op.kind = PlateOp::Kind::kApply;
        op.sp = sp;
        op.expr = e;
        bool reads = false;
        for (size_t a = 1; a < e->items.size(); ++a) {
          std::optional<uint32_t> k = compile(e->items[a].get());
          if (!k) return std::nullopt;
          op.args.push_back(*k);
          reads |= reads_input_[*k];
        }
        return push(std::move(op), reads);
      }
      case Expr::Kind::kLambda:
      case Expr::Kind::kIf: return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<PlatePlan> finish(Node* procedure) {
    if (ops_.empty() || ops_.back().kind != PlateOp::Kind::kApply) return std::nullopt;
    // Exactly one random application, the observed one at the root; it must absorb changes of the inputs.
    for (size_t k = 0; k + 1 < ops_.size(); ++k)
      if (ops_[k].kind == PlateOp::Kind::kApply && ops_[k].sp->is_random()) return std::nullopt;
    const PlateOp& leaf = ops_.back();
    if (!leaf.sp->is_random()) return std::nullopt;
    for (size_t a = 0; a < leaf.args.size(); ++a)
      if (reads_input_[leaf.args[a]] && !leaf.sp->can_absorb(a)) return std::nullopt;
    auto program = std::make_shared<PlateProgram>();
    program->params = lambda_->params.size();
    // flip is bernoulli with booleans for 1 and 0 (stdlib/dist/bernoulli.cpp): the same density of the same rows.
    if ((leaf.sp->name() == "bernoulli" || leaf.sp->name() == "flip") && leaf.args.size() == 1) {
      const PlateOp& inner = ops_[leaf.args[0]];
      if (inner.kind == PlateOp::Kind::kApply && inner.sp->name() == "linear_logistic" && inner.args.size() == 2 &&
          ops_[inner.args[0]].kind == PlateOp::Kind::kInput && ops_[inner.args[1]].kind == PlateOp::Kind::kParam) {
        program->fused = PlateProgram::Fused::kLogistic;
        program->fused_input = ops_[inner.args[0]].index;
        program->fused_param = ops_[inner.args[1]].index;
      }
    }
    program->ops = std::move(ops_);
    return PlatePlan{std::move(program), procedure, std::move(inputs_)};
  }

 private:
  /// The primitive SP a builtin operator names (not shadowed by a parameter or a global), or nullptr.
  const Sp* builtin_sp(const Expr* op) const {
    if (op->kind != Expr::Kind::kVar || t_.global(op->name) != nullptr) return nullptr;
    for (const std::string& p : lambda_->params)
      if (p == op->name) return nullptr;
    const Value* b = t_.builtin(op->name);
    if (b == nullptr || !is_procedure(*b)) return nullptr;
    const auto* sp = dynamic_cast<const SpProcedure*>(std::get<ProcPtr>(*b).get());
    return sp == nullptr || sp->aux() != nullptr ? nullptr : &sp->sp();
  }

  uint32_t push_const(const Value& v) {
    PlateOp op;
    op.kind = PlateOp::Kind::kConst;
    op.constant = v;
    return push(std::move(op), false);
  }

  uint32_t push(PlateOp op, bool reads) {
    ops_.push_back(std::move(op));
    reads_input_.push_back(reads);
    return static_cast<uint32_t>(ops_.size() - 1);
  }

  Trace& t_;
  const Expr* lambda_;
  std::vector<PlateOp> ops_;
  std::vector<bool> reads_input_;
  std::vector<Node*> inputs_;
  std::unordered_map<Node*, uint32_t> input_index_;
};

}  // namespace

std::optional<PlatePlan> plan_plate(Trace& trace, const std::string& procedure) {
  Node* const bound = trace.global(procedure);
  Node* n = bound;
  while (n != nullptr && n->kind == NodeKind::kLookup) n = as_lookup(n)->source;
  // A constant lambda of the global environment: its body and the globals it reads are fixed.
  if (n == nullptr || n->kind != NodeKind::kConstant || !is_procedure(n->value)) return std::nullopt;
  const auto* proc = dynamic_cast<const CompoundProcedure*>(std::get<ProcPtr>(n->value).get());
  if (proc == nullptr || proc->env() != nullptr) return std::nullopt;
  Compiler c(trace, proc->lambda());
  if (!c.compile(proc->lambda()->items[0].get())) return std::nullopt;
  // The plate hangs from the name's own node (an alias's lookup, not the lambda it finds), as each row's lookup
  // of the name would: [forget] of the name is then refused while rows use it.
  return c.finish(bound);
}

}  // namespace vnt
