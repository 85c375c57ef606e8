// The public Runtime API over the engine: value conversion and error translation.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <new>
#include <algorithm>
#include <optional>

#include "parser/syntax.hpp"
#include "runtime/core/chain_diagnostics.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/interrupt.hpp"
#include "runtime/core/text_file.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/syntax/expr.hpp"
#include "vnt/vnt.hpp"

namespace vnt {
namespace {

Datum to_datum(const Value& v) {
  Datum d;
  if (is_nil(v)) return d;
  if (is_bool(v)) d.value = std::get<bool>(v);
  else if (is_number(v)) d.value = std::get<double>(v);
  else if (is_vector(v)) d.value = *std::get<VectorPtr>(v);
  else if (is_matrix(v)) d.value = *std::get<MatrixPtr>(v);
  else if (is_string(v)) d.value = *std::get<StringPtr>(v);
  else d.value = to_string(v), d.printed = true;
  return d;
}

Value from_datum(const Datum& d) {
  struct Conv {
    Value operator()(std::monostate) const { return Nil{}; }
    Value operator()(bool b) const { return b; }
    Value operator()(double x) const { return x; }
    Value operator()(const std::string& s) const { return make_string(s); }
    Value operator()(const Eigen::VectorXd& v) const { return make_vector(v); }
    Value operator()(const Eigen::MatrixXd& m) const { return make_matrix(m); }
  };
  return std::visit(Conv{}, d.value);
}

[[noreturn]] void translate(const Error& e) {
  std::string rendered = render_error(e);
  if (is_depth_error(e))  // what pprun says of --max-depth, for the API's (much lower) default
    rendered += "  note: if the recursion is meant to be this deep, raise vnt::Options::max_depth (the calling "
                "thread's stack must hold it: up to 2 KiB per level, 5 KiB under sanitizers)\n";
  throw RuntimeError(std::string(error_kind_name(e.kind())), span_location(e.span()), shown_message(e), rendered);
}

/// The error of a call into `engine`. The call that left its trace half changed (out of memory where nothing could
/// undo) says so in a last note, as a directive does.
[[noreturn]] void translate(Error e, const Engine& engine, bool was_poisoned) {
  if (!was_poisoned) engine.note_if_poisoned(e);
  translate(e);
}

template <class F>
auto guarded(const Engine& engine, F&& f) {
  const bool was_poisoned = engine.trace().poisoned();
  try {
    return f();
  } catch (const Error& e) {
    translate(e, engine, was_poisoned);
  } catch (const std::bad_alloc&) {  // the trace itself (a builtin's own allocation is an Error already)
    translate(Error(ErrorKind::kOutOfMemory, "out of memory"), engine, was_poisoned);
  } catch (const std::exception& e) {  // a bug, but the promise is a RuntimeError
    translate(Error(ErrorKind::kInternal, e.what()), engine, was_poisoned);
  }
}

std::shared_ptr<const SourceFile> source(std::string_view name, std::string_view text) {
  return std::make_shared<const SourceFile>(SourceFile{std::string(name), std::string(text)});
}

/// A name or label given as text must be one a program could write, a symbol: "" or "a b" would be accepted and
/// then be out of reach of every expression.
void require_symbol(std::string_view text, std::string_view what) {
  bool ok = false;
  try {
    parser::Syntax s = parser::parse_expression(source("<api>", text));
    ok = s.kind == parser::Syntax::Kind::kSymbol && s.text == text;
  } catch (const Error&) {
  }
  if (!ok) raise(ErrorKind::kSyntax, "{}: '{}' is not a name (a symbol such as x)", what, text);
}

/// The value to observe. A default-constructed Datum holds nothing, which no distribution can have produced: a
/// type error, where the engine would say "nil has probability zero" as of a value of the wrong kind.
Value observed_value(const Datum& d, std::string_view what) {
  if (std::holds_alternative<std::monostate>(d.value))
    raise(ErrorKind::kType, "{}: the observed value is missing (a default-constructed vnt::Datum)", what);
  return from_datum(d);
}

}  // namespace

Param::Param(double x) {
  if (!std::isfinite(x))
    translate(Error(ErrorKind::kParam, fmt::format("a parameter's number must be finite, got {}", x)));
  text = fmt::format("{}", x);  // the shortest text that reads back as x
}

double Datum::as_double() const {
  if (auto* x = std::get_if<double>(&value)) return *x;
  if (auto* b = std::get_if<bool>(&value)) return *b ? 1.0 : 0.0;
  throw std::invalid_argument("vnt::Datum is not a number: " + to_string());
}

std::string Datum::to_string() const {
  if (printed)
    if (auto* text = std::get_if<std::string>(&value)) return *text;
  return vnt::to_string(from_datum(*this));
}

struct Runtime::Impl {
  static constexpr std::string_view kInterrupted = "interrupted (Runtime::interrupt)";
  explicit Impl(uint64_t seed) : engine(seed) { engine.set_interrupt(&interrupt_requested, std::string(kInterrupted)); }
  Engine engine;
  std::atomic<bool> interrupt_requested{false};  // Runtime::interrupt, from any thread or a signal handler
  std::vector<Datum> outputs;
  size_t counter = 0;  // of the texts parsed, which are named <api:N>

