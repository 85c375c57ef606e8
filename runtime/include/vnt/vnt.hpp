// The public C++ API of vnt: a runtime holding one probabilistic execution trace, driven by directives.
// Only std and Eigen types appear here; everything else is behind a pointer.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace vnt {

namespace detail {
template <class T>
inline constexpr bool is_character = std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
                                     std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>
#if defined(__cpp_char8_t)
                                     || std::is_same_v<T, char8_t>
#endif
    ;

/// An Eigen expression evaluated into a VectorXd (one column or one row at compile time: X.row(i) is a data row)
/// or else a MatrixXd.
template <class Derived>
auto dense(const Eigen::MatrixBase<Derived>& m) {
  if constexpr (Derived::ColsAtCompileTime == 1) return Eigen::VectorXd(m.template cast<double>());
  else if constexpr (Derived::RowsAtCompileTime == 1) return Eigen::VectorXd(m.transpose().template cast<double>());
  else return Eigen::MatrixXd(m.template cast<double>());
}
}  // namespace detail

/// A value crossing the API: nothing, a boolean, a number, text (strings, symbols and anything else, printed),
/// a vector or a matrix.
struct Datum {
  std::variant<std::monostate, bool, double, std::string, Eigen::VectorXd, Eigen::MatrixXd> value;
  /// The text is the printed form of a symbol, list or procedure, not a string value (printed without quotes).
  bool printed = false;

