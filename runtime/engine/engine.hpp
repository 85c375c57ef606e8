// The engine: one trace, its directives (with labels), the inference language and the collected draws.
// Every directive is a transaction: if it fails, the trace is exactly as before and the engine goes on.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/engine/draws.hpp"
#include "runtime/sp/registry.hpp"
#include "runtime/syntax/analyze.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt {

struct DirectiveRecord {
  size_t id = 0;
  Directive::Kind kind = Directive::Kind::kAssume;
  std::string label;
  std::string name;  // assume
  Node* root = nullptr;
  const Expr* expr = nullptr;
  std::vector<Node*> rows;  // observe_csv: the root of each row's observation (root is then null)
  std::string bulk;         // observe_apply into a plate: the procedure, so the next row of it joins the plate
};

/// What one kernel of an [infer] program did: one record per kernel in the program text of each [infer]
/// directive, counting the transitions it completed (a bare [infer N] is one `mh default one` kernel).
struct KernelRecord {
  std::string kernel;  // "mh" or "subsampled_mh"
  std::string scope;
  std::string block;   // "one", "all" or the block value as printed
  SourceSpan span;     // of the kernel in the program text
  uint64_t transitions = 0;
  uint64_t accepted = 0;
  // subsampled_mh only. Transitions are subsampled, exact (no border, or 'fallback 'mh), or no move (empty block).
  uint64_t subsampled_transitions = 0;  // decided by the sequential test
  uint64_t sections_visited = 0;        // local sections scored by those (the data touched)
  uint64_t sections_total = 0;          // the sum of N over those
  uint64_t exact_transitions = 0;
};

/// The kernel report as an aligned table (header "kernel transitions accepted [data touched]", one line per
/// record, columns separated by two spaces, each line ending in '\n'); empty for no records. The accepted
/// column is the acceptance rate; "data touched" appears when a record used subsampling or exact fallback.
std::string format_kernel_report(std::span<const KernelRecord> records);

class Engine {
 public:
  explicit Engine(uint64_t seed = 0);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Whether bulk observations (observe_csv, observe_apply) of a procedure a plate can run are stored as plate
  /// rows (the default) or as one family per row. Same draws from the trace's stream either way.
  void set_plates(bool on) { plates_ = on; }
  /// Whether run_source warns, before anything runs, of each name that the input reads and that nothing binds: no
  /// directive of the input assumes it, no earlier one did, and no builtin has it (a typo, which would otherwise
  /// stop the run only when reached). For whole programs (pprun's files): an input that later ones complete, as
  /// in the REPL or the API, would be warned of names they assume.
  void set_warn_unbound_names(bool on) { warn_unbound_names_ = on; }
  void set_params(ParamMap params) { params_ = std::move(params); }
  const ParamMap& params() const { return params_; }
  SpRegistry& registry() { return registry_; }
  Trace& trace() { return *trace_; }
  const Trace& trace() const { return *trace_; }
  Draws& draws() { return draws_; }
  const Draws& draws() const { return draws_; }
  /// One record per kernel of every [infer] run so far, in program order (a program that fails its checks
  /// before running adds none; one that fails while running keeps the counts of its completed transitions).
  std::vector<KernelRecord>& kernel_reports() { return kernel_reports_; }
  const std::vector<KernelRecord>& kernel_reports() const { return kernel_reports_; }
  /// Where the values of predict and sample go (pprun prints them; the API collects them).
  void set_output(std::function<void(const Value&, const Directive&)> out) { output_ = std::move(out); }
  /// A flag (set by a signal handler, e.g. the REPL's Ctrl-C, or another thread) that stops a running [infer]
  /// between two transitions with the inference error "<what>: the transitions made before it are kept"; null
  /// (the default) for none. The engine never clears it.
  /// The same flag also stops the evaluation of any other directive at its next application or poll_interrupt
  /// ("<what>: the directive is undone"), which then fails as a transaction (Trace::set_interrupt).
  void set_interrupt(const std::atomic<bool>* flag, std::string what) { trace_->set_interrupt(flag, std::move(what)); }

