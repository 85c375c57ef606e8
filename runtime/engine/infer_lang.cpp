// The inference language of [infer ...]: kernels (mh), combinators (repeat, do, cycle, mixture) and collect.
// A program is compiled once (validating every argument) and then run; each kernel counts its transitions
// in the engine's kernel report.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "parser/syntax.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/source_text.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/engine/infer_lang.hpp"
#include "runtime/infer/austerity/sequential_test.hpp"
#include "runtime/infer/gibbs.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/pgibbs.hpp"
#include "runtime/infer/subsampled_mh.hpp"
#include "runtime/syntax/expr.hpp"

namespace vnt {
namespace {

using parser::Syntax;

constexpr std::string_view kKnown = "mh, subsampled_mh, gibbs, pgibbs, repeat, do, cycle, mixture, collect";

struct InferOp {
  enum class Kind { kMh, kSubsampled, kGibbs, kPgibbs, kRepeat, kDo, kCycle, kMixture, kCollect };
  Kind kind = Kind::kDo;
  size_t count = 1;
  size_t particles = 0;  // pgibbs
  BlockSpec block;
  MhOptions mh;
  SubsampledOptions sub;
  std::shared_ptr<SubsampledState> sub_state;
  std::vector<InferOp> children;
  std::vector<double> weights;
  std::vector<std::pair<std::string, const Expr*>> columns;
  SourceSpan span;
  size_t report = 0;  // kernels: the index of its record in Engine::kernel_reports()
};

[[noreturn]] void bad(const Syntax& s, std::string message) { throw Error(ErrorKind::kInference, std::move(message), s.span); }

/// An argument as a message shows it (in quotes if `quoted`): its source text, or for a {param} the value given and
/// its name, `1e13 (from {T})`, since the source text `{T}` does not say what was wrong with it.
std::string shown(const Syntax& s, bool quoted = false) {
  std::string source = parser::span_text(s.span);
  std::string value = s.from_param ? s.text : source;
  if (quoted) value = fmt::format("'{}'", value);
  return s.from_param ? fmt::format("{} (from {})", value, source) : value;
}

double number_arg(const Syntax& s, std::string_view what) {
  if (s.kind != Syntax::Kind::kNumber) bad(s, fmt::format("{} must be a number, got {}", what, shown(s, true)));
  return s.number;
}

size_t count_arg(const Syntax& s, std::string_view what) {
  double d = number_arg(s, what);
  if (!(d >= 0) || d != std::floor(d))
    bad(s, fmt::format("{} must be a non-negative integer, got {}", what, shown(s)));
  // 1e12 transitions would take weeks; 1e20 is an integer, so the message must name the bound.
  if (d > 1e12) bad(s, fmt::format("{} must be at most 1e12, got {}", what, shown(s)));
  return static_cast<size_t>(d);
}

// Nbatch and k0 above any data size mean "all of it": capped at 2^53, so a huge literal (1e308) converts to a
// size_t without overflow and behaves like Nbatch >= N.
size_t capped_count(double d) { return static_cast<size_t>(std::min(d, 9007199254740992.0)); }

// 'x and its long form (quote x), which the expression language treats alike.
const Syntax& unquote(const Syntax& s) {
  if (s.kind == Syntax::Kind::kQuote) return s.items[0];
  bool long_form = s.kind == Syntax::Kind::kList && s.items.size() == 2 &&
                   s.items[0].kind == Syntax::Kind::kSymbol && s.items[0].text == "quote";
  return long_form ? s.items[1] : s;
}

BlockSpec block_args(const Syntax& form, const Syntax& scope, const Syntax& block, const std::string& kernel) {
  BlockSpec spec;
  spec.kernel = kernel;
  spec.span = form.span;
  const Syntax& sc = unquote(scope);
  if (sc.kind == Syntax::Kind::kSymbol || sc.kind == Syntax::Kind::kString)
    spec.scope = sc.text;
  else
    bad(scope, fmt::format("{}: the scope must be a symbol such as default, got {}", kernel, shown(scope, true)));
  const Syntax& b = unquote(block);
  if (block.kind == Syntax::Kind::kSymbol && b.text == "one") {
    spec.mode = BlockSpec::Mode::kOne;
  } else if (block.kind == Syntax::Kind::kSymbol && b.text == "all") {
    spec.mode = BlockSpec::Mode::kAll;
  } else {
    spec.mode = BlockSpec::Mode::kValue;
    switch (b.kind) {
      case Syntax::Kind::kNumber: spec.block = b.number; break;
      case Syntax::Kind::kBool: spec.block = b.boolean; break;
      case Syntax::Kind::kSymbol: spec.block = make_symbol(b.text); break;
      case Syntax::Kind::kString: spec.block = make_string(b.text); break;
      default: bad(block, fmt::format("{}: the block must be one, all or a block value", kernel));
    }
    // Known from the text alone: its blocks are the words one and all ('one, quoted, is a block value).
    if (spec.scope == "default")
      bad(block, fmt::format("{}: the default scope has no block value {}: its blocks are one and all, unquoted",
                             kernel, shown(block)));
  }
  return spec;
}

/// pgibbs takes the blocks of block_args but `one` (a Gibbs move on a block drawn at random would need the number of
/// blocks not to change), and ordered blocks: `ordered`, `(ordered_range lo hi)`.
BlockSpec pgibbs_block_args(const Syntax& form, const Syntax& scope, const Syntax& block) {
  const bool range = block.kind == Syntax::Kind::kList && !block.items.empty() &&
                     block.items[0].kind == Syntax::Kind::kSymbol && block.items[0].text == "ordered_range";
  const bool ordered = range || (block.kind == Syntax::Kind::kSymbol && block.text == "ordered");
  if (block.kind == Syntax::Kind::kSymbol && block.text == "one")
    bad(block, "pgibbs: the block must be ordered, (ordered_range lo hi), all or a block value, not one");
  if (!ordered) return block_args(form, scope, block, "pgibbs");
  Syntax all;
  all.kind = Syntax::Kind::kSymbol;
  all.text = "all";
  all.span = block.span;
  BlockSpec spec = block_args(form, scope, all, "pgibbs");
  if (spec.scope == "default")
    bad(block, "pgibbs: the default scope has no ordered blocks: its blocks are all (one group) and one");
  spec.mode = BlockSpec::Mode::kOrdered;
  if (range) {
    if (block.items.size() != 3) bad(block, "pgibbs: expected (ordered_range lo hi)");
    spec.lo = number_arg(block.items[1], "pgibbs: the first block of ordered_range");
    spec.hi = number_arg(block.items[2], "pgibbs: the last block of ordered_range");
    if (!(spec.lo <= spec.hi))
      bad(block, fmt::format("pgibbs: ordered_range needs lo <= hi, got {}", shown(block)));
  }
  return spec;
}

/// `keeper` keeps collect's expressions for a run; with none (a check before the file runs) they are dropped.
InferOp compile(const Syntax& s, const ParamMap& params, Engine* keeper);

BlockSpec default_one(const SourceSpan& span) {
  BlockSpec b;
  b.scope = std::string("default");
  b.kernel = std::string("mh");
  b.span = span;
  return b;
}

double drift_sigma_arg(const Syntax& s, std::string_view kernel) {
  double sigma = number_arg(s, fmt::format("{}: the drift sigma", kernel));
  if (!(sigma > 0) || !std::isfinite(sigma))
    bad(s, fmt::format("{}: the drift sigma must be positive, got {}", kernel, shown(s)));
  return sigma;
}

InferOp compile_mh(const Syntax& s) {
  // (mh scope block T) or (mh scope block 'drift sigma T)
  const auto& a = s.items;
  InferOp op;
  op.kind = InferOp::Kind::kMh;
  op.span = s.span;
  if (a.size() == 4) {
    op.block = block_args(s, a[1], a[2], "mh");
    op.count = count_arg(a[3], "mh: the number of transitions");
    return op;
  }
  if (a.size() == 6) {
    op.block = block_args(s, a[1], a[2], "mh");
    const Syntax& p = unquote(a[3]);
    if (p.kind != Syntax::Kind::kSymbol || p.text != "drift")
      bad(a[3], fmt::format("mh: unknown proposal {} (known: 'drift)", shown(a[3])));
    op.mh.drift_sigma = drift_sigma_arg(a[4], "mh");
    op.count = count_arg(a[5], "mh: the number of transitions");
    return op;
  }
  bad(s, "mh: expected (mh scope block transitions) or (mh scope block 'drift sigma transitions)");
}

std::vector<std::pair<std::string, double>> collect_cells(Engine& engine, const InferOp& op);

/// Compiles and checks what can be checked before anything runs, so a bad program changes nothing.
InferOp compile_checked(Engine& engine, const Syntax& s) {
  InferOp op = compile(s, engine.params(), &engine);
  // The draws of the collect expressions checked leave no trace: a failed check rolls them back, and so does one
  // that passes, so that an [infer] that makes no move does not move the random stream either. It moves no shape:
  // nodes a collect expression makes and removes move it themselves, and the partition checks cached for the
  // current shape (check_subsampling) stay valid from one [infer] to the next.
  TraceTransaction transaction(engine.trace(), /*moves_shape=*/false);
  const Rng stream = engine.trace().rng();
  std::vector<const InferOp*> todo{&op};
  while (!todo.empty()) {
    const InferOp* o = todo.back();
    todo.pop_back();
    bool known = engine.scope_in_program(o->block.scope);
    auto real_if = [](bool drift) { return drift ? ChoiceValues::kReal : ChoiceValues::kAny; };
    if (o->kind == InferOp::Kind::kMh)
      validate_block(engine.trace(), o->block, real_if(o->mh.drift_sigma.has_value()), known);
    if (o->kind == InferOp::Kind::kGibbs) validate_block(engine.trace(), o->block, ChoiceValues::kEnumerable, known);
    if (o->kind == InferOp::Kind::kPgibbs) validate_block(engine.trace(), o->block, ChoiceValues::kAny, known);
    if (o->kind == InferOp::Kind::kSubsampled) {
      validate_block(engine.trace(), o->block, real_if(o->sub.drift_sigma.has_value()), known);
      check_subsampling(engine.trace(), o->block, o->sub);
    }
    // Evaluate what collect will record once, so an expression that cannot be collected fails before any move.
    if (o->kind == InferOp::Kind::kCollect) collect_cells(engine, *o);
    for (const InferOp& c : o->children) todo.push_back(&c);
  }
  engine.trace().rng() = stream;
  return op;
}

// The column names of one collect: the source texts, with the first free suffix #2, #3, ... on a text seen before in
// it, so that each expression keeps a column of its own ((collect (normal 0 1) (normal 0 1)) records two draws).
// A suffixed name is never one of the texts themselves (a symbol may be written x#2).
std::vector<std::string> column_names(const std::vector<std::string>& texts) {
  std::set<std::string_view> written(texts.begin(), texts.end());
  std::set<std::string> used;
  std::map<std::string_view, size_t> next;  // per text, the suffix to try first: linear in the copies of a text
  std::vector<std::string> names;
  for (const std::string& text : texts) {
    auto taken = [&](const std::string& n) { return used.count(n) > 0 || written.count(n) > 0; };
    std::string name = text;
    if (used.count(name) > 0) {
      size_t& k = next.try_emplace(text, 2).first->second;
      while (taken(name = fmt::format("{}#{}", text, k))) ++k;
    }
    used.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

bool is_proposal(const Syntax& s, std::string_view name) {
  const Syntax& p = unquote(s);
  return p.kind == Syntax::Kind::kSymbol && p.text == name;
}

/// An option's value that is one of two symbols (quoted or not): true for `yes`, false for `no`, else an error.
bool either(const Syntax& arg, std::string_view yes, std::string_view no, std::string_view message) {
  const Syntax& v = unquote(arg);
  if (v.kind == Syntax::Kind::kSymbol && v.text == yes) return true;
  if (v.kind == Syntax::Kind::kSymbol && v.text == no) return false;
  bad(arg, fmt::format("{}, got {}", message, shown(arg)));
}

InferOp compile_subsampled(const Syntax& s) {
  // (subsampled_mh scope block Nbatch eps ['drift sigma] T ['k0 K] ['fallback 'mh] ['eps_per 'decision] ['proxy 'taylor])
  const auto& a = s.items;
  constexpr std::string_view kShape =
      "subsampled_mh: expected (subsampled_mh scope block Nbatch eps ['drift sigma] transitions)";
  if (a.size() < 6) bad(s, std::string(kShape));
  InferOp op;
  op.kind = InferOp::Kind::kSubsampled;
  op.span = s.span;
  op.block = block_args(s, a[1], a[2], "subsampled_mh");
  double nbatch = number_arg(a[3], "subsampled_mh: Nbatch");
  double eps = number_arg(a[4], "subsampled_mh: eps");
  if (!(nbatch >= 1) || nbatch != std::floor(nbatch))
    bad(a[3], fmt::format("subsampled_mh: Nbatch must be a positive integer, got {}", shown(a[3])));
  if (!(eps >= 0 && eps < 1))
    bad(a[4], fmt::format("subsampled_mh: eps must be in [0, 1), got {}", shown(a[4])));
  op.sub.batch = capped_count(nbatch);
  op.sub.epsilon = eps;
  size_t i = 5;
  if (is_proposal(a[i], "drift")) {
    if (a.size() < 8) bad(s, std::string(kShape));
    op.sub.drift_sigma = drift_sigma_arg(a[i + 1], "subsampled_mh");
    i += 2;
  } else if (&unquote(a[i]) != &a[i] || a[i].kind == Syntax::Kind::kSymbol || a[i].kind == Syntax::Kind::kString) {
    bad(a[i], fmt::format("subsampled_mh: unknown proposal {} (known: 'drift)", shown(a[i])));
  }
  op.count = count_arg(a[i], "subsampled_mh: the number of transitions");
  std::vector<std::string> given;  // an option given twice, with two values: which one was meant?
  for (++i; i < a.size(); i += 2) {
    const Syntax& key = unquote(a[i]);
    if (i + 1 >= a.size()) bad(a[i], "subsampled_mh: options come in pairs: 'k0 K or 'fallback 'mh");
    if (key.kind != Syntax::Kind::kSymbol)  // a pair whose name is a number or a string: not a missing value
      bad(a[i], fmt::format("subsampled_mh: an option name must be a symbol such as 'k0, got {}", shown(a[i])));
    if (std::find(given.begin(), given.end(), key.text) != given.end())
      bad(a[i], fmt::format("subsampled_mh: option '{}' is given twice", key.text));
    given.push_back(key.text);
    if (key.text == "k0") {
      double k0 = number_arg(a[i + 1], "subsampled_mh: k0");
      if (!(k0 >= 1) || k0 != std::floor(k0))
        bad(a[i + 1], fmt::format("subsampled_mh: k0 must be a positive integer, got {}", shown(a[i + 1])));
      op.sub.min_batches = capped_count(k0);
    } else if (key.text == "fallback") {
      op.sub.fallback_to_mh = either(a[i + 1], "mh", "none", "subsampled_mh: 'fallback takes 'mh or 'none");
    } else if (key.text == "proxy") {
      op.sub.proxies = either(a[i + 1], "taylor", "none", "subsampled_mh: 'proxy takes 'taylor or 'none");
    } else if (key.text == "eps_per") {
      op.sub.spending = either(a[i + 1], "decision", "test", "subsampled_mh: 'eps_per takes 'test or 'decision")
                            ? ErrorSpending::kPerDecision
                            : ErrorSpending::kPerTest;
    } else {
      bad(a[i], fmt::format("subsampled_mh: unknown option '{}' (known: 'k0, 'fallback, 'eps_per, 'proxy)", key.text));
    }
  }
  op.sub_state = std::make_shared<SubsampledState>();
  return op;
}

InferOp compile(const Syntax& s, const ParamMap& params, Engine* keeper) {
  if (s.kind == Syntax::Kind::kNumber) {
    // A bare number N means (mh default one N).
    InferOp op;
    op.kind = InferOp::Kind::kMh;
    op.block = default_one(s.span);
    op.count = count_arg(s, "the number of transitions");
    op.span = s.span;
    return op;
  }
  if (s.kind != Syntax::Kind::kList || s.items.empty() || s.items[0].kind != Syntax::Kind::kSymbol)
    bad(s, fmt::format("expected an inference command such as (mh default one 10), got {}", shown(s, true)));
  const std::string& head = s.items[0].text;
  const auto& a = s.items;
  InferOp op;
  op.span = s.span;
  if (head == "mh") return compile_mh(s);
  if (head == "gibbs") {
    if (a.size() != 4) bad(s, "gibbs: expected (gibbs scope block transitions)");
    op.kind = InferOp::Kind::kGibbs;
    op.block = block_args(s, a[1], a[2], "gibbs");
    op.count = count_arg(a[3], "gibbs: the number of transitions");
    return op;
  }
  if (head == "pgibbs") {
    if (a.size() != 5) bad(s, "pgibbs: expected (pgibbs scope block particles transitions)");
    op.kind = InferOp::Kind::kPgibbs;
    op.block = pgibbs_block_args(s, a[1], a[2]);
    op.particles = count_arg(a[3], "pgibbs: the number of particles");
    if (op.particles == 0) bad(a[3], "pgibbs: the number of particles must be at least 1, got 0");
    if (op.particles > kMaxParticles)
      bad(a[3], fmt::format("pgibbs: the number of particles must be at most {}, got {}", kMaxParticles, shown(a[3])));
    op.count = count_arg(a[4], "pgibbs: the number of transitions");
    return op;
  }
  if (head == "subsampled_mh") return compile_subsampled(s);
  if (head == "repeat") {
    if (a.size() != 3) bad(s, "repeat: expected (repeat N command)");
    op.kind = InferOp::Kind::kRepeat;
    op.count = count_arg(a[1], "repeat: the count");
    op.children.push_back(compile(a[2], params, keeper));
    return op;
  }
  if (head == "do") {
    op.kind = InferOp::Kind::kDo;
    for (size_t i = 1; i < a.size(); ++i) op.children.push_back(compile(a[i], params, keeper));
    return op;
  }
  // (cycle (mh default one 1) N) for (cycle ((mh default one 1)) N): a list of commands never starts with a symbol.
  auto one_command = [&](std::string_view what, std::string_view form) {
    if (a.size() == 3 && a[1].kind == Syntax::Kind::kList && !a[1].items.empty() &&
        a[1].items[0].kind == Syntax::Kind::kSymbol)
      bad(a[1], fmt::format("{}: expected {}, as in {}, got the single command {}", head, what, form, shown(a[1])));
  };
  if (head == "cycle") {
    one_command("a list of commands", "(cycle ((mh default one 1) (mh z one 1)) N)");
    if (a.size() != 3 || a[1].kind != Syntax::Kind::kList) bad(s, "cycle: expected (cycle (command ...) N)");
    op.kind = InferOp::Kind::kCycle;
    for (const Syntax& k : a[1].items) op.children.push_back(compile(k, params, keeper));
    op.count = count_arg(a[2], "cycle: the count");
    return op;
  }
  if (head == "mixture") {
    // (mixture (w1 k1 w2 k2 ...) N)
    one_command("a list of weights and commands", "(mixture (0.5 (mh default one 1) 0.5 (mh z one 1)) N)");
    if (a.size() != 3 || a[1].kind != Syntax::Kind::kList || a[1].items.size() % 2 != 0 || a[1].items.empty())
      bad(s, "mixture: expected (mixture (weight command ...) N)");
    op.kind = InferOp::Kind::kMixture;
    for (size_t i = 0; i < a[1].items.size(); i += 2) {
      double w = number_arg(a[1].items[i], "mixture: a weight");
      const Syntax& weight = a[1].items[i];
      if (!(w >= 0) || !std::isfinite(w))
        bad(weight, fmt::format("mixture: weights must be non-negative and finite, got {}", shown(weight)));
      op.weights.push_back(w);
      op.children.push_back(compile(a[1].items[i + 1], params, keeper));
    }
    double total = 0;
    for (double w : op.weights) total += w;
    if (!(total > 0)) bad(s, "mixture: the weights must not all be zero");
    // Finite weights can sum to inf (1e308 twice), which would pick the last command every time: scale them.
    if (!std::isfinite(total)) {
      double top = *std::max_element(op.weights.begin(), op.weights.end());
      for (double& w : op.weights) w /= top;
    }
    op.count = count_arg(a[2], "mixture: the count");
    return op;
  }
  if (head == "collect") {
    op.kind = InferOp::Kind::kCollect;
    std::vector<std::string> texts;
    for (size_t i = 1; i < a.size(); ++i) texts.push_back(parser::normalized_text(a[i]));
    std::vector<std::string> names = column_names(texts);
    for (size_t i = 1; i < a.size(); ++i) {
      ExprPtr e = analyze_expression(a[i], params);
      op.columns.emplace_back(names[i - 1], keeper != nullptr ? keeper->keep(std::move(e)) : nullptr);
    }
    if (op.columns.empty()) bad(s, "collect: expected at least one expression");
    return op;
  }
  throw Error(ErrorKind::kInference, fmt::format("unknown inference command '{}' (known: {})", head, kKnown),
              s.items[0].span);
}

std::vector<std::pair<std::string, double>> collect_cells(Engine& engine, const InferOp& op) {
  std::vector<std::pair<std::string, double>> cells;
  for (const auto& [name, e] : op.columns) {
    Value v = engine.sample(e);
    if (is_number(v)) {
      cells.emplace_back(name, std::get<double>(v));
    } else if (is_bool(v)) {
      cells.emplace_back(name, std::get<bool>(v) ? 1.0 : 0.0);
    } else if (is_vector(v)) {
      const auto& vec = *std::get<VectorPtr>(v);
      for (Eigen::Index i = 0; i < vec.size(); ++i) cells.emplace_back(fmt::format("{}[{}]", name, i), vec[i]);
    } else {
      throw Error(ErrorKind::kType,
                  fmt::format("collect: {} is {}; only numbers, booleans and vectors can be collected", name,
                              kind_name(v)),
                  e->span);
    }
  }
  return cells;
}

void collect(Engine& engine, const InferOp& op) {
  // One transaction, as a transition: a column that fails gives back the random numbers the others drew.
  TraceTransaction transaction(engine.trace(), /*moves_shape=*/false);  // its samples move it if they change it
  try {
    engine.draws().add_row(collect_cells(engine, op));
  } catch (Error& e) {
    // As a kernel's error says which kernel met it: the expression's own location does not say which [infer] ran.
    e.add_frame(fmt::format("while running collect at {} (the transitions made before it are kept)",
                            span_location(op.span)));
    throw;
  }
}

std::string block_name(const BlockSpec& b) {
  switch (b.mode) {
    case BlockSpec::Mode::kOne: return "one";
    case BlockSpec::Mode::kAll: return "all";
    case BlockSpec::Mode::kValue: break;
    case BlockSpec::Mode::kOrdered:
      return std::isinf(b.lo) && std::isinf(b.hi) ? std::string("ordered")
                                                  : fmt::format("(ordered_range {} {})", b.lo, b.hi);
  }
  return to_string(b.block);
}

/// Gives every kernel of a checked program its record, in program text order (pre-order).
bool is_kernel(const InferOp& op) {
  return op.kind == InferOp::Kind::kMh || op.kind == InferOp::Kind::kSubsampled || op.kind == InferOp::Kind::kGibbs ||
         op.kind == InferOp::Kind::kPgibbs;
}

void add_kernel_records(Engine& engine, InferOp& op) {
  if (is_kernel(op)) {
    op.report = engine.kernel_reports().size();
    KernelRecord r;
    r.kernel = op.block.kernel;
    r.scope = op.block.scope;
    r.block = block_name(op.block);
    r.span = op.span;
    engine.kernel_reports().push_back(std::move(r));
  }
  for (InferOp& c : op.children) add_kernel_records(engine, c);
}

/// Stops the program between two steps when the engine's interrupt flag is set (Ctrl-C, Runtime::interrupt): an
/// inference error, so the transitions made are kept; so are the rows collected (run_infer_program).
void check_interrupt(Engine& engine, const InferOp& op) {
  const Trace& t = engine.trace();
  if (t.interrupt_requested())
    throw Error(ErrorKind::kInference,
                fmt::format("{}: the transitions made and the draws collected before it are kept",
                            t.interrupt_what()), op.span);
}

KernelRecord& count_transition(Engine& engine, const InferOp& op, bool accepted) {
  KernelRecord& r = engine.kernel_reports()[op.report];
  ++r.transitions;
  r.accepted += accepted ? 1 : 0;
  return r;
}

/// The "data touched" cell: the share of all their N that the subsampled transitions scored, and the exact ones.
std::string data_touched(const KernelRecord& r) {
  std::string out;
  if (r.subsampled_transitions > 0) {
    auto k = static_cast<double>(r.subsampled_transitions);
    auto seen = static_cast<double>(r.sections_visited), total = static_cast<double>(r.sections_total);
    out = fmt::format("{:.3g} of N (mean {:.0f} of {:.0f} sections)", seen / total, seen / k, total / k);
  }
  if (r.exact_transitions > 0)
    out += fmt::format("{}exact mh in {} of {} transitions", out.empty() ? "" : "; ", r.exact_transitions,
                       r.transitions);
  return out;
}

/// Runs one transition of kernel `op`; an error it meets says which kernel, and what is kept: the error's own
/// location is where it arose (an observation, a choice), which does not say which [infer] was running.
template <class Transition>
bool in_transition(Engine& engine, const InferOp& op, Transition&& transition) {
  try {
    return transition();
  } catch (Error& e) {
    const KernelRecord& r = engine.kernel_reports()[op.report];
    const uint64_t made = r.transitions;
    e.add_frame(fmt::format("while running {} {} {} at {} ({})", r.kernel, r.scope, r.block, span_location(op.span),
                            made == 0   ? std::string("it had made no transition yet")
                            : made == 1 ? std::string("the transition it had made is kept")
                                        : fmt::format("the {} transitions it had made are kept", made)));
    throw;
  }
}

/// The transitions the kernels of `op` have completed so far.
uint64_t transitions_of(const Engine& engine, const InferOp& op) {
  if (is_kernel(op)) return engine.kernel_reports()[op.report].transitions;
  uint64_t n = 0;
  for (const InferOp& c : op.children) n += transitions_of(engine, c);
  return n;
}

/// The op.count transitions of a kernel whose report counts nothing but moves: each one a transaction.
template <class Transition>
void run_transitions(Engine& engine, const InferOp& op, Transition&& transition) {
  for (size_t i = 0; i < op.count; ++i) {
    check_interrupt(engine, op);
    TraceTransaction scope(engine.trace(), /*moves_shape=*/false);
    const bool moved = in_transition(engine, op, transition);
    count_transition(engine, op, moved);
  }
}

void run(Engine& engine, const InferOp& op) {
  check_interrupt(engine, op);  // also between the steps of loops that make no transition, (repeat 1e12 (do))
  switch (op.kind) {
    // Each transition is a transaction: one that fails leaves the trace as it was before it, its random stream
    // and the order of its choices too (docs/language.md); the kernel itself restores nodes and values.
    case InferOp::Kind::kMh:
      run_transitions(engine, op, [&] { return mh_transition(engine.trace(), op.block, op.mh); });
      return;
    case InferOp::Kind::kGibbs:
      run_transitions(engine, op, [&] { return gibbs_transition(engine.trace(), op.block); });
      return;
    case InferOp::Kind::kPgibbs:
      run_transitions(engine, op, [&] { return pgibbs_transition(engine.trace(), op.block, op.particles); });
      return;
    case InferOp::Kind::kSubsampled:
      if (!op.sub_state->shares_chains()) op.sub_state->share_chains(kernel_chains(engine.trace(), op.block.scope));
      for (size_t i = 0; i < op.count; ++i) {
        check_interrupt(engine, op);
        TraceTransaction transition(engine.trace(), /*moves_shape=*/false);
        const SubsampledStats before = op.sub_state->stats;
        bool accepted = in_transition(engine, op, [&] {
          return subsampled_mh_transition(engine.trace(), op.block, op.sub, *op.sub_state);
        });
        KernelRecord& r = count_transition(engine, op, accepted);
        const SubsampledStats& after = op.sub_state->stats;
        r.exact_transitions += after.exact_transitions - before.exact_transitions;
        // Only a transition the sequential test decided adds its N. A transition that found the scaffold not
        // partitionable part-way and fell back to exact mh also counted the sections it had scored: they are
        // left out, so that the fraction of N is that of the subsampled transitions.
        if (after.sections_total == before.sections_total) continue;
        ++r.subsampled_transitions;
        r.sections_total += after.sections_total - before.sections_total;
        r.sections_visited += after.sections_visited - before.sections_visited;
      }
      return;
    case InferOp::Kind::kRepeat:
      for (size_t i = 0; i < op.count; ++i) run(engine, op.children[0]);
      return;
    case InferOp::Kind::kDo:
      for (const InferOp& c : op.children) run(engine, c);
      return;
    case InferOp::Kind::kCycle:
      for (size_t i = 0; i < op.count; ++i)
        for (const InferOp& c : op.children) run(engine, c);
      return;
    case InferOp::Kind::kMixture: {
      double total = 0;
      for (double w : op.weights) total += w;
      for (size_t i = 0; i < op.count; ++i) {
        const Rng before = engine.trace().rng();
        double u = engine.trace().rng().uniform() * total;
        size_t k = 0;
        while (k + 1 < op.weights.size() && u >= op.weights[k]) u -= op.weights[k++];
        const uint64_t made = transitions_of(engine, op.children[k]);
        try {
          run(engine, op.children[k]);
        } catch (...) {
          // The choice belongs to the first transition it leads to: if that fails, the draw goes back with the
          // rest of the transaction, and the session goes on as if the [infer] had stopped before it.
          if (transitions_of(engine, op.children[k]) == made) engine.trace().rng() = before;
          throw;
        }
      }
      return;
    }
    case InferOp::Kind::kCollect: collect(engine, op); return;
  }
}

}  // namespace

std::string format_kernel_report(std::span<const KernelRecord> records) {
  if (records.empty()) return {};
  std::vector<std::array<std::string, 4>> cells{{"kernel", "transitions", "accepted", "data touched"}};
  std::vector<size_t> name_cells{6};  // a name's width in terminal cells, which its bytes are not (μ, escapes)
  bool touched = false;
  for (const KernelRecord& r : records) {
    std::string name = fmt::format("{} {} {}", r.kernel, r.scope, r.block);
    if (r.span.known()) name += fmt::format(" ({})", span_location(r.span));
    auto share = static_cast<double>(r.accepted) / static_cast<double>(r.transitions);
    std::string rate = r.transitions == 0 ? "-" : fmt::format("{:.3f}", share);
    // A scope's name may hold any character: escaped as messages show it, so that a row stays one line.
    name_cells.push_back(shown_text_width(name));
    cells.push_back({shown_text(name), fmt::format("{}", r.transitions), rate, data_touched(r)});
    touched = touched || !cells.back()[3].empty();
  }
  std::array<size_t, 3> width{};
  for (size_t i = 0; i < cells.size(); ++i) {
    width[0] = std::max(width[0], name_cells[i]);
    for (size_t c = 1; c < 3; ++c) width[c] = std::max(width[c], cells[i][c].size());
  }
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& line = cells[i];
    out += line[0] + std::string(width[0] - name_cells[i], ' ');
    out += fmt::format("  {:>{}}  {:>{}}", line[1], width[1], line[2], width[2]);
    if (touched && !line[3].empty()) out += "  " + line[3];
    out += '\n';
  }
  return out;
}

void check_infer_program(const parser::Syntax& program, const ParamMap& params) { compile(program, params, nullptr); }

void run_infer_program(Engine& engine, const parser::Syntax& program) {
  InferOp op = compile_checked(engine, program);
  add_kernel_records(engine, op);
  size_t rows = engine.draws().rows();
  try {
    run(engine, op);
  } catch (...) {
    // Moves already made are valid MCMC steps and stay. The draws of a run that failed are dropped, but not those
    // of one stopped by hand (Ctrl-C on a long run keeps what it sampled). Rows are added whole, so none is half
    // written.
    if (!engine.trace().interrupt_requested()) engine.draws().truncate(rows);
    throw;
  }
}

}  // namespace vnt
