// Shows that one MH transition on a variable with a constant-size scaffold costs O(1): the time per
// transition on a local latent is the same with 1e3 and 1e5 other observations in the trace.
// Usage: bench_mh_constant_cost [transitions]
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "vnt/vnt.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int transitions = argc > 1 ? std::atoi(argv[1]) : 200000;
  fmt::print("{:>8}  {:>10}  {:>14}\n", "N", "load s", "us/transition");
  for (int n : {1000, 10000, 100000}) {
    vnt::Options opts;
    opts.seed = 1;
    vnt::Runtime rt(opts);
    // N independent latents, each with one observation: every scaffold has the same constant size.
    rt.execute(
        "[assume z (mem (lambda (i) (normal 0 1)))]"
        "[assume y (lambda (i) (normal (z i) 0.5))]");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) rt.observe_apply("y", {vnt::Datum(i)}, vnt::Datum(0.1 * (i % 7)));
    double load = seconds_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    rt.infer(fmt::format("(mh default one {})", transitions));
    double per = seconds_since(t1) / transitions * 1e6;
    fmt::print("{:>8}  {:>10.3f}  {:>14.3f}\n", n, load, per);
  }
  return 0;
}