  /// Parses and checks the syntax of a whole source text (so a syntax error anywhere runs nothing), then runs
  /// every directive in order; stops at (and throws) the first error. With
  /// `note_skipped`, that error ends with a note counting the directives after it that did not run (the REPL,
  /// where one input may hold several).
  void run_source(const std::shared_ptr<const SourceFile>& file, bool note_skipped = false);
  /// What run_source does before the first directive runs: parses and checks the whole text (and warns of unbound
  /// names if asked to), throwing the error run_source would; runs nothing.
  void check_source(const std::shared_ptr<const SourceFile>& file);
  /// Runs one analyzed directive; its value (predict, sample) goes to the output callback, within the directive:
  /// a callback that throws fails it. Out of memory is an error at the directive.
  void execute(Directive d);
  /// Once out of memory has left the trace half changed (Trace::poisoned), every directive fails with kPoisoned,
  /// and the one that ran out of memory says so in a last note.
  static constexpr std::string_view kPoisoned =
      "this session cannot go on: running out of memory earlier left its trace half changed (start a new one)";
  static constexpr std::string_view kPoisonedNote =
      "note: the trace is left half changed, so no directive can run after this one (start a new session)";
  /// Ends `e` with kPoisonedNote if the trace is poisoned and `e` does not say so yet.
  void note_if_poisoned(Error& e) const;

  /// What a caller does with a directive's value within the directive (prints it, converts it): if it throws (out
  /// of memory, say), the directive fails and leaves the trace as it was.
  using ValueUse = std::function<void(const Value&)>;

  /// Evaluates an expression against the current trace without recording it (sample semantics).
  Value sample(const Expr* e, const ValueUse& use = {});
  /// Keeps an expression alive until release() (a forgotten directive's), or until a KeptSince drops it.
  const Expr* keep(ExprPtr e);
  /// Frees a kept expression that nothing reads any more: a forgotten directive's, an observe's value once read.
  void release(const Expr* e);
  /// How many expressions are kept: what a session's memory grows with besides the trace.
  size_t kept_expressions() const { return kept_.size(); }
  /// Whether a kept expression (a live directive's: not a forgotten one, nor a sample that has run) names `scope` in
  /// a (scope_include 'scope ...): a kernel on it is legal while it has no choices.
  bool scope_in_program(const std::string& scope) const { return program_scopes_.contains(scope); }
  /// Drops again what keep() kept while this lives, if an exception ends its life: a directive that fails has not
  /// run, so a kernel on a scope that only it names stays an error, and its expressions take no memory.
  /// drop_expressions() drops the expressions of a call that succeeded but left nothing that reads them (a sample, an
  /// inference program's collect expressions), so a long session of such calls does not grow.
  class KeptSince {
   public:
    explicit KeptSince(Engine& e)
        : e_(e), exprs_(e.keep_log_.size()), exceptions_(std::uncaught_exceptions()) {
      ++e.keep_guards_;
    }
    KeptSince(const KeptSince&) = delete;
    KeptSince& operator=(const KeptSince&) = delete;
    ~KeptSince();
    void drop_expressions();

   private:
    Engine& e_;
    size_t exprs_;
    int exceptions_;
  };
  /// The value of a predict/assume directive by label or assumed name (a label wins over a name).
  Value report(const std::string& label);
  const std::vector<DirectiveRecord>& directives() const { return directives_; }

  // Directive primitives (also used by the embedding API).
  Value assume(const std::string& name, const Expr* e, const std::string& label = {}, const ValueUse& use = {});
  Value predict(const Expr* e, const std::string& label = {}, const ValueUse& use = {});
  void observe(const Expr* e, const Value& v, const std::string& label = {});
  /// Observes (procedure args...) = v with constant arguments, without parsing (bulk data loading).
  void observe_apply(const std::string& procedure, const std::vector<Value>& args, const Value& v);
  /// Removes the directive with this label, or else the assume of this name; throws kName if there is none.
  void forget(const std::string& label);
  /// Observes every row of a CSV file as one directive (see Directive::kObserveCsv); all or nothing.
  void observe_csv(const Directive& d);
  void infer(const parser::Syntax& program);