  /// Undoes, if the call fails, what it noted: the expressions and scope names the engine kept and the number its
  /// text took, so that a failed call changes nothing, not even later calls' <api:N> (but for an inference program
  /// that had started: its kernel reports name it). drop_expressions() frees a sample's expression and number, as
  /// nothing reads them once it has returned.
  class Call {
   public:
    explicit Call(Impl& im)
        : im_(im), kept_(im.engine), counter_(im.counter), reports_(im.engine.kernel_reports().size()),
          exceptions_(std::uncaught_exceptions()) {}
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call() {
      if (std::uncaught_exceptions() > exceptions_ && im_.engine.kernel_reports().size() == reports_)
        im_.counter = counter_;
    }
    void drop_expressions() {
      kept_.drop_expressions();
      im_.counter = counter_;
    }

   private:
    Impl& im_;
    Engine::KeptSince kept_;
    size_t counter_, reports_;
    int exceptions_;
  };

  std::shared_ptr<const SourceFile> next_source(std::string_view text) {
    return source(fmt::format("<api:{}>", ++counter), text);
  }
  const Expr* expression(std::string_view text) {
    return engine.keep(analyze_expression(parser::parse_expression(next_source(text)), engine.params()));
  }
  std::vector<Datum> run(std::string_view program, std::string_view source_name);
};

std::vector<Datum> Runtime::Impl::run(std::string_view program, std::string_view source_name) {
  outputs.clear();
  try {
    guarded(engine, [&] {
      // An empty name would locate errors as ":1:9".
      engine.run_source(source(source_name.empty() ? "<api>" : source_name, program));
      return 0;
    });
  } catch (const RuntimeError& e) {
    if (outputs.empty()) throw;
    try {
      throw RuntimeError(e.kind(), e.location(), e.message(), e.what(), std::move(outputs));
    } catch (const std::bad_alloc&) {  // no memory to hold them: the error without them
    }
    throw;
  }
  return std::move(outputs);
}

Runtime::Runtime(Options options) : impl_(std::make_unique<Impl>(options.seed)) {
  // Depth 0 or less would make every evaluation a "runaway recursion" error.
  if (options.max_depth < 1)
    translate(Error(ErrorKind::kDomain,
                    fmt::format("Options::max_depth must be at least 1, got {}", options.max_depth)));
  ParamMap params;
  for (auto& [name, value] : options.params) params.emplace(name, std::move(value.text));
  impl_->engine.set_params(std::move(params));
  impl_->engine.trace().set_max_eval_depth(options.max_depth);
  // Captures the Impl, not this: a move hands the Impl to another Runtime and leaves this one empty.
  impl_->engine.set_output([impl = impl_.get()](const Value& v, const Directive&) {
    impl->outputs.push_back(to_datum(v));
  });
}

Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

Runtime::Impl& Runtime::impl(std::string_view method) const {
  // A moved-from Runtime has no Impl; a clear error beats the null dereference it would otherwise be.
  if (impl_ == nullptr)
    translate(Error(ErrorKind::kDomain,
                    fmt::format("vnt::Runtime::{}: this runtime was moved from (assign a new Runtime to it first)",
                                method)));
  impl_->interrupt_requested.store(false, std::memory_order_relaxed);  // a request stops only a call under way
  return *impl_;
}

std::vector<Datum> Runtime::execute(std::string_view program, std::string_view source_name) {
  return impl("execute").run(program, source_name);
}

std::vector<Datum> Runtime::execute_file(const std::string& path) {
  Impl& im = impl("execute_file");
  std::string text = guarded(im.engine, [&] {
    // No directive runs yet, so no transaction polls the flag: the read itself stops between its pieces.
    InterruptScope stop_reading(
        [](const void* impl) {
          if (static_cast<const Impl*>(impl)->interrupt_requested.load(std::memory_order_relaxed))
            raise(ErrorKind::kInference, "{}: nothing ran (the file was still being read)", Impl::kInterrupted);
        },
        &im);
    return read_text_file(path);
  });
  return im.run(text, path);  // not execute(), which would forget an interrupt made while the file was read
}

Datum Runtime::assume(std::string_view name, std::string_view expression) {
  Impl& im = impl("assume");
  return guarded(im.engine, [&] {
    Impl::Call call(im);
    require_symbol(name, "assume");
    Datum d;  // converted within the assume: out of memory there fails it
    im.engine.assume(std::string(name), im.expression(expression), {}, [&](const Value& v) { d = to_datum(v); });
    return d;
  });
}

void Runtime::observe(std::string_view expression, const Datum& value, std::string_view label) {
  Impl& im = impl("observe");
  guarded(im.engine, [&] {
    Impl::Call call(im);
    if (!label.empty()) require_symbol(label, "observe: the label");
    Value v = observed_value(value, "observe");
    im.engine.observe(im.expression(expression), v, std::string(label));
    return 0;
  });
}

void Runtime::observe_apply(std::string_view procedure, const std::vector<Datum>& args, const Datum& value) {
  Impl& im = impl("observe_apply");
  guarded(im.engine, [&] {
    std::vector<Value> vs;
    vs.reserve(args.size());
    for (const Datum& a : args) vs.push_back(from_datum(a));
    im.engine.observe_apply(std::string(procedure), vs, observed_value(value, "observe_apply"));
    return 0;
  });
}

Datum Runtime::predict(std::string_view expression, std::string_view label) {
  Impl& im = impl("predict");
  return guarded(im.engine, [&] {
    Impl::Call call(im);
    if (!label.empty()) require_symbol(label, "predict: the label");
    Datum d;
    im.engine.predict(im.expression(expression), std::string(label), [&](const Value& v) { d = to_datum(v); });
    return d;
  });
}

Datum Runtime::sample(std::string_view expression) {
  Impl& im = impl("sample");
  return guarded(im.engine, [&] {
    Impl::Call call(im);
    Datum d;
    im.engine.sample(im.expression(expression), [&](const Value& v) { d = to_datum(v); });
    call.drop_expressions();
    return d;
  });
}

void Runtime::infer(std::string_view program) {
  Impl& im = impl("infer");
  guarded(im.engine, [&] {
    Impl::Call call(im);
    im.engine.infer(substitute_params(parser::parse_expression(im.next_source(program)), im.engine.params()));
    return 0;
  });
}

void Runtime::forget(std::string_view label) {
  Impl& im = impl("forget");
  guarded(im.engine, [&] {
    im.engine.forget(std::string(label));
    return 0;
  });
}

Datum Runtime::report(std::string_view label) const {
  Impl& im = impl("report");
  return guarded(im.engine, [&] { return to_datum(im.engine.report(std::string(label))); });
}

std::vector<std::string> Runtime::take_warnings() { return impl("take_warnings").engine.trace().take_warnings(); }

std::vector<std::string> Runtime::draw_columns() const { return impl("draw_columns").engine.draws().columns(); }

namespace {

/// The index of a column of the draws. An unknown one is a name error (it was an empty column, which a misspelt
/// name could not be told from), naming a few of the columns there are.
size_t column_index(const Draws& d, std::string_view column, std::string_view method) {
  const std::vector<std::string>& columns = d.columns();
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == column) return i;
  constexpr size_t kShown = 5;
  std::string known;
  for (size_t i = 0; i < std::min(columns.size(), kShown); ++i)
    known += fmt::format("{}'{}'", i ? ", " : "", columns[i]);
  if (columns.size() > kShown) known += fmt::format(" and {} more", columns.size() - kShown);
  translate(Error(ErrorKind::kName,
                  columns.empty() ? fmt::format("{}: no column '{}': nothing has been collected", method, column)
                                  : fmt::format("{}: no column '{}' (there are {})", method, column, known)));
}

}  // namespace