  Datum() = default;
  Datum(bool b) : value(b) {}                   // NOLINT(google-explicit-constructor)
  Datum(double x) : value(x) {}                 // NOLINT(google-explicit-constructor)
  /// Any integer (int, long, size_t, int64_t, uint8_t, ...) is a number; beyond 2^53 it is rounded. Without this,
  /// a long or a size_t would be ambiguous among bool, double and int.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                         !detail::is_character<T>, int> = 0>
  Datum(T x) : value(static_cast<double>(x)) {}  // NOLINT(google-explicit-constructor)
  /// A character is not a number: Datum('a') would hold 97. Write Datum("a") for a one-letter string.
  template <class T, std::enable_if_t<detail::is_character<T>, int> = 0>
  Datum(T) = delete;
  Datum(Eigen::VectorXd v) : value(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  Datum(Eigen::MatrixXd m) : value(std::move(m)) {}  // NOLINT(google-explicit-constructor)
  /// Any other Eigen matrix expression (Eigen::Vector3d, a VectorXf, X.row(i), v * 2), as doubles: one with one
  /// column or one row at compile time is a vector, anything else a matrix. Without this, a fixed-size vector
  /// would be ambiguous between the two.
  template <class Derived>
  Datum(const Eigen::MatrixBase<Derived>& m)  // NOLINT(google-explicit-constructor)
      : value(detail::dense(m)) {}
  /// A string value. Without these, Datum("no") would convert the pointer to bool and hold true.
  Datum(std::string s) : value(std::move(s)) {}         // NOLINT(google-explicit-constructor)
  Datum(const char* s) : value(std::string(s)) {}       // NOLINT(google-explicit-constructor)
  Datum(std::string_view s) : value(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  Datum(std::nullptr_t) = delete;                       // would reach the const char* constructor

  bool is_number() const { return std::holds_alternative<double>(value); }
  /// The number (booleans as 0/1); throws std::invalid_argument for other kinds.
  double as_double() const;
  /// The printed form, as pprun prints it.
  std::string to_string() const;
};

/// Every failing API call throws this, and the runtime stays usable. It is as it was before the failed call, except
/// after an infer (or an [infer] of execute) that failed while running: the transitions it made stay. (After running
/// out of memory where a step could not be undone, every later call fails instead: docs/api.md.)
class RuntimeError : public std::runtime_error {
 public:
  RuntimeError(std::string kind, std::string location, std::string message, std::string rendered,
               std::vector<Datum> outputs = {})
      : std::runtime_error(rendered), kind_(std::move(kind)), location_(std::move(location)),
        message_(std::move(message)),
        outputs_(outputs.empty() ? nullptr : std::make_shared<const std::vector<Datum>>(std::move(outputs))) {}
  /// One of "syntax error", "name error", "arity error", "type error", "domain error", "zero probability",
  /// "parameter error", "inference error", "i/o error", "internal error" (a bug in vnt).
  const std::string& kind() const { return kind_; }
  /// "file:line:col" of the offending expression, or empty.
  const std::string& location() const { return location_; }
  /// The message without location.
  const std::string& message() const { return message_; }
  /// From execute and execute_file: the values of the predict and sample directives that ran before the failing
  /// one (which stay in effect), as execute would have returned them. Empty from other calls.
  const std::vector<Datum>& outputs() const {
    static const std::vector<Datum> kNone;
    return outputs_ ? *outputs_ : kNone;
  }

 private:
  std::string kind_, location_, message_;
  std::shared_ptr<const std::vector<Datum>> outputs_;  // shared: an exception is copied as it is thrown
};

/// What one kernel of an inference program did (docs/inference.md, "Kernel report"): one per kernel in the
/// program text of each infer() call or [infer] directive, counting the transitions it completed.
struct KernelReport {
  std::string kernel;    ///< "mh", "subsampled_mh", "gibbs" or "pgibbs" (a bare number N is "mh" on default, one)
  std::string scope;     ///< e.g. "default"
  std::string block;     ///< "one", "all", "ordered", "(ordered_range lo hi)" or the block value as printed
  std::string location;  ///< "file:line:col" of the kernel in the program text
  uint64_t transitions = 0;
  uint64_t accepted = 0;  ///< gibbs: that gave the block another value; pgibbs: that took a new particle
  // subsampled_mh only: its transitions are subsampled, exact, or no move (a block that emptied).
  uint64_t subsampled_transitions = 0;  ///< decided by the sequential test from a subset of the data
  uint64_t sections_visited = 0;        ///< local sections those scored (the data touched)
  uint64_t sections_total = 0;          ///< the sum of N (local sections) over those
  uint64_t exact_transitions = 0;       ///< made by exact mh: no border (N <= 1), or 'fallback 'mh
};

/// The value of a {name} parameter. Text is read as pprun reads --param NAME=TEXT: a decimal number, true or false,
/// or else a string. A number or a boolean may be given as such: a double keeps every digit (std::to_string(1e-7)
/// would give "0.000000"); a non-finite one throws RuntimeError (kind "parameter error"), as no literal has it.
struct Param {
  std::string text;  ///< as it is substituted and shown in messages

  Param(std::string t) : text(std::move(t)) {}   // NOLINT(google-explicit-constructor)
  Param(const char* t) : text(t) {}              // NOLINT(google-explicit-constructor)
  Param(std::string_view t) : text(t) {}         // NOLINT(google-explicit-constructor)
  Param(bool b) : text(b ? "true" : "false") {}  // NOLINT(google-explicit-constructor)
  Param(double x);                               // NOLINT(google-explicit-constructor)
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                         !detail::is_character<T>, int> = 0>
  Param(T n) : text(std::to_string(n)) {}  // NOLINT(google-explicit-constructor)
  template <class T, std::enable_if_t<detail::is_character<T>, int> = 0>
  Param(T) = delete;
  Param(std::nullptr_t) = delete;
};

struct Options {
  uint64_t seed = 0;                    ///< seed of the trace's single random stream
  std::map<std::string, Param> params;  ///< values of {name} external parameters, e.g. {{"eps", 0.01}, {"n", "5"}}
  /// Maximum nesting of evaluation (runaway recursion guard). Evaluation and inference recurse on the calling
  /// thread's stack, up to 2 KiB per level (5 KiB under sanitizers): the default fits an 8 MiB stack (10 MiB under
  /// sanitizers); to raise it, call the Runtime from a thread with a stack of max_depth x 2 KiB + 2 MiB (x 5 KiB
  /// under sanitizers). forget and ~Runtime need no more.
  int max_depth = 2000;
};

/// One thread at a time, const methods too (they forget an interrupt request, and report may recompute a stale
/// value); interrupt() from anywhere.
class Runtime {
 public:
  explicit Runtime(Options options = {});
  ~Runtime();
  /// A moved-from Runtime can be destroyed or assigned to; every other method throws RuntimeError on it.
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;

  /// Runs every directive of a program text in order and returns the values of its predict and sample
  /// directives. Stops at the first failing directive (earlier ones stay in effect, and the RuntimeError it throws
  /// holds their values in outputs()).
  std::vector<Datum> execute(std::string_view program, std::string_view source_name = "<api>");
  /// Same for a file; paths in the program are relative to it. Throws RuntimeError (kind "i/o error").
  std::vector<Datum> execute_file(const std::string& path);

  /// [assume name expression]; returns the value.
  Datum assume(std::string_view name, std::string_view expression);
  /// [observe expression value], labelled if label is given (so forget(label) can remove it). A `value` that holds
  /// nothing (a default-constructed Datum) is a type error.
  void observe(std::string_view expression, const Datum& value, std::string_view label = {});
  /// Observes (procedure args...) = value without parsing anything: the loop-friendly way to load data.
  /// `procedure` is looked up as a variable: an assumed name (e.g. observe_apply("y_x", {x_row}, 1.0)) or a builtin.
  void observe_apply(std::string_view procedure, const std::vector<Datum>& args, const Datum& value);
  /// [predict expression] (kept in the trace, labelled if label is given); returns the current value.
  Datum predict(std::string_view expression, std::string_view label = {});
  /// [sample expression]: evaluates against the current trace without keeping anything.
  Datum sample(std::string_view expression);
  /// [infer program], e.g. infer("(mh default one 100)").
  void infer(std::string_view program);
  /// [forget label] (a label or an assumed name).
  void forget(std::string_view label);
  /// The current value of a labelled directive or an assumed name.
  Datum report(std::string_view label) const;

  /// Names of the columns collected so far by (collect ...), and their draws (NaN where a row lacks one, and for a
  /// NaN draw: pprun --draws writes the first as an empty cell and the second as nan). An unknown column is a
  /// RuntimeError (kind "name error").
  std::vector<std::string> draw_columns() const;
  std::vector<double> draws(std::string_view column) const;
  /// Which rows of a column hold a draw (true for a NaN draw, false where the row has no value); an unknown column
  /// is a name error.
  std::vector<bool> draws_present(std::string_view column) const;
  size_t draw_rows() const;
  /// Drops every row and column collected so far (later collects start a new table): for a session that reads its
  /// draws as it goes, which would otherwise keep them all.
  void clear_draws();
  /// The kernel report of every inference program run so far, in order (including kernels of a failed
  /// infer that had started running). Empty before any infer.
  std::vector<KernelReport> kernel_reports() const;
  /// The kernel reports since the last call (or since the start), and drops them: what a session polling after
  /// each infer reads, at a cost that does not grow with the session.
  std::vector<KernelReport> take_kernel_reports();
  /// Drops the kernel reports so far. Each infer adds a record per kernel of its program, which keeps the program's
  /// text: a session that runs infer in a loop grows by that much each call (about 0.5 KB for a short program).
  void clear_kernel_reports();
  /// Diagnostics that are not errors (e.g. "subsampled_mh: scope 'w' cannot be subsampled (...); using exact mh"),
  /// oldest first, since the last call, which clears them. At most 1000 are kept between calls; the last line then
  /// counts the others.
  std::vector<std::string> take_warnings();

  /// Stops the call that is running. An inference program stops between two transitions, with RuntimeError (kind
  /// "inference error") "interrupted (Runtime::interrupt): the transitions made and the draws collected before it are
  /// kept", keeping both (an infer that fails keeps its moves but drops its draws); any other directive stops at its
  /// next procedure call (or between pieces of a large matrix product or bulk load) with "...: the directive is
  /// undone", leaving the runtime as it was before it; an execute_file still reading its file stops with "...: nothing
  /// ran (the file was still being read)". The one method that may be called from another thread or a signal handler
  /// (it sets an atomic flag; it does nothing on a moved-from Runtime). Every other method forgets an earlier request
  /// when it starts.
  void interrupt() noexcept;

 private:
  struct Impl;
  /// The Impl; throws RuntimeError (naming `method`) if this Runtime was moved from.
  Impl& impl(std::string_view method) const;
  std::unique_ptr<Impl> impl_;
};

/// Convergence diagnostics of several chains' draws of one quantity (e.g. Runtime::draws of one column from
/// runtimes run with different seeds), as pprun --chains prints them (Vehtari et al. 2021; docs/inference.md,
/// "Several chains and R-hat"): the rank-normalised split R-hat (above 1.01: the chains have not mixed) and the
/// multi-chain effective sample size. Both are NaN for chains of unequal lengths or of fewer than 4 draws, a
/// non-finite draw, or draws all equal; R-hat is infinite for chains that each stay at one value, not all the same.
double split_rhat(const std::vector<std::vector<double>>& chains);
double multi_chain_ess(const std::vector<std::vector<double>>& chains);

}  // namespace vnt
