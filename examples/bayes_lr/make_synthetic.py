#!/usr/bin/env python3
# Writes the synthetic two-feature data for Bayesian logistic regression (the sublinear-MH paper, section 4.1.1,
# Fig. 5a) as CSV files with columns y,x1,x2. Uses only the Python standard library.
# SPDX-License-Identifier: Apache-2.0
"""Synthetic two-class data: y ~ Bernoulli(1/2), then x ~ N(+m, I) if y = 1 and N(-m, I) if y = 0, m = (1, 0.5).

The paper shows this data set only as a picture (Fig. 5a): two overlapping classes in the plane. The two
Gaussian blobs used here are the ones of bench/bench_subsampled_sublinear.cpp. For these classes the exact
log-odds are 2 m.x = 2 x1 + x2, so logistic regression is the right model, with w = (0, 2, 1) (bias first) and a
Bayes-optimal test accuracy of Phi(|m|) = Phi(1.118) = 0.868.

    python3 examples/bayes_lr/make_synthetic.py 10000            # data/synthetic_{train,test}.csv
    python3 examples/bayes_lr/make_synthetic.py 100000 --test 2000 --seed 7 --out /tmp/synth
"""
import argparse
import os
import random
import sys

MEAN = (1.0, 0.5)


def rows(n, rng):
    for _ in range(n):
        y = 1 if rng.random() < 0.5 else 0
        sign = 1.0 if y else -1.0
        yield y, sign * MEAN[0] + rng.gauss(0.0, 1.0), sign * MEAN[1] + rng.gauss(0.0, 1.0)


def write(path, n, rng):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("y,x1,x2\n")
        for y, x1, x2 in rows(n, rng):
            f.write(f"{y},{x1:.6g},{x2:.6g}\n")


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="Synthetic two-feature logistic-regression data (y,x1,x2).")
    p.add_argument("n", type=int, help="number of training rows")
    p.add_argument("--test", type=int, default=1000, help="number of test rows (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--out", default=os.path.join(here, "data"), help="output directory (default: data/ here)")
    a = p.parse_args(argv)
    if a.n < 1 or a.test < 0:
        p.error("n must be positive and --test non-negative")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    train = os.path.join(a.out, "synthetic_train.csv")
    test = os.path.join(a.out, "synthetic_test.csv")
    write(train, a.n, rng)
    write(test, a.test, rng)
    print(f"wrote {train} ({a.n} rows) and {test} ({a.test} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
