#!/usr/bin/env python3
# Generates random REPL sessions of 200 directives over a few names (assume, observe, predict, sample, forget, infer
# with every kernel and combinator, labels), most of them valid, many not; pipes each into pprun and reports the
# sessions where pprun crashes, exits other than 0 or 2, prints an internal error, or a sanitizer reports. A user error
# is expected: the REPL must report it and go on with the trace as it was. Build pprun with
# -DVNT_SANITIZE=address,undefined to find memory errors.
# SPDX-License-Identifier: Apache-2.0
"""usage: fuzz_repl_sessions.py PPRUN FIRST LAST [OUTDIR]   (seeds FIRST..LAST; failing sessions are kept in OUTDIR)"""
import os
import random
import re
import subprocess

from fuzz_common import run_seeds

NAMES = ["a", "b", "c", "d", "f", "g", "m", "w", "z", "y"]
EXPRS = [
    "(normal 0 1)", "(gamma 2 1)", "(beta 1 1)", "(flip 0.5)", "(bernoulli 0.3)", "(poisson 3)",
    "(categorical (vector 0.5 0.5))", "(scope_include 's {K} (normal 0 1))", "(scope_include 'w 0 (normal 0 1))",
    "(tag 't (flip) (normal 0 1))", "(mem (lambda (k) (scope_include 'z k (normal 0 1))))",
    "(mem (lambda (k) (flip 0.5)))", "(lambda (x) (normal (* {V} x) 1))",
    "(lambda (x) (if (flip) (normal {V} 1) (gamma 1 1)))", "(if (flip) {V} (normal 0 1))", "(+ {V} {V})",
    "(make_beta_bernoulli 1 1)", "(multivariate_normal (zeros 2) (id_matrix 2))", "(lookup (vector {V} 1) 0)",
    "(mem (lambda (k) (make_beta_bernoulli 1 1)))", "(make_nig_normal {V} 1 2 1)", "(make_sym_dir_cat 1 3)", "(let ((q {V})) (normal q 1))", "(make_crp {V})",
    "(make_gamma_poisson 2 {V})", "(make_niw_normal (vector {V} 0) 1 3 (id_matrix 2))",
    "(let ((r (make_crp 1))) (mem (lambda (k) (scope_include 'z k (r)))))",
    "(scope_include 'w 0 (multivariate_normal (zeros 2) (id_matrix 2)))", "(exp {V})", "(sqrt {V})",
    "(list {V} {V})", "(exponential 2)", "(lognormal 0 {V})", "(laplace {V} 1)", "(student_t 3 {V} 1)",
    "(binomial 4 0.3)", "(beta_binomial 3 1 2)", "(uniform_discrete -1 3)", "(geometric 0.4)",
    "(negative_binomial 2 0.5)",
]
KERNELS = [
    "(mh default one 5)", "(mh default all 2)", "(mh s one 3)", "(mh w all 'drift 0.3 3)", "(mh z one 4)",
    "(mh t one 2)", "(subsampled_mh w all 2 0.1 3)", "(subsampled_mh w all 2 0.1 'drift 0.2 3 'fallback 'mh)",
    "(subsampled_mh z one 1 0 3 'fallback 'mh)", "(subsampled_mh s one 2 0.2 3 'fallback 'mh)",
    "(mixture (1 (mh default one 1) 1 (mh s all 1)) 3)", "(repeat 3 (do (mh default one 1) (collect {N})))",
    "(gibbs z one 3)", "(gibbs z all 1)", "(pgibbs z ordered 2 1)",
]
OBSERVED = ["1", "0", "true", "0.5", "-1", "(vector 1 2)", "2"]
BAD = re.compile(r"internal error|AddressSanitizer|LeakSanitizer|runtime error:")


def session(seed):
    rng = random.Random(seed)

    def value():
        r = rng.random()
        if r < 0.5:
            return rng.choice(NAMES)
        if r < 0.7:
            return str(rng.choice([0, 1, -1, 2.5, 0.5]))
        return f"({rng.choice(NAMES)} {rng.choice(NAMES + ['1', '2'])})"

    def expr():
        e = rng.choice(EXPRS)
        while "{V}" in e:
            e = e.replace("{V}", value(), 1)
        return e.replace("{K}", str(rng.randint(0, 2)))

    lines, labels = [], []
    for _ in range(200):
        r = rng.random()
        label = ""
        if rng.random() < 0.3:
            label = f"L{rng.randint(0, 15)}"
            labels.append(label)
            label += ": "
        if r < 0.25:
            lines.append(f"{label}[assume {rng.choice(NAMES)} {expr()}]")
        elif r < 0.45:
            # ((f k)): of the procedure f gives for k, a coin of a mem'd family picked by a random key, say
            target = rng.choice([expr(), f"({rng.choice(NAMES)} {value()})", f"({rng.choice(NAMES)})",
                                 rng.choice(NAMES), f"(({rng.choice(NAMES)} {value()}))"])
            lines.append(f"{label}[observe {target} {rng.choice(OBSERVED)}]")
        elif r < 0.55:
            lines.append(f"{label}[predict {rng.choice([expr(), value()])}]")
        elif r < 0.6:
            lines.append(f"[sample {expr()}]")
        elif r < 0.75:
            lines.append(f"[forget {rng.choice(NAMES + labels + ['L1'])}]")
        else:
            lines.append(f"[infer {rng.choice(KERNELS).replace('{N}', rng.choice(NAMES))}]")
    return "\n".join(lines) + "\n"


def run_one(pprun, seed, outdir):
    text = session(seed)
    try:
        p = subprocess.run([pprun, "--seed", "1"], input=text, capture_output=True, text=True, timeout=300)
        output, code = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        output, code = "timed out after 300 s", -1
    bad = BAD.search(output)
    if not bad and code in (0, 2):
        return None
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, f"session{seed}.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return f"exit {code}: {bad.group(0) if bad else output.strip().splitlines()[-1:]} ({path})"


if __name__ == "__main__":
    run_seeds(__doc__, "sessions", run_one)