std::vector<double> Runtime::draws(std::string_view column) const {
  const Draws& d = impl("draws").engine.draws();
  return d.column(column_index(d, column, "draws"));
}

std::vector<bool> Runtime::draws_present(std::string_view column) const {
  const Draws& d = impl("draws_present").engine.draws();
  const size_t i = column_index(d, column, "draws_present");
  std::vector<bool> present(d.rows());
  for (size_t row = 0; row < present.size(); ++row) present[row] = d.has(i, row);
  return present;
}

size_t Runtime::draw_rows() const { return impl("draw_rows").engine.draws().rows(); }

void Runtime::clear_draws() { impl("clear_draws").engine.draws().truncate(0); }

void Runtime::clear_kernel_reports() { impl("clear_kernel_reports").engine.kernel_reports().clear(); }

namespace {

std::vector<KernelReport> to_reports(const std::vector<KernelRecord>& records) {
  std::vector<KernelReport> out;
  out.reserve(records.size());
  for (const KernelRecord& r : records) {
    out.push_back(KernelReport{r.kernel, r.scope, r.block, span_location(r.span), r.transitions, r.accepted,
                               r.subsampled_transitions, r.sections_visited, r.sections_total, r.exact_transitions});
  }
  return out;
}

}  // namespace

std::vector<KernelReport> Runtime::kernel_reports() const {
  return to_reports(impl("kernel_reports").engine.kernel_reports());
}

std::vector<KernelReport> Runtime::take_kernel_reports() {
  std::vector<KernelRecord>& records = impl("take_kernel_reports").engine.kernel_reports();
  std::vector<KernelReport> out = to_reports(records);  // converted first: out of memory there drops nothing
  records.clear();
  return out;
}

double split_rhat(const std::vector<std::vector<double>>& chains) {
  return split_rhat(std::span<const std::vector<double>>(chains));
}

double multi_chain_ess(const std::vector<std::vector<double>>& chains) {
  return multi_chain_ess(std::span<const std::vector<double>>(chains));
}

void Runtime::interrupt() noexcept {
  if (impl_) impl_->interrupt_requested.store(true, std::memory_order_relaxed);
}

}  // namespace vnt
