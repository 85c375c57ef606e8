// Test accuracy versus running time for the joint Dirichlet process mixture of logistic experts (Fig. 6d of the
// sublinear-MH paper): the experts' weights moved by exact mh or by subsampled_mh at several eps, each given as much
// CPU time as the assignments' gibbs moves get (the paper's balance). The predictive of a test row is its expert's
// logistic, averaged over the chain; accuracy is that average's, thresholded at 1/2. Through the public API only.
// Writes time_s,method,chain,accuracy,w_transitions,z_transitions.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <vnt/vnt.hpp>

namespace {

struct Config {
  std::string out_path;
  std::string program = "examples/joint_dpm/joint_dpm.vnt";
  std::string test = "data/test.csv";  // relative to the program, which seats its rows (test row j as 100000 + j)
  double budget = 20;  // CPU seconds per method
  std::vector<double> eps = {0.1, 0.3};
  double sigma = 0.5;
  int batch = 50;
  int step_z = 100;       // gibbs transitions per round
  double snapshot = 0.5;  // CPU seconds between accuracy snapshots
  uint64_t seed = 1;
  int chains = 1;
};

struct TestRow {
  double y, x1, x2;
};

// CPU time of the process (the two cores are shared with other jobs); predictions are not counted.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::vector<TestRow> load_test(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<TestRow> rows;
  std::string line;
  std::getline(in, line);  // header y,x1,x2
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream s(line);
    TestRow r{};
    char comma = 0;
    if (!(s >> r.y >> comma >> r.x1 >> comma >> r.x2)) throw std::runtime_error("bad row in " + path + ": " + line);
    rows.push_back(r);
  }
  return rows;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

struct Method {
  std::string name, kernel;
};

// One chain: rounds of (mh on alpha, step_z gibbs moves of assignments), then moves of a random expert's weights
// until their CPU time has caught up with the assignments'.
// Returns the last accuracy.
double run_chain(const Config& cfg, const Method& m, int chain, const std::vector<TestRow>& test,
                 std::ofstream& out) {
  vnt::Options opts;
  opts.seed = cfg.seed + static_cast<uint64_t>(chain);
  opts.params = {{"T", 0}, {"eps", 0.1}};
  vnt::Runtime rt(opts);
  rt.execute_file(cfg.program);
  const std::string z_program = fmt::format("(do (mh hypers all 1) (gibbs z one {}))", cfg.step_z);
  std::vector<double> sum(test.size(), 0.0);
  double snapshots = 0, z_time = 0, w_time = 0, next = cfg.snapshot;
  uint64_t w_moves = 0, z_moves = 0;
  double accuracy = 0;
  while (z_time + w_time < cfg.budget) {
    double t0 = cpu_seconds();
    rt.infer(z_program);
    z_time += cpu_seconds() - t0;
    z_moves += static_cast<uint64_t>(cfg.step_z);
    while (w_time < z_time) {
      t0 = cpu_seconds();
      rt.infer(m.kernel);
      w_time += cpu_seconds() - t0;
      ++w_moves;
    }
    if (z_time + w_time < next) continue;
    next += cfg.snapshot;
    size_t right = 0;
    snapshots += 1;
    for (size_t j = 0; j < test.size(); ++j) {
      sum[j] += rt.sample(fmt::format("(p_test {} (vector {} {}))", j, test[j].x1, test[j].x2)).as_double();
      right += (sum[j] / snapshots > 0.5) == (test[j].y > 0.5);
    }
    accuracy = static_cast<double>(right) / static_cast<double>(test.size());
    out << fmt::format("{:.3f},{},{},{:.4f},{},{}\n", z_time + w_time, m.name, chain, accuracy, w_moves, z_moves);
    out.flush();
  }
  uint64_t touched = 0, total = 0, accepted = 0, transitions = 0;
  for (const vnt::KernelReport& r : rt.kernel_reports()) {
    if (r.scope != "w") continue;
    touched += r.sections_visited;
    total += r.sections_total;
    accepted += r.accepted;
    transitions += r.transitions;
  }
  fmt::print("{:<22} {:>5} {:>9.4f} {:>12} {:>12} {:>9.3f} {:>14}\n", m.name, chain, accuracy, w_moves, z_moves,
             transitions ? static_cast<double>(accepted) / static_cast<double>(transitions) : 0.0,
             total ? fmt::format("{:.3f}", static_cast<double>(touched) / static_cast<double>(total)) : "-");
  return accuracy;
}

int run(const Config& cfg) {
  const std::vector<TestRow> test = load_test(directory_of(cfg.program) + "/" + cfg.test);
  std::ofstream out(cfg.out_path);
  if (!out) throw std::runtime_error("cannot write " + cfg.out_path);
  out << "time_s,method,chain,accuracy,w_transitions,z_transitions\n";
  std::vector<Method> methods{{"mh", fmt::format("(mh w one 'drift {} 1)", cfg.sigma)}};
  for (double e : cfg.eps)
    methods.push_back({fmt::format("subsampled_mh eps={}", e),
                       fmt::format("(subsampled_mh w one {} {} 'drift {} 1)", cfg.batch, e, cfg.sigma)});
  fmt::print("{} test rows, {} CPU s per method, w's and z's moves given equal CPU time\n", test.size(), cfg.budget);
  fmt::print("{:<22} {:>5} {:>9} {:>12} {:>12} {:>9} {:>14}\n", "method", "chain", "accuracy", "w moves", "z moves",
             "accepted", "data touched");
  std::vector<double> mean(methods.size(), 0.0);
  for (int c = 0; c < cfg.chains; ++c)  // chains outermost: a machine slowing down later hurts every method alike
    for (size_t i = 0; i < methods.size(); ++i) mean[i] += run_chain(cfg, methods[i], c, test, out) / cfg.chains;
  for (size_t i = 0; i < methods.size(); ++i)
    fmt::print("{:<22} mean accuracy at {} CPU s over {} chains: {:.4f}\n", methods[i].name, cfg.budget, cfg.chains,
               mean[i]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Joint DPM of logistic experts: test accuracy vs CPU time, exact mh and subsampled_mh on the weights",
               "bench_joint_dpm"};
  Config cfg;
  app.add_option("out", cfg.out_path, "CSV to write (time_s,method,chain,accuracy,w_transitions,z_transitions)")
      ->required();
  app.add_option("--program", cfg.program, "model (.vnt): loaded with {T}=0, {eps}=0.1; must assume p_test")
      ->capture_default_str();
  app.add_option("--test", cfg.test, "the program's test CSV (y,x1,x2), relative to it")->capture_default_str();
  app.add_option("--budget", cfg.budget, "CPU seconds per method")->capture_default_str();
  app.add_option("--eps", cfg.eps, "subsampled_mh error bounds")->delimiter(',')->capture_default_str();
  app.add_option("--sigma", cfg.sigma, "random-walk proposal sd of the weights")->capture_default_str();
  app.add_option("--batch", cfg.batch, "subsampled_mh mini-batch size")->capture_default_str();
  app.add_option("--step-z", cfg.step_z, "gibbs moves of assignments per round")->capture_default_str();
  app.add_option("--snapshot", cfg.snapshot, "CPU seconds between accuracy snapshots")->capture_default_str();
  app.add_option("--seed", cfg.seed, "seed of chain 0 (chain c: seed + c, for every method)")->capture_default_str();
  app.add_option("--chains", cfg.chains, "chains per method")->check(CLI::PositiveNumber)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(cfg);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_joint_dpm: {}\n", e.what());
  }
  return 1;
}
