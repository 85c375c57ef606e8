// pprun --chains K: K independent runs of one program in parallel, summarised together with R-hat, so that a chain
// stuck in one mode, or one that has not converged, shows.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/cli/cli.hpp"
#include "runtime/core/chain_diagnostics.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/mcmc_stats.hpp"
#include "runtime/engine/engine.hpp"

namespace vnt::cli {
namespace {

/// What one chain did. Its output is printed in chain order, not as the threads happen to run: as soon as it and
/// every chain before it have finished. Its draws and reports are kept for the summary after the last.
struct ChainRun {
  uint64_t seed = 0;
  std::string out;  // its predictions, for stdout
  std::string err;  // its warnings, then its error, for stderr
  int status = 0;
  Draws draws;
  std::vector<KernelRecord> reports;
};

/// Records an error as pprun would print it, with the status it would exit with.
void record_error(const Options& o, ChainRun& r, const Error& e, int max_depth) {
  r.err += render_error(e);
  if (is_depth_error(e))
    r.err += fmt::format("  note: if the recursion is meant to be this deep, raise the limit with --max-depth (at "
                         "most {} here)\n",
                         std::min(o.max_depth_limit, max_depth));
  r.status = e.kind() == ErrorKind::kInternal ? 1 : 2;
}

void run_chain(const Options& o, const std::shared_ptr<const SourceFile>& file, ChainRun& r, size_t stack_bytes) {
  // A chain's thread may have been given a smaller stack than the main run's: its depth bound follows.
  const int max_depth = std::min(o.max_depth, max_depth_for_stack(stack_bytes));
  try {
    Engine engine(r.seed);
    engine.set_params(o.params);
    engine.trace().set_max_eval_depth(max_depth);
    engine.set_output([&r](const Value& v, const Directive& d) { r.out += format_output(v, d); });
    engine.trace().set_warning_sink([&r](const std::string& m) { r.err += fmt::format("warning: {}\n", m); });
    watch_interrupts(engine);
    try {
      engine.run_source(file);
    } catch (const Error& e) {
      record_error(o, r, e, max_depth);
    }
    // As for one chain: the draws and reports of the [infer]s before a failing directive are kept.
    r.draws = std::move(engine.draws());
    r.reports = std::move(engine.kernel_reports());
  } catch (const Error& e) {
    record_error(o, r, e, max_depth);
  } catch (const std::bad_alloc&) {
    r.err += "error: out of memory\n";
    r.status = 2;
  } catch (const std::exception& e) {
    r.err += fmt::format("internal error: {}\n", e.what());
    r.status = 1;
  }
}

/// Prints a chain's predictions and errors, each under a line naming it.
void print_chain(size_t c, const ChainRun& r) {
  if (!r.out.empty()) std::cout << fmt::format("chain {} (seed {}):\n{}", c + 1, r.seed, r.out);
  std::cout.flush();
  if (!r.err.empty()) std::cerr << fmt::format("chain {} (seed {}):\n{}", c + 1, r.seed, r.err);
  std::cerr.flush();
}

/// Prints finished chains in order: chain c once chains 1 to c have all finished (a long run shows the first
/// chains' predictions while later ones still run, in the order one thread would print them).
class InOrder {
 public:
  explicit InOrder(const std::vector<ChainRun>& runs) : runs_(runs), done_(runs.size(), false) {}
  /// From a worker thread. Printing that fails (out of memory) is left to rest(), on the main thread.
  void finished(size_t c) noexcept {
    const std::lock_guard<std::mutex> lock(m_);
    done_[c] = true;
    if (gave_up_) return;
    try {
      for (; printed_ < runs_.size() && done_[printed_]; ++printed_) print_chain(printed_, runs_[printed_]);
    } catch (...) {
      gave_up_ = true;
    }
  }
  /// Once every chain has finished: those not printed yet.
  void rest() {
    for (; printed_ < runs_.size(); ++printed_) print_chain(printed_, runs_[printed_]);
  }