 private:
  /// Parses and checks a source text (run_source's first step): its directives, none run yet.
  std::vector<parser::DirectiveSyntax> read_and_check(const std::shared_ptr<const SourceFile>& file,
                                                      bool note_skipped);
  void run_directive(Directive& d);
  void add_record(DirectiveRecord r);
  /// Calls `use` on the value of the record just added; if it throws, takes the record back with its family.
  void use_or_take_back(const ValueUse& use, const Value& v);
  /// Removes a record, its family and an assume's name (forget, and a take-back).
  void remove_record(std::vector<DirectiveRecord>::iterator it);
  std::vector<DirectiveRecord>::iterator find_directive(const std::string& label);
  void require_free_label(const std::string& label, const SourceSpan& span) const;
  void check_directive(const Directive& d) const;
  void refuse_if_poisoned(const SourceSpan& at) const;
  Node* eval_new_family(const Expr* e);
  void uneval_and_destroy(Node* root);
  void unobserve(Node* root);
  Node* observe_row(const std::string& procedure, const std::vector<Value>& args, const Value& v);
  void constrain_new(Node* root, Node* c, const Value& observed, const Expr* e);
  void observe_root(Node* root, const Expr* e, const Value& v, const std::string& label);
  const Expr* apply_site(const std::string& procedure);
  /// Scores rows [first, rows) of `plate` (drawing what the general path would draw); on an error, the rows
  /// are dropped again and the error names the row through `where`.
  double score_new_rows(PlateNode& plate, size_t first, const Expr* site,
                        const std::function<std::string(size_t)>& where);
  void drop_root(const DirectiveRecord& r);
  /// Puts `e` in kept_ with the names it reads (keep() also logs it for KeptSince; apply sites are not logged).
  const Expr* hold(ExprPtr e, bool apply_site, std::vector<std::string> scopes = {});
  /// Takes `e` out of kept_ (if there), with the scope names it counted.
  void unhold(const Expr* e);
  /// The names expression `e` reads (free_names), if it was kept.
  const std::vector<const Expr*>& names_read(const Expr* e) const;
  /// A read of `r`'s name by another live directive's expression, or nullptr.
  const Expr* read_elsewhere(const DirectiveRecord& r) const;

  SpRegistry registry_;
  std::unique_ptr<Trace> trace_;
  ParamMap params_;
  struct Kept {
    ExprPtr expr;
    // The names it reads (free_names): forget must not unbind a name that a procedure body or an untaken branch of
    // another directive will read later.
    std::vector<const Expr*> names;
    bool apply_site = false;  // shared by the rows of every observe_apply of its procedure: not release()d
    std::vector<std::string> scopes;  // the scope names it gives scope_include as quoted symbols (program_scopes_)
  };
  std::unordered_map<const Expr*, Kept> kept_;  // and the apply sites
  std::vector<const Expr*> keep_log_;  // what keep() kept since the outermost live KeptSince began
  int keep_guards_ = 0;                // live KeptSinces
  std::vector<DirectiveRecord> directives_;
  size_t next_id_ = 1;
  Draws draws_;
  std::vector<KernelRecord> kernel_reports_;
  std::function<void(const Value&, const Directive&)> output_;
  std::set<std::string, std::less<>> sample_labels_;  // labels [sample]s have had: they keep nothing to find
  std::map<std::string, const Expr*> apply_sites_;  // in kept_ but not in keep_log_: a failure must not drop one
  std::map<std::string, size_t> program_scopes_;  // how many kept expressions name each scope
  bool plates_ = true;
  bool warn_unbound_names_ = false;
};

}  // namespace vnt
