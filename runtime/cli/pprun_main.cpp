// pprun: run a .vnt program (or a REPL without a file), print predictions, write draws, a summary and the
// kernel report.
// Exit codes: 0 ok, 2 usage or program error, 1 internal error.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>

#include "runtime/cli/cli.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/mcmc_stats.hpp"
#include "runtime/core/text_file.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/trace/trace.hpp"

namespace vnt::cli {
namespace {

constexpr int kDefaultMaxDepth = 20000;
constexpr unsigned kMaxChains = 1024;  // each chain holds a trace and, while it runs, a thread

/// The program at `path`; "-" is standard input, named <stdin> in messages (its data files are relative to the
/// current directory).
std::shared_ptr<const SourceFile> read_source(const std::string& path) {
  if (path == "-") return std::make_shared<const SourceFile>(SourceFile{"<stdin>", read_text_file("/dev/stdin")});
  return std::make_shared<const SourceFile>(SourceFile{path, read_text_file(path)});
}

/// The summary table of the collected draws, if any, then the kernel report, if any kernel ran (a blank line
/// between the two tables).
void print_summary(const Engine& engine, std::ostream& out) {
  const Draws& draws = engine.draws();
  std::string report = format_kernel_report(engine.kernel_reports());
  if (draws.columns().empty()) {  // nothing collected, or only empty vectors: no table of no rows
    out << report;
    return;
  }
  std::vector<ColumnSummary> rows;
  for (size_t i = 0; i < draws.columns().size(); ++i) {
    std::vector<double> v = draws.present(i);
    rows.push_back(summarize(draws.columns()[i], v));
  }
  out << format_summary_table(rows);
  if (!report.empty()) out << '\n' << report;
}

/// Whether the draws can be written, checked before the run so that a long run does not end in "cannot write": an
/// existing file is opened for appending (which changes nothing), a new one is created and removed again.
void check_draws_writable(const Options& o) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(o.draws_path, ec);
  errno = 0;
  std::ofstream probe(o.draws_path, std::ios::app);
  if (!probe) raise(ErrorKind::kIo, "cannot write '{}': {}", o.draws_path, std::strerror(errno));
  probe.close();
  if (!existed) std::filesystem::remove(o.draws_path, ec);
}

int run_file(const Options& o) {
  check_draws_path(o);
  if (o.chains > 1) return run_chains(o, read_source(o.file));
  Engine engine(o.seed);
  engine.set_params(o.params);
  engine.trace().set_max_eval_depth(o.max_depth);
  engine.set_output(print_output);
  engine.trace().set_warning_sink([](const std::string& m) {
    std::fflush(stdout);
    std::fprintf(stderr, "warning: %s\n", m.c_str());
  });
  engine.set_warn_unbound_names(true);  // a typo in a late directive, before the hour of sampling that precedes it
  catch_interrupts(engine, InterruptMode::kRun);
  try {
    engine.run_source(read_source(o.file));
  } catch (...) {
    // The [infer]s before the failing (or interrupted) directive keep their moves, and their draws too: an hour
    // of sampling is not lost to a typo further down, or to Ctrl-C. With nothing collected the file is still
    // written (empty), so that an older run's draws are not taken for this one's. The summary comes before the
    // error, which is then the last thing on the screen.
    std::fflush(stdout);
    try {
      if (!o.draws_path.empty()) write_draws(o.draws_path, engine.draws());
      if (!o.quiet) print_summary(engine, std::cout);
      std::cout.flush();
    } catch (const Error& e) {
      fmt::print(stderr, "pprun: {}\n", e.what());
    } catch (const std::bad_alloc&) {  // a trace that ran out of memory: the error says so
    }
    throw;
  }
  std::fflush(stdout);
  if (!o.draws_path.empty()) write_draws(o.draws_path, engine.draws());
  if (!o.quiet) print_summary(engine, std::cout);
  return 0;
}

/// A --max-depth from 1 to the most the evaluation stack holds (a larger one would overflow it).
CLI::Validator depth_range(int limit) {
  return CLI::Validator(
      [limit](std::string& s) -> std::string {
        int d = 0;
        if (!CLI::detail::lexical_cast(s, d) || d < 1 || d > limit)
          return fmt::format("must be an integer from 1 to {} (the most this evaluation stack holds), got {}", limit,
                             s);
        return {};
      },
      "");
}

/// A --seed of decimal digits that fits 64 bits (CLI11 alone turns -1 and 2^64 into 2^64 - 1 without a word).
CLI::Validator seed_range() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
          return fmt::format("must be an integer from 0 to {}, got {}", std::numeric_limits<uint64_t>::max(), s);
        return {};
      },
      "");
}

/// CLI11's message for an option given twice ("--seed: At Most 1 required but received 2") in words.
std::string usage_message(std::string message) {
  constexpr std::string_view kTwice = ": At Most 1 required but received ";
  const size_t at = message.find(kTwice);
  if (at == std::string::npos || message.rfind("--", 0) != 0) return message;
  return fmt::format("{} is given {} times (give it once)", message.substr(0, at), message.substr(at + kTwice.size()));
}

