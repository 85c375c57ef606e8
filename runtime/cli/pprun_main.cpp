// pprun: run a .vnt program (or a REPL without a file), print predictions, write draws and a summary.
// Exit codes: 0 ok, 2 usage or program error, 1 internal error.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <pthread.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "runtime/cli/cli.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/core/mcmc_stats.hpp"
#include "runtime/engine/engine.hpp"

namespace vnt::cli {
namespace {

std::shared_ptr<const SourceFile> read_source(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return std::make_shared<const SourceFile>(SourceFile{path, ss.str()});
}

void print_summary(const Draws& draws, std::ostream& out) {
  if (draws.rows() == 0) return;
  std::vector<ColumnSummary> rows;
  for (size_t i = 0; i < draws.columns().size(); ++i) {
    std::vector<double> v = draws.present(i);
    rows.push_back(summarize(draws.columns()[i], v));
  }
  out << format_summary_table(rows);
}

int run_file(const Options& o) {
  Engine engine(o.seed);
  engine.set_params(o.params);
  engine.trace().set_max_eval_depth(o.max_depth);
  engine.set_output([](const Value& v, const Directive& d) {
    if (!d.label.empty())
      fmt::print("{}: {}\n", d.label, to_string(v));
    else
      fmt::print("{}\n", to_string(v));
  });
  engine.run_source(read_source(o.file));
  std::fflush(stdout);
  if (!o.draws_path.empty()) {
    std::ofstream out(o.draws_path);
    if (!out) raise(ErrorKind::kIo, "cannot write '{}': {}", o.draws_path, std::strerror(errno));
    engine.draws().write_csv(out);
  }
  if (!o.quiet) print_summary(engine.draws(), std::cout);
  return 0;
}

struct ThreadCall {
  std::function<int()> fn;
  int result = 1;
};

void* thread_main(void* p) {
  auto* call = static_cast<ThreadCall*>(p);
  call->result = call->fn();
  return nullptr;
}

/// Runs `fn` on a thread with a large stack, so deeply recursive models are limited by max_depth, not by 8 MB.
int run_with_big_stack(std::function<int()> fn) {
  ThreadCall call{std::move(fn)};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{1} << 30);
  pthread_t th;
  if (pthread_create(&th, &attr, thread_main, &call) != 0) {
    pthread_attr_destroy(&attr);
    return call.fn();
  }
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  return call.result;
}

}  // namespace

int guarded(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    std::fflush(stdout);
    std::cerr << render_error(e);
    return e.kind() == ErrorKind::kInternal ? 1 : 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace vnt::cli

int main(int argc, char** argv) {
  using namespace vnt::cli;
  CLI::App app{"pprun: run a vnt probabilistic program (no file: start a REPL)", "pprun"};
  Options o;
  std::vector<std::string> params;
  app.add_option("file", o.file, "the .vnt program to run");
  app.add_option("--seed", o.seed, "seed of the trace's random stream")->default_val(0);
  app.add_option("--param", params, "external parameter {name} of the program, as name=value (repeatable)");
  app.add_option("--draws", o.draws_path, "write the collected draws to this CSV file");
  app.add_option("--max-depth", o.max_depth, "maximum nesting of evaluation")->default_val(20000);
  app.add_flag("--quiet", o.quiet, "do not print the summary table");
  app.set_version_flag("--version", std::string("pprun ") + VNT_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  for (const std::string& p : params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "pprun: --param expects name=value, got '" << p << "'\n";
      return 2;
    }
    o.params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return run_with_big_stack([&] { return o.file.empty() ? run_repl(o) : guarded([&] { return run_file(o); }); });
}
