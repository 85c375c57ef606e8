# Shared by the fuzz scripts (run as scripts, so this directory is on sys.path): their command line, the loop over
# seeds and the summary, and the posterior fuzzers' standard errors.
# SPDX-License-Identifier: Apache-2.0
import csv
import math
import sys


def run_seeds(usage, what, run_one, binaries=1):
    """For each seed of `PPRUN FIRST LAST [OUTDIR]` (`binaries` paths of pprun first; else exits with `usage`),
    calls run_one(*ppruns, seed, outdir), which keeps a failing case in outdir and describes it, or returns None.
    Prints each failure and how many of the `what` failed; exits 1 if any did."""
    rest = sys.argv[1 + binaries:]
    if len(rest) not in (2, 3):
        sys.exit(usage)
    ppruns, first, last = sys.argv[1:1 + binaries], int(rest[0]), int(rest[1])
    outdir = rest[2] if len(rest) == 3 else "fuzz-failures"
    failures = 0
    for seed in range(first, last + 1):
        failure = run_one(*ppruns, seed, outdir)
        if failure is not None:
            failures += 1
            print(f"seed {seed}: {failure}", flush=True)
    print(f"{failures} of {last - first + 1} {what} failed")
    sys.exit(1 if failures else 0)


def batch_means_se(xs):
    """The standard error of the mean of a stationary sequence, by batch means (about sqrt(n) batches)."""
    n = len(xs)
    b = max(1, int(math.sqrt(n)))
    k = n // b
    means = [sum(xs[i * b:(i + 1) * b]) / b for i in range(k)]
    mu = sum(means) / k
    var = sum((x - mu) ** 2 for x in means) / (k - 1)
    return math.sqrt(var / k)


def read_draws(path, columns, burn_in):
    """The draws of each of `columns` in pprun's --draws file after the first burn_in rows, and None; or None and what
    is wrong with the file (missing, too short, a column missing, a cell not a number)."""
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))[burn_in:]
    except OSError as e:
        return None, f"pprun wrote no draws file ({e.strerror})"
    if not rows:
        return None, "the draws file has no rows after the burn-in"
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        return None, "the draws file has no column " + ", ".join(missing)
    try:
        return {c: [float(r[c]) for r in rows] for c in columns}, None
    except (TypeError, ValueError):
        return None, "a draw is not a number"
