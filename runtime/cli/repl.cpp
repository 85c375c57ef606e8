// The REPL: reads directives (continuing lines until brackets balance), runs each as a transaction.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <string_view>
#include <utility>

#ifdef VNT_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#include "runtime/cli/cli.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/engine/engine.hpp"

namespace vnt::cli {
namespace {

/// Whether the input read so far leaves a bracket open, so another line is read (strings and comments are skipped).
/// A closing bracket that does not match the innermost open one, or a '[' inside an open bracket, ends the input:
/// the parser then reports it, rather than the REPL waiting for a closer that can never balance the input (and
/// swallowing every directive typed meanwhile). A label (`name:`) ending the input waits for its directive too.
/// The scan goes on from where the previous line left it, so a directive of n lines costs O(n), not O(n^2).
class OpenBrackets {
 public:
  void add(std::string_view text) {
    for (char c : text) {
      if (ended_) return;
      if (skip_) {  // the character after a backslash in a string
        skip_ = false;
      } else if (in_string_) {
        if (c == '\\') skip_ = true;
        else if (c == '"') in_string_ = false;
      } else if (in_comment_) {
        in_comment_ = c != '\n' && c != '\r';  // as in the lexer, a lone CR ends a comment too
      } else {
        scan(c);
      }
    }
  }
  bool needs_more() const { return !ended_ && (!open_.empty() || last_ == ':'); }
  void clear() { *this = OpenBrackets(); }

 private:
  void scan(char c) {
    if (c != ';' && c != ' ' && c != '\t' && c != '\r' && c != '\n') last_ = c;
    if (c == '"') in_string_ = true;
    else if (c == ';') in_comment_ = true;
    else if (c == '(') open_ += ')';
    else if (c == '[' && !open_.empty()) ended_ = true;  // directives never nest: the parser reports the open one
    else if (c == '[') open_ += ']';
    else if (c == '{') open_ += '}';
    else if (c == ')' || c == ']' || c == '}') {
      if (open_.empty() || open_.back() != c) ended_ = true;
      else open_.pop_back();
    }
  }

  std::string open_;  // the closers expected, innermost last
  bool in_string_ = false, in_comment_ = false, skip_ = false;
  bool ended_ = false;  // a bracket that cannot balance: the input ends here
  char last_ = 0;       // the last character outside strings, comments and whitespace
};

/// Ctrl-C stops the directive that runs instead of ending the process (and the session's trace with it).
void catch_repl_interrupts(Engine& engine) {
  catch_interrupts(engine, InterruptMode::kRepl);
#ifdef VNT_HAVE_LIBEDIT
  // libedit's own handler would re-send SIGINT to ours and then echo the line being typed a second time.
  rl_catch_signals = 0;
#endif
}

constexpr std::string_view kHelp =
    R"(Directives (several may go in one input; an input goes on while a bracket is open):
  [assume name expr]            bind name to the value of expr; random choices in it are inferred
  [observe expr value]          condition: expr, ending in a random choice, took this value
  [observe_csv f "f.csv" col]   observe (f row) at column col, for every row of a CSV file
                                (a list of columns, as (c1 c2), observes the vector of their cells)
  [predict expr]                print expr's value, and keep it in the trace
  [sample expr]                 print expr's value, without keeping it
  [infer command]               run inference, e.g. [infer (repeat 100 (do (mh default one 1) (collect x)))]
  [forget label]                remove a directive written as label: [...], or an assume by its name
Inference commands: (mh scope block N), (mh scope block 'drift sigma N), (gibbs scope block N),
  (pgibbs scope ordered|(ordered_range lo hi)|all|block particles N),
  (subsampled_mh scope block Nbatch eps ['drift sigma] N), (repeat N c), (do c ...), (cycle (c ...) N),
  (mixture (w c ...) N), (collect expr ...). The scope default holds every random choice (blocks one, all).
Ctrl-C stops a running directive (an [infer] keeps its moves and draws); Ctrl-D quits.
The language and its builtins: docs/language.md; inference: docs/inference.md.
)";

/// Whether an input is a request for help (help, :help or ?) rather than directives.
bool is_help(std::string_view text) {
  const size_t b = text.find_first_not_of(" \t\r\n");
  const size_t e = text.find_last_not_of(" \t\r\n");
  if (b == std::string_view::npos) return false;
  const std::string_view word = text.substr(b, e - b + 1);
  return word == "help" || word == ":help" || word == "?";
}

bool read_line(const char* prompt, bool interactive, std::string& line) {
#ifdef VNT_HAVE_LIBEDIT
  if (interactive) {
    char* s = readline(prompt);
    if (s == nullptr) return false;
    line = s;
    if (!line.empty()) add_history(s);
    free(s);
    return true;
  }
#endif
  if (interactive) {
    std::cout << prompt << std::flush;
  }
  return static_cast<bool>(std::getline(std::cin, line));
}

}  // namespace

int run_repl(const Options& o) {
  bool interactive = isatty(STDIN_FILENO) != 0;
  Engine engine(o.seed);
  engine.set_params(o.params);
  engine.trace().set_max_eval_depth(o.max_depth);
  engine.set_output(print_output);
  engine.trace().set_warning_sink([](const std::string& m) { std::fflush(stdout); std::fprintf(stderr, "warning: %s\n", m.c_str()); });
  if (interactive) {
    catch_repl_interrupts(engine);
    fmt::print("vnt REPL: enter directives such as [assume x (normal 0 1)]; help lists them; Ctrl-D quits.\n");
  }
  int input_no = 0;
  int status = 0;
  auto run = [&](std::string text) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return;
    if (is_help(text)) {
      fmt::print("{}", kHelp);
      std::fflush(stdout);
      return;
    }
    auto file = std::make_shared<const SourceFile>(SourceFile{fmt::format("<repl:{}>", ++input_no), text});
    clear_interrupt();
    int rc = guarded(o, [&] {
      engine.run_source(file, /*note_skipped=*/true);
      std::fflush(stdout);
      return 0;
    });
    if (rc != 0) status = rc;
  };
  std::string buffer, line;
  OpenBrackets brackets;
  while (read_line(buffer.empty() ? "vnt> " : "...> ", interactive, line)) {
    line += '\n';
    buffer += line;
    brackets.add(line);
    if (brackets.needs_more()) continue;
    brackets.clear();
    run(std::exchange(buffer, {}));
  }
  // Input still open at end of file is run too, so that the parser reports what is missing.
  run(std::exchange(buffer, {}));
  if (interactive) fmt::print("\n");
  // A scripted session reports whether any input failed; an interactive one ends normally.
  return interactive ? 0 : status;
}

}  // namespace vnt::cli
