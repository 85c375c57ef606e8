#!/usr/bin/env python3
# Writes synthetic data for the joint Dirichlet process mixture of experts (the sublinear-MH paper, section 4.2,
# Fig. 6b) as CSV files with columns y,x1,x2. Uses only the Python standard library.
# SPDX-License-Identifier: Apache-2.0
"""Four Gaussian clusters in the plane, each with its own linear class boundary.

The paper shows its data set only as a picture (Fig. 6b): clusters whose labels no single line separates. Here
cluster k has mean MEANS[k] and covariance 0.5 I, and its label is bernoulli(logistic(W[k] . (1, x1, x2))): each
boundary is a steep line through its cluster's mean, turned a quarter further from cluster to cluster, so the
boundaries together are not linear. The script also prints the Bayes-optimal test accuracy (the true model's
predictive, the clusters' responsibilities times their logistic) and that of the best single logistic
regression it finds, on the test rows.

    python3 examples/joint_dpm/make_data.py                    # data/{train,test}.csv: 400 and 400 rows
    python3 examples/joint_dpm/make_data.py 10000 --test 1000 --seed 7 --out /tmp/jdpm
"""
import argparse
import math
import os
import random
import sys

MEANS = ((-2.0, -2.0), (2.0, 2.0), (-2.0, 2.0), (2.0, -2.0))
# Bias first: 8 + 4 x1 is 0 on x1 = -2, the first cluster's mean.
W = ((8.0, 4.0, 0.0), (8.0, -4.0, 0.0), (8.0, 0.0, -4.0), (8.0, 0.0, 4.0))
SD = math.sqrt(0.5)


def logistic(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def rows(n, rng):
    for _ in range(n):
        k = rng.randrange(len(MEANS))
        x1, x2 = MEANS[k][0] + rng.gauss(0, SD), MEANS[k][1] + rng.gauss(0, SD)
        w = W[k]
        y = 1 if rng.random() < logistic(w[0] + w[1] * x1 + w[2] * x2) else 0
        yield y, x1, x2


def bayes_predictive(x1, x2):
    """p(y = 1 | x) under the true model: clusters weighted by their densities at x (equal priors)."""
    dens = [math.exp(-((x1 - m[0]) ** 2 + (x2 - m[1]) ** 2) / (2 * SD * SD)) for m in MEANS]
    total = sum(dens)
    if total == 0:
        return 0.5
    return sum(d * logistic(w[0] + w[1] * x1 + w[2] * x2) for d, w in zip(dens, W)) / total


def best_linear(train, steps=3000, rate=0.1):
    """A logistic regression by gradient descent (no penalty): what one expert alone can do."""
    w = [0.0, 0.0, 0.0]
    for _ in range(steps):
        g = [0.0, 0.0, 0.0]
        for y, x1, x2 in train:
            r = logistic(w[0] + w[1] * x1 + w[2] * x2) - y
            g[0] += r
            g[1] += r * x1
            g[2] += r * x2
        w = [wi - rate * gi / len(train) for wi, gi in zip(w, g)]
    return w


def accuracy(data, predict):
    return sum((predict(x1, x2) > 0.5) == (y == 1) for y, x1, x2 in data) / len(data)


def write(path, data):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("y,x1,x2\n")
        for y, x1, x2 in data:
            f.write(f"{y},{x1:.6g},{x2:.6g}\n")


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="Synthetic data for the joint DPM of logistic experts (y,x1,x2).")
    p.add_argument("n", type=int, nargs="?", default=400, help="number of training rows (default 400)")
    p.add_argument("--test", type=int, default=400, help="number of test rows (default 400)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--out", default=os.path.join(here, "data"), help="output directory (default: data/ here)")
    a = p.parse_args(argv)
    if a.n < 1 or a.test < 1:
        p.error("n and --test must be positive")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    # Rounded as written, so that the accuracies below are those of the files.
    train = [(y, float(f"{x1:.6g}"), float(f"{x2:.6g}")) for y, x1, x2 in rows(a.n, rng)]
    test = [(y, float(f"{x1:.6g}"), float(f"{x2:.6g}")) for y, x1, x2 in rows(a.test, rng)]
    write(os.path.join(a.out, "train.csv"), train)
    write(os.path.join(a.out, "test.csv"), test)
    w = best_linear(train)
    print(f"wrote {a.out}/train.csv ({a.n} rows) and {a.out}/test.csv ({a.test} rows)")
    print(f"test accuracy: Bayes-optimal {accuracy(test, bayes_predictive):.4f}, "
          f"one logistic regression {accuracy(test, lambda x1, x2: logistic(w[0] + w[1] * x1 + w[2] * x2)):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