 private:
  const std::vector<ChainRun>& runs_;
  std::mutex m_;
  std::vector<bool> done_;
  size_t printed_ = 0;
  bool gave_up_ = false;
};

/// Runs every chain, at most as many at a time as the machine has cores, each on a stack of its own as large as
/// pprun's (evaluation recurses).
void run_all(const Options& o, const std::shared_ptr<const SourceFile>& file, std::vector<ChainRun>& runs,
             InOrder& printer) {
  const size_t workers = std::min<size_t>(runs.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c = next++; c < runs.size(); c = next++) {
      run_on_eval_stack([&](size_t stack_bytes) {
        run_chain(o, file, runs[c], stack_bytes);
        return 0;
      });
      printer.finished(c);
    }
  };
  std::vector<std::thread> threads;
  try {
    for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads to be had: fewer workers take every chain
  }
  work();
  for (std::thread& t : threads) t.join();
}

/// The draws of every chain in one table, a first column "chain" (1, 2, ...) telling them apart ("_chain" if the
/// program collects a column "chain", and so on).
Draws all_draws(const std::vector<ChainRun>& runs) {
  std::string chain = "chain";
  auto collected = [&](const std::string& name) {
    return std::any_of(runs.begin(), runs.end(), [&](const ChainRun& r) {
      return std::find(r.draws.columns().begin(), r.draws.columns().end(), name) != r.draws.columns().end();
    });
  };
  while (collected(chain)) chain.insert(0, "_");
  Draws all;
  std::vector<std::pair<std::string, double>> cells;
  for (size_t c = 0; c < runs.size(); ++c) {
    const Draws& d = runs[c].draws;
    for (size_t row = 0; row < d.rows(); ++row) {
      cells.assign(1, {chain, static_cast<double>(c + 1)});
      for (size_t i = 0; i < d.columns().size(); ++i)
        if (d.has(i, row)) cells.emplace_back(d.columns()[i], d.column(i)[row]);
      all.add_row(cells);
    }
  }
  return all;
}

/// One row per collected column over every chain: moments and quantiles of all the draws, the multi-chain ESS and
/// R-hat of the chains' first n draws, n the fewest any chain has (chains stopped by an error or Ctrl-C differ).
std::vector<ColumnSummary> summary_rows(const std::vector<ChainRun>& runs) {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::vector<std::vector<double>>> per_chain;
  for (size_t c = 0; c < runs.size(); ++c) {
    const Draws& d = runs[c].draws;
    for (size_t i = 0; i < d.columns().size(); ++i) {
      auto [it, added] = per_chain.try_emplace(d.columns()[i], runs.size());
      if (added) names.push_back(d.columns()[i]);
      it->second[c] = d.present(i);
    }
  }
  std::vector<ColumnSummary> rows;
  for (const std::string& name : names) {
    const std::vector<std::vector<double>>& chains = per_chain.at(name);
    std::vector<double> pooled;
    for (const std::vector<double>& ch : chains) pooled.insert(pooled.end(), ch.begin(), ch.end());
    ColumnSummary s = summarize(name, pooled);
    size_t fewest = pooled.size();
    for (const std::vector<double>& ch : chains) fewest = std::min(fewest, ch.size());
    std::vector<std::vector<double>> firsts;
    for (const std::vector<double>& ch : chains)
      firsts.emplace_back(ch.begin(), ch.begin() + static_cast<std::ptrdiff_t>(fewest));
    s.ess = multi_chain_ess(firsts);
    s.rhat = split_rhat(firsts);
    rows.push_back(std::move(s));
  }
  return rows;
}

/// The kernel records of every chain, those of one kernel of the program (one place in its text) added up.
std::vector<KernelRecord> all_reports(const std::vector<ChainRun>& runs) {
  std::vector<KernelRecord> merged;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, size_t> index;
  for (const ChainRun& r : runs)
    for (const KernelRecord& k : r.reports) {
      auto [it, added] =
          index.try_emplace(std::make_tuple(k.kernel, k.scope, k.block, span_location(k.span)), merged.size());
      if (added) {
        merged.push_back(k);
        continue;
      }
      KernelRecord& m = merged[it->second];
      m.transitions += k.transitions;
      m.accepted += k.accepted;
      m.subsampled_transitions += k.subsampled_transitions;
      m.sections_visited += k.sections_visited;
      m.sections_total += k.sections_total;
      m.exact_transitions += k.exact_transitions;
    }
  return merged;
}

}  // namespace

int run_chains(const Options& o, const std::shared_ptr<const SourceFile>& file) {
  {
    // What fails before anything runs fails every chain alike: said once, as for one chain, with the warnings of
    // names nothing binds.
    Engine check(o.seed);
    check.set_params(o.params);
    check.trace().set_warning_sink([](const std::string& m) { std::fprintf(stderr, "warning: %s\n", m.c_str()); });
    check.set_warn_unbound_names(true);
    catch_interrupts(check, InterruptMode::kRun);
    check.check_source(file);
  }
  std::vector<ChainRun> runs(o.chains);
  for (size_t c = 0; c < runs.size(); ++c) runs[c].seed = o.seed + c;  // wraps past 2^64 - 1, as a seed may
  InOrder printer(runs);
  run_all(o, file, runs, printer);
  printer.rest();

  int status = 0;
  for (const ChainRun& r : runs)
    if (r.status != 0) status = status == 1 ? 1 : r.status;
  try {
    if (!o.draws_path.empty()) write_draws(o.draws_path, all_draws(runs));
  } catch (const Error& e) {
    std::cerr << render_error(e);
    status = 2;
  }
  if (!o.quiet) {
    const std::vector<ColumnSummary> rows = summary_rows(runs);
    const std::string report = format_kernel_report(all_reports(runs));
    if (!rows.empty()) std::cout << format_summary_table(rows) << (report.empty() ? "" : "\n");
    std::cout << report;
    std::cout.flush();
  }
  size_t failed = 0;
  for (const ChainRun& r : runs) failed += r.status != 0;
  if (failed > 0)
    std::cerr << fmt::format("pprun: {} of {} chains failed (their errors are above)\n", failed, runs.size());
  return status;
}

}  // namespace vnt::cli
