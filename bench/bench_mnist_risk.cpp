// Risk of the predictive mean versus running time (Fig. 4 of the sublinear-MH paper) for Bayesian logistic
// regression: exact mh against subsampled_mh at several eps, each run for the same CPU-time budget, scored
// against the predictive mean of a long exact-mh reference run. Writes time_s,method,risk,accuracy,transitions.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>

#include "runtime/core/csv.hpp"
#include "runtime/core/diagnostics.hpp"
#include "runtime/engine/engine.hpp"
#include "runtime/infer/mh.hpp"
#include "runtime/infer/subsampled_mh.hpp"

namespace {

struct Config {
  std::string out_path;
  std::string program = "examples/bayes_lr/mnist.vnt";
  std::string test_path = "examples/bayes_lr/data/mnist79_test.csv";
  double budget = 20;      // CPU seconds per method and chain
  double ref_budget = 60;  // CPU seconds of the reference run
  double ref_burnin = 0.25;  // fraction of the reference run discarded
  std::vector<double> eps = {0.01, 0.05, 0.2};
  double sigma = 0.01;  // sd of the Gaussian random walk ('drift), as in Korattikara et al. section 6.1
  size_t batch = 100;
  size_t k0 = 1;
  uint64_t seed = 1;
  int chains = 1;
  size_t warmup = 0;  // exact-mh transitions run (and not timed) before every chain, from the same seed
};

struct Method {
  std::string name;
  bool exact = true;
  double eps = 0;
};

// The test set, with a leading column of ones when the model's w carries a bias (linear_logistic's rule).
struct TestSet {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

// Time counts only the process's CPU time: the two cores are shared, so wall time would measure the other
// jobs on the machine. Bookkeeping between transitions (predictions, risk) is excluded as well.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TestSet load_test(const std::string& path) {
  vnt::CsvTable t = vnt::read_csv_numeric(path, true);
  auto rows = static_cast<Eigen::Index>(t.rows.size());
  auto cols = static_cast<Eigen::Index>(t.rows.at(0).size());
  TestSet s{Eigen::MatrixXd(rows, cols), Eigen::VectorXd(rows)};
  for (Eigen::Index i = 0; i < rows; ++i) {
    const auto& r = t.rows[static_cast<size_t>(i)];
    s.y[i] = r[0];  // column y first, then x1..xD
    s.x(i, 0) = 1.0;
    for (Eigen::Index j = 1; j < cols; ++j) s.x(i, j) = r[static_cast<size_t>(j)];
  }
  return s;
}

double accuracy(const Eigen::VectorXd& p, const Eigen::VectorXd& y) {
  Eigen::Index right = 0;
  for (Eigen::Index i = 0; i < p.size(); ++i) right += (p[i] > 0.5) == (y[i] > 0.5);
  return static_cast<double>(right) / static_cast<double>(p.size());
}

struct RunStats {
  uint64_t transitions = 0, accepted = 0;
  double touched = 0;  // local sections (data) touched per transition
  size_t n = 0;        // number of observations
  double cpu = 0, wall = 0, load = 0;
};

// A chain of the program's model, loaded with its [infer] run zero times, and one kernel on scope w.
class Chain {
 public:
  Chain(const Config& cfg, const Method& m, uint64_t seed, const TestSet& test) : engine_(seed), test_(test) {
    double t0 = cpu_seconds();
    std::ifstream in(cfg.program, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read '{}'", cfg.program));
    std::stringstream ss;
    ss << in.rdbuf();
    engine_.set_params({{"T", "0"}, {"eps", "0"}, {"sigma", fmt::format("{}", cfg.sigma)}});
    engine_.run_source(std::make_shared<const vnt::SourceFile>(vnt::SourceFile{cfg.program, ss.str()}));
    stats_.load = cpu_seconds() - t0;
    spec_.scope = "w";
    spec_.mode = vnt::BlockSpec::Mode::kAll;
    spec_.kernel = m.exact ? "mh" : "subsampled_mh";
    exact_ = m.exact;
    mh_.drift_sigma = cfg.sigma;
    sub_.batch = cfg.batch;
    sub_.epsilon = m.eps;
    sub_.min_batches = cfg.k0;
    sub_.drift_sigma = cfg.sigma;
    // N: the local sections below w's border, one per training row (plate rows included).
    stats_.n = vnt::find_border(vnt::select_block(engine_.trace(), spec_).principals.at(0)).n;
    // The warm-up is exact mh for every method, so chains with the same seed all start from the same state.
    for (size_t i = 0; i < cfg.warmup; ++i) vnt::mh_transition(engine_.trace(), spec_, mh_);
    update_predictions();
  }

  // Runs transitions until `budget` CPU seconds have been spent in them, calling on_sample(p, t) after each
  // with p(y=1 | x*, w_t) on every test point and the transition time t spent so far.
  RunStats run(double budget, const std::function<void(const Eigen::VectorXd&, double)>& on_sample) {
    auto w0 = std::chrono::steady_clock::now();
    double spent = 0;
    while (spent < budget) {
      double t0 = cpu_seconds();
      bool accepted = exact_ ? vnt::mh_transition(engine_.trace(), spec_, mh_)
                             : vnt::subsampled_mh_transition(engine_.trace(), spec_, sub_, state_);
      spent += cpu_seconds() - t0;
      ++stats_.transitions;
      if (accepted) {
        ++stats_.accepted;
        update_predictions();
      }
      on_sample(p_, spent);
    }
    stats_.cpu = spent;
    stats_.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    stats_.touched = exact_ ? static_cast<double>(stats_.n)
                            : static_cast<double>(state_.stats.sections_visited) /
                                  static_cast<double>(state_.stats.transitions);
    return stats_;
  }

 private:
  void update_predictions() {
    vnt::Value value = engine_.report("w");
    const Eigen::VectorXd& w = *std::get<vnt::VectorPtr>(value);
    Eigen::VectorXd z = w.size() == test_.x.cols() ? Eigen::VectorXd(test_.x * w)
                                                    : Eigen::VectorXd(test_.x.rightCols(w.size()) * w);
    p_ = (1.0 + (-z.array()).exp()).inverse().matrix();
  }

  vnt::Engine engine_;
  const TestSet& test_;
  vnt::BlockSpec spec_;
  bool exact_ = true;
  vnt::MhOptions mh_;
  vnt::SubsampledOptions sub_;
  vnt::SubsampledState state_;
  Eigen::VectorXd p_;
  RunStats stats_;
};

struct Reference {
  Eigen::VectorXd mean;
  double floor = 0;  // estimated variance of `mean` itself, averaged over test points
  RunStats stats;
};

// The reference predictive mean: a long exact-mh run, its first ref_burnin fraction discarded. The squared
// difference of the means of the two halves of what is kept, over 4, estimates the reference's own error.
Reference reference_run(const Config& cfg, const TestSet& test) {
  Chain chain(cfg, {"reference", true, 0}, cfg.seed, test);
  double start = cfg.ref_budget * cfg.ref_burnin, mid = (start + cfg.ref_budget) / 2;
  Eigen::VectorXd s1 = Eigen::VectorXd::Zero(test.y.size()), s2 = s1;
  double n1 = 0, n2 = 0;
  Reference ref;
  ref.stats = chain.run(cfg.ref_budget, [&](const Eigen::VectorXd& p, double t) {
    if (t < start) return;
    if (t < mid) {
      s1 += p;
      ++n1;
    } else {
      s2 += p;
      ++n2;
    }
  });
  if (n1 == 0 || n2 == 0) throw std::runtime_error("the reference run is too short to keep samples");
  ref.mean = (s1 + s2) / (n1 + n2);
  ref.floor = (s1 / n1 - s2 / n2).squaredNorm() / static_cast<double>(test.y.size()) / 4;
  return ref;
}

struct Point {
  double time = 0, risk = 0, accuracy = 0, transitions = 0;
};

// Checkpoints: 10 per decade from 10 ms, then the budget itself.
std::vector<double> checkpoints(double budget) {
  std::vector<double> t;
  for (int k = 0;; ++k) {
    double c = 0.01 * std::pow(10.0, k / 10.0);
    if (c >= budget) break;
    t.push_back(c);
  }
  t.push_back(budget);
  return t;
}

// One method over cfg.chains chains: risk = mean over test points of (running predictive mean - reference)^2
// (Korattikara et al. 2014, section 6.1), averaged over chains at each checkpoint.
std::vector<Point> run_method(const Config& cfg, const Method& m, const TestSet& test, const Reference& ref,
                              RunStats& total) {
  std::vector<double> grid = checkpoints(cfg.budget);
  std::vector<Point> pts(grid.size());
  for (int c = 0; c < cfg.chains; ++c) {
    Chain chain(cfg, m, cfg.seed + 1 + static_cast<uint64_t>(c), test);
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(test.y.size());
    double count = 0;
    size_t next = 0;
    RunStats st = chain.run(cfg.budget, [&](const Eigen::VectorXd& p, double t) {
      sum += p;
      ++count;
      for (; next < grid.size() && t >= grid[next]; ++next) {
        Eigen::VectorXd mean = sum / count;
        pts[next].risk += (mean - ref.mean).squaredNorm() / static_cast<double>(mean.size());
        pts[next].accuracy += accuracy(mean, test.y);
        pts[next].transitions += count;
      }
    });
    total.transitions += st.transitions;
    total.accepted += st.accepted;
    total.touched += st.touched / cfg.chains;
    total.n = st.n;
    total.cpu += st.cpu;
    total.wall += st.wall;
    total.load += st.load;
  }
  for (size_t i = 0; i < grid.size(); ++i) {
    pts[i].time = grid[i];
    pts[i].risk /= cfg.chains;
    pts[i].accuracy /= cfg.chains;
    pts[i].transitions /= cfg.chains;
  }
  return pts;
}

// The first checkpoint at which `pts` reaches `target` risk, or "never".
std::string time_to(const std::vector<Point>& pts, double target) {
  for (const Point& p : pts)
    if (p.risk <= target) return fmt::format("{:.3g}", p.time);
  return "never";
}

int run(const Config& cfg) {
  TestSet test = load_test(cfg.test_path);
  std::vector<Method> methods = {{"exact_mh", true, 0}};
  for (double e : cfg.eps) methods.push_back({fmt::format("subsampled_{}", e), false, e});

  fmt::print("reference: exact mh for {} CPU s (first {:.0f}% discarded), sigma {}, seed {}, warm-up {}\n",
             cfg.ref_budget, 100 * cfg.ref_burnin, cfg.sigma, cfg.seed, cfg.warmup);
  std::fflush(stdout);
  Reference ref = reference_run(cfg, test);
  fmt::print("  N = {}, {} transitions ({:.0f}/s), accept {:.3f}, test accuracy {:.4f}, own error ~ {:.2e}\n\n",
             ref.stats.n, ref.stats.transitions, static_cast<double>(ref.stats.transitions) / ref.stats.cpu,
             static_cast<double>(ref.stats.accepted) / static_cast<double>(ref.stats.transitions),
             accuracy(ref.mean, test.y), ref.floor);

  std::ofstream out(cfg.out_path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", cfg.out_path));
  out << "time_s,method,risk,accuracy,transitions\n";
  fmt::print("{:<17} {:>11} {:>9} {:>7} {:>12} {:>9} {:>10} {:>9} {:>10} {:>9}\n", "method", "transitions",
             "trans/s", "accept", "touched/tr", "touched%", "risk", "accuracy", "t(risk_mh)", "cpu/wall");
  double mh_risk = 0;
  for (const Method& m : methods) {
    RunStats st;
    std::vector<Point> pts = run_method(cfg, m, test, ref, st);
    for (const Point& p : pts)
      out << fmt::format("{},{},{},{},{}\n", p.time, m.name, p.risk, p.accuracy, p.transitions);
    out.flush();
    if (m.exact) mh_risk = pts.back().risk;
    fmt::print("{:<17} {:>11} {:>9.0f} {:>7.3f} {:>12.1f} {:>9.1f} {:>10.3e} {:>9.4f} {:>10} {:>9.2f}\n", m.name,
               st.transitions / static_cast<uint64_t>(cfg.chains), static_cast<double>(st.transitions) / st.cpu,
               static_cast<double>(st.accepted) / static_cast<double>(st.transitions), st.touched,
               100 * st.touched / static_cast<double>(st.n), pts.back().risk, pts.back().accuracy,
               time_to(pts, mh_risk), st.cpu / st.wall);
    std::fflush(stdout);
  }
  fmt::print("\nrisk and accuracy at the end of {} CPU s (mean over {} chain(s)); t(risk_mh): first CPU time at "
             "which the risk is at most exact mh's final risk\n",
             cfg.budget, cfg.chains);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Risk of the predictive mean vs CPU time: exact mh and subsampled_mh against a long mh run",
               "bench_mnist_risk"};
  Config cfg;
  app.add_option("out", cfg.out_path, "CSV to write (time_s,method,risk,accuracy,transitions)")->required();
  app.add_option("--program", cfg.program, "model (.vnt); loaded with {T}=0, {eps}=0, {sigma}; must assume w")
      ->capture_default_str();
  app.add_option("--test", cfg.test_path, "test CSV: column y, then x1..xD")->capture_default_str();
  app.add_option("--budget", cfg.budget, "CPU seconds per method and chain")->capture_default_str();
  app.add_option("--ref", cfg.ref_budget, "CPU seconds of the reference exact-mh run")->capture_default_str();
  app.add_option("--ref-burnin", cfg.ref_burnin, "fraction of the reference run discarded")->capture_default_str();
  app.add_option("--eps", cfg.eps, "subsampled_mh error bounds")->delimiter(',')->capture_default_str();
  app.add_option("--sigma", cfg.sigma, "random-walk proposal sd")->capture_default_str();
  app.add_option("--batch", cfg.batch, "subsampled_mh mini-batch size")->capture_default_str();
  app.add_option("--k0", cfg.k0, "subsampled_mh minimum number of mini-batches")->capture_default_str();
  app.add_option("--seed", cfg.seed, "seed (reference: seed; chain c: seed+1+c)")->capture_default_str();
  app.add_option("--chains", cfg.chains, "chains per method (risk averaged over them)")->capture_default_str();
  app.add_option("--warmup", cfg.warmup, "untimed exact-mh transitions before every chain (0: start at the prior draw)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(cfg);
  } catch (const vnt::Error& e) {
    fmt::print(stderr, "{}", vnt::render_error(e));
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_mnist_risk: {}\n", e.what());
  }
  return 1;
}