int pprun_main(int argc, char** argv, size_t stack_bytes) {
  CLI::App app{"pprun: run a vnt probabilistic program (no file: start a REPL)", "pprun"};
  Options o;
  o.max_depth_limit = max_depth_for_stack(stack_bytes);
  o.max_depth = std::min(kDefaultMaxDepth, o.max_depth_limit);
  std::vector<std::string> params;
  CLI::Option* file = app.add_option("file", o.file, "the .vnt program to run (-: read it from standard input)");
  app.add_option("--seed", o.seed, "seed of the trace's random stream")->default_val(0)->check(seed_range());
  // One name=value per --param: else `pprun --param n=3 model.vnt` takes the file for a second parameter.
  app.add_option("--param", params, "external parameter {name} of the program, as name=value (repeatable)")
      ->allow_extra_args(false);
  CLI::Option* draws = app.add_option("--draws", o.draws_path, "write the collected draws to this CSV file");
  app.add_option("--max-depth", o.max_depth,
                 fmt::format("maximum nesting of evaluation (a recursive call takes 2 or 3 levels), at most {} here "
                             "(deeper is a runaway recursion error)",
                             o.max_depth_limit))
      ->default_val(o.max_depth)
      ->check(depth_range(o.max_depth_limit));
  app.add_option("--chains", o.chains,
                 "run this many independent chains in parallel (seeds S, S+1, ...) and summarise them together, "
                 "with R-hat")
      ->default_val(1)
      ->check(CLI::Range(1u, kMaxChains).description(""));
  app.add_flag("--quiet", o.quiet, "do not print the summary table and the kernel report");
  app.set_version_flag("--version", std::string("pprun ") + VNT_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // "pprun: " as on pprun's own usage errors (CLI11 prints its message bare).
    std::cerr << "pprun: " << usage_message(e.what()) << "\nRun with --help for more information.\n";
    return 2;
  }
  if (file->count() > 0 && o.file.empty()) {  // pprun "$MODEL" with MODEL unset: not a REPL that exits at once
    std::cerr << "pprun: the program file name is empty\n";
    return 2;
  }
  if (draws->count() > 0 && o.draws_path.empty()) {  // else it would be taken for no --draws, writing nothing
    std::cerr << "pprun: --draws expects a file name, got ''\n";
    return 2;
  }
  for (const std::string& p : params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "pprun: --param expects name=value, got '" << p << "'\n";
      return 2;
    }
    // Two values for one name: which one was meant? (The last one silently won.)
    if (!o.params.emplace(p.substr(0, eq), p.substr(eq + 1)).second) {
      std::cerr << "pprun: --param " << p.substr(0, eq) << " is given twice\n";
      return 2;
    }
  }
  if (o.file.empty() && !o.draws_path.empty()) {  // it would be ignored: the REPL writes no draws
    std::cerr << "pprun: --draws needs a program file; the REPL does not write draws\n";
    return 2;
  }
  if (o.file.empty() && o.chains > 1) {
    std::cerr << "pprun: --chains needs a program file; the REPL runs one chain\n";
    return 2;
  }
  if (o.file.empty()) return run_repl(o);
  int rc = guarded(o, [&] { return run_file(o); });
  if (rc != 0 && interrupt_requested()) end_as_interrupted();
  return rc;
}

}  // namespace

void check_draws_path(const Options& o) {
  if (o.draws_path.empty()) return;
  // The draws would replace the program itself (pprun m.vnt --draws m.vnt).
  std::error_code same_error;
  if (std::filesystem::equivalent(o.file, o.draws_path, same_error))
    raise(ErrorKind::kIo, "--draws: '{}' is the program file, which the draws would overwrite", o.draws_path);
  check_draws_writable(o);
}

void write_draws(const std::string& path, const Draws& draws) {
  std::ofstream out(path);
  if (!out) raise(ErrorKind::kIo, "cannot write '{}': {}", path, std::strerror(errno));
  draws.write_csv(out);
  // The file buffer is written at close: a full disk shows only then.
  errno = 0;
  out.close();
  if (out.fail()) raise(ErrorKind::kIo, "cannot write '{}': {}", path, errno != 0 ? std::strerror(errno) : "write failed");
}

std::string format_output(const Value& v, const Directive& d) {
  if (!d.label.empty()) return fmt::format("{}: {}\n", d.label, to_string(v));
  return fmt::format("{}\n", to_string(v));
}

void print_output(const Value& v, const Directive& d) { fmt::print("{}", format_output(v, d)); }

int guarded(const Options& o, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    std::fflush(stdout);
    std::cerr << render_error(e);
    if (is_depth_error(e))
      std::cerr << fmt::format("  note: if the recursion is meant to be this deep, raise the limit with --max-depth "
                               "(at most {} here)\n",
                               o.max_depth_limit);
    return e.kind() == ErrorKind::kInternal ? 1 : 2;
  } catch (const std::bad_alloc&) {  // the trace itself (a builtin's own allocation is an Error already)
    std::fflush(stdout);
    std::cerr << "error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace vnt::cli

int main(int argc, char** argv) {
  return vnt::cli::run_on_eval_stack([&](size_t stack_bytes) { return vnt::cli::pprun_main(argc, argv, stack_bytes); });
}
