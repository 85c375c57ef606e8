#!/usr/bin/env python3
# Generates random models that mix shapes of local sections across two parameters (chains, branches on either,
# procedures chosen by one, latents in branches, mem, named values of one read by a branch on the other, a Dirichlet
# process mixture whose tables' means read one), with random interleavings of mh, gibbs, subsampled_mh (with the
# fallback), pgibbs (whose particles read the sections approximate moves left stale), forget, observe and predict;
# runs each with pprun and reports the ones that fail, crash, or that a sanitizer flags. Build pprun with
# -DVNT_SANITIZE=address,undefined to find memory errors.
# SPDX-License-Identifier: Apache-2.0
"""usage: fuzz_mixed_models.py PPRUN FIRST LAST [OUTDIR]   (seeds FIRST..LAST; failing programs are kept in OUTDIR)"""
import os
import random
import subprocess

from fuzz_common import run_seeds

SHAPES = [  # (weight, observation); {x} a covariate, {ax} a positive one, {y} the datum
    (8, "[observe (normal (* w {x}) 1) {y}]"),
    (4, "[observe (normal (+ z (* w {x})) 1) {y}]"),
    (1, "[observe (if (> w {x}) (normal w 1) (normal (* 2 w) 1)) {y}]"),
    (1, "[observe (if (> z {x}) (normal (normal w 1) 1) (normal (- w) 2)) {y}]"),
    (1, "[observe (normal ((pick {x}) w {ax}) 1) {y}]"),
    (2, "[observe (normal (+ (* w {x}) (* z {x})) 1) {y}]"),
    (2, "[observe (normal ((lambda (v) (* v {x})) w) 1) {y}]"),
    (1, "[observe (if (> (+ z w) {x}) (normal z 1) (normal w 1)) {y}]"),
    (1, "[observe (normal (+ (g 0) (* w {x})) 1) {y}]"),
    (1, "[observe (normal ((mem (lambda (v) (* v {x}))) w) 1) {y}]"),
    (1, "[observe (if (> (normal z 1) {x}) (normal w 1) (normal z 2)) {y}]"),
    (1, "[observe (normal (if (flip (logistic w)) z w) 1) {y}]"),
    (2, "[observe (normal (tm (tab {i})) 1) {y}]"),  # a Dirichlet process mixture whose tables' means read w
]
READERS = [  # named values in sections of one parameter, read by name from a branch on the other (h, k below)
    "[assume e{i} (if (> z {x}) (normal w 1) (normal (- w) 1))]",
    "[assume e{i} (if (> w {x}) (normal z 1) (* z {x}))]",
    "[assume e{i} (* z {x})]",
]
KERNELS = [
    "(subsampled_mh w one {b} {e} 'drift {s} 1 'fallback 'mh)",
    "(subsampled_mh z one {b} {e} 'drift {s} 1 'fallback 'mh)",
    "(subsampled_mh w one {b} 0 'drift {s} 1 'fallback 'mh)",
    "(mh w one 'drift {s} 1)",
    "(mh z one 1)",
    "(mh default one 1)",
    "(mh default all 1)",
    "(subsampled_mh z one {b} 0 'drift {s} 1 'fallback 'mh)",
    "(subsampled_mh default one {b} {e} 1 'fallback 'mh)",
    "(pgibbs w all {p} 1)",
    "(pgibbs z 0 {p} 1)",
    "(gibbs tab one 2)",
    "(mh tab one 2)",
]


def program(seed):
    rnd = random.Random(seed)
    lines = [
        "[assume z (scope_include 'z 0 (normal 0 2))]",
        "[assume w (scope_include 'w 0 (normal 0 2))]",
        "[assume ops (list * normal +)]",
        "[assume pick (lambda (x) (lookup ops (round (* 2 (logistic (* 5 (- z x)))))))]",
        "[assume g (mem (lambda (i) (normal w 1)))]",
        "[assume crp (make_crp 1)]",
        "[assume tab (mem (lambda (i) (scope_include 'tab i (crp))))]",
        "[assume tm (mem (lambda (k) (normal w 1)))]",
        "[observe (normal (tm (tab -1)) 1) 0.3]",
    ]
    labels = []
    named = []
    for i in range(rnd.randint(20, 60)):
        x = round(rnd.uniform(-1.5, 1.5), 3)
        if rnd.random() < 0.1:
            named.append(f"e{i}")
            lines.append(rnd.choice(READERS).format(i=i, x=x))
            continue
        shape = rnd.choices([s for _, s in SHAPES], [w for w, _ in SHAPES])[0]
        labels.append(f"d{i}")
        lines.append(f"d{i}: " + shape.format(x=x, ax=round(abs(x) + 0.1, 3), y=round(rnd.gauss(0.5, 1), 3), i=i))
    if named:
        # New brush of a move of w (or z) reads them: a regen meets sections that approximate moves left stale.
        total = f"(+ {' '.join(named)})" if len(named) > 1 else named[0]
        lines.append(f"[assume h (if (> w {round(rnd.uniform(-1, 1), 2)}) {total} 0)]")
        lines.append(f"[assume k (if (> z {round(rnd.uniform(-1, 1), 2)}) {total} 1)]")
        lines.append(f"[observe (normal (+ h k) 1) {round(rnd.gauss(0.5, 1), 3)}]")
    for _ in range(rnd.randint(3, 8)):
        ks = [rnd.choice(KERNELS).format(b=rnd.randint(1, 6), e=rnd.choice([0.05, 0.2, 0.4]),
                                         s=rnd.choice([0.2, 1, 3]), p=rnd.randint(1, 4)) for _ in range(rnd.randint(2, 4))]
        lines.append(f"[infer (repeat {rnd.randint(5, 40)} (do {' '.join(ks)}))]")
        r = rnd.random()
        if r < 0.2 and labels:
            label = labels.pop(rnd.randrange(len(labels)))
            lines.append(f"[forget {label}]")
        elif r < 0.4:
            lines.append(f"[observe (normal w 1) {round(rnd.gauss(0, 1), 2)}]")
        elif r < 0.55:
            lines.append(f"[predict (g {rnd.randint(0, 3)})]")
        elif r < 0.7 and named:  # a read outside any kernel repairs what it reads in place
            lines.append(f"[predict {rnd.choice(named + ['h', 'k', '(+ h k)'])}]")
    lines += ["[predict w]", "[predict z]"]
    return "\n".join(lines) + "\n"


def run_one(pprun, seed, outdir):
    path = os.path.join(outdir, f"fuzz{seed}.vnt")
    os.makedirs(outdir, exist_ok=True)
    with open(path, "w") as f:
        f.write(program(seed))
    proc = subprocess.run([pprun, path, "--seed", str(seed), "--quiet"], capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    # Every generated program is valid (full-support densities, parameters in range), so an error is a failure
    # too: values left inconsistent surface as one ("normal: argument 1 (mean) must be a number, got nil").
    if proc.returncode == 0 and "error" not in proc.stderr and "Sanitizer" not in proc.stderr:
        os.remove(path)
        return None
    with open(path + ".stderr", "w") as f:
        f.write(proc.stderr)
    return f"exit {proc.returncode}, kept {path}"


if __name__ == "__main__":
    run_seeds(__doc__, "programs", run_one)
