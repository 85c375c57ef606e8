#!/usr/bin/env python3
# Fuzzes the [infer ...] language: random small models (discrete and continuous choices, mem, branches, scopes, a
# border with many observations for subsampled_mh, a plate) followed by [infer] programs drawn from the grammar of
# docs/inference.md, valid and invalid, interleaved with predict, sample, observe and forget. Each case is run
#   - as a file and as a REPL session with the ASan+UBSan pprun: crash, signal, sanitizer report, internal error,
#     exit code, and the gcc-style location of every error;
#   - as a file with the release pprun (the same checks, and hangs), twice with the same seed: the same output;
#   - as a REPL session (one directive per input) with the release pprun; one failing input that must have left the
#     trace as it was (any directive but [infer], or an [infer] whose error is found before its first transition)
#     is removed, and the session run again must print the same values.
# SPDX-License-Identifier: Apache-2.0
"""usage: fuzz_infer_programs.py ASAN_PPRUN RELEASE_PPRUN FIRST LAST [OUTDIR]   (seeds FIRST..LAST; failing cases
are kept in OUTDIR)"""
import atexit
import collections
import os
import random
import re
import subprocess

from fuzz_common import run_seeds

BAD = re.compile(r"internal error|AddressSanitizer|LeakSanitizer|runtime error:|Assertion|terminate called|"
                 r"std::|Segmentation|Aborted")
LOCATED = re.compile(r"^(cur\.vnt|<repl:\d+>):\d+:\d+: (error|warning): ")
# The errors of an [infer] found before its first transition (runtime/engine/infer_lang.cpp): its text and {params},
# and its scopes, blocks and subsampling against the trace. The same kernels' errors met by a transition end in a
# line "while running <kernel> ...", and collect's are not told apart from those met after transitions.
PRE_RUN = re.compile(r"^((mh|subsampled_mh|gibbs|pgibbs|repeat|cycle|mixture): |collect: expected|the number of transitions|"
                     r"expected an inference command|unknown inference command|missing parameter|parameter value)")
RUNS = collections.Counter()


class Gen:
    """One case: a model, then directives. While `bad`, choices are often invalid ones."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.bad = True
        self.scopes = ["default"]  # scopes with random choices
        self.blocks = {}  # scope -> its block values, as source text
        self.real_scopes = []  # scopes whose choices are all real-valued
        self.names, self.labels, self.params = [], [], {}
        self.csv = None
        self.sec = None  # (j, format of a datum) of the last procedure y{j} of model_sub

    def ok(self, x):
        """True for the valid choice: always when this directive is meant to be valid."""
        return not self.bad or self.p(x)

    def err(self, x):
        return self.bad and self.p(x)

    def c(self, xs):
        return self.r.choice(xs)

    def p(self, x):
        return self.r.random() < x

    def label(self, x):
        """A new label and its colon with probability x, else nothing."""
        if not self.p(x):
            return ""
        self.labels.append(f"L{len(self.labels)}")
        return self.labels[-1] + ": "

    def datum(self, fmt, y):
        return fmt.format(y=y, k=self.r.randint(0, 9), u=self.r.uniform(0.001, 0.999), b=self.c(["true", "false"]),
                          b01=self.c(["1", "0"]))

    def add_scope(self, name, blocks, real):
        if name not in self.scopes:
            self.scopes.append(name)
        self.blocks.setdefault(name, [])
        self.blocks[name] += [b for b in blocks if b not in self.blocks[name]]
        if real and name not in self.real_scopes:
            self.real_scopes.append(name)

    def default_not_real(self):
        if "default" in self.real_scopes:
            self.real_scopes.remove("default")

    # ---------------------------------------------------------------- models
    SECTIONS = [  # (procedure y, format of its datum)
        ("(lambda (x) (normal (* w x) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (+ w (* w x)) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (+ (* w w) (exp w) x) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (if (> w x) 1 2) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (+ (h x) w) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (h (> w x)) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (normal w 1) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (+ w t) 1))", "{y:.2f}"),
        ("(lambda (x) (normal (sqrt (- w x)) 1))", "{y:.2f}"),
        ("(lambda (x) ((lambda (m) (normal (+ m m) 1)) (* 2 w)))", "{y:.2f}"),
        ("(lambda (x) (let ((a (* w x))) (normal (+ a 1) (exp (- a)))))", "{y:.2f}"),
        ("(lambda (x) (normal (lookup (vector w x) 0) 1))", "{y:.2f}"),
        ("(lambda (x) (poisson (exp (* 0.1 w x))))", "{k}"),
        ("(lambda (x) (beta (exp w) 1))", "{u:.3f}"),
        ("(lambda (x) (uniform_continuous 0 (+ 10 (* 5 w))))", "{k}"),
        ("(lambda (x) (flip (logistic (* w x))))", "{b}"),
        ("(lambda (x) (bernoulli (linear_logistic (vector w 1) (vector x 1))))", "{b01}"),
        ("(lambda (x) (if (flip 0.5) (flip (logistic w)) (flip 0.3)))", "{b}"),
        ("(lambda (x) (scope_include 'sec x (normal (* w x) 1)))", "{y:.2f}"),
    ]
    PRIORS = ["(normal 0 1)", "(gamma 2 1)", "(beta 2 2)", "(uniform_continuous -1 1)", "(normal 0 1)",
              "(inv_gamma 3 1)", "(laplace 0 1)", "(student_t 4 0 1)"]

    def model_sub(self):
        """w, then one or two procedures y{j} whose sections read it, observed 1 to 100 times."""
        self.add_scope("w", ["0"], real=True)
        d = [f"[assume w (scope_include 'w 0 {self.c(self.PRIORS)})]",
             "[assume t (* 2 w)]" if self.p(0.3) else "[assume t 1]",
             "[assume h (mem (lambda (a) (normal 0 1)))]"]
        self.names += ["w", "t"]
        for j in range(self.r.randint(1, 2)):
            body, fmt = self.c(self.SECTIONS)
            d.append(f"[assume y{j} {body}]")
            for _ in range(self.c([1, 2, 3, 10, 40, 100])):
                x = round(self.r.uniform(-3, 3), 1)
                d.append(f"{self.label(0.05)}[observe (y{j} {x}) {self.datum(fmt, self.r.gauss(x, 1))}]")
            self.sec = (j, fmt)
        if self.p(0.3):
            d.append("[assume b2 (flip 0.5)]")
            self.names.append("b2")
        if "default" not in self.real_scopes and self.p(0.5):  # sometimes wrongly: 'drift then fails
            self.real_scopes.append("default")
        return d

    BORDERS = {  # w (scope w): its prior, what reads it (y, observed), and the argument and datum of y's i-th datum
        "normal": ("(normal 0 1)", ["y (lambda (x) (normal (* w x) 1))"],
                   lambda r, i: (i + 1, round((i + 1) * 0.9 + r.gauss(0, 1), 2))),
        "twice": ("(multivariate_normal (vector 0 0) (id_matrix 2))",
                  ["y (lambda (x) (normal (+ (lookup w 0) (* (lookup w 1) x)) 1))"],
                  lambda r, i: (i, round(1 + i * 0.5 + r.gauss(0, 1), 2))),
        "mvn": ("(multivariate_normal (zeros 3) (* 0.1 (id_matrix 3)))",
                ["y (lambda (x) (flip (linear_logistic w x)))"],
                lambda r, i: (f"(vector {r.randint(-3, 3)} {r.randint(-3, 3)})", r.choice(["true", "false"]))),
        "logistic": ("(multivariate_normal (zeros 2) (id_matrix 2))",
                     ["y (lambda (x) (bernoulli (linear_logistic w x)))"],
                     lambda r, i: (f"(vector {r.randint(-3, 3)} {r.randint(-3, 3)})", r.choice(["1", "0"]))),
        "branchy": ("(normal 0 1)", ["y (lambda (x) (normal (if (> w x) 1 2) 1))"],
                    lambda r, i: (f"{r.uniform(-2, 2):.2f}", f"{r.uniform(0, 3):.2f}")),
        "memsec": ("(normal 0 1)", ["h (mem (lambda (a) (normal a 1)))", "y (lambda (x) (normal (+ (h (> w 0)) x) 1))"],
                   lambda r, i: (i, f"{r.uniform(0, 3):.2f}")),
    }

    def border(self, d):
        """A w with a border of many observations, of one of several shapes (or none)."""
        kind = self.c(["normal", "normal", "mvn", "logistic", "branchy", "memsec", "twice", "plate", "none"])
        nobs = self.c([2, 5, 20, 60])
        if kind == "none":
            return
        self.add_scope("w", ["0"], real=True)
        if kind == "plate":
            return self.plate(d, nobs)
        prior, assumes, datum = self.BORDERS[kind]
        d.append(f"[assume w (scope_include 'w 0 {prior})]")
        d += [f"[assume {a}]" for a in assumes]
        d += ["[observe (y {}) {}]".format(*datum(self.r, i)) for i in range(nobs)]

    def plate(self, d, nobs):
        r = self.r
        d.append("[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3))))]")
        d.append("[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]")
        rows = ["y,x1,x2"]
        for _ in range(max(nobs, 30)):
            x1, x2 = r.gauss(0, 1), r.gauss(0, 1)
            rows.append(f"{int(r.random() < 1 / (1 + 2.718 ** -(x1 + x2)))},{x1:.3f},{x2:.3f}")
        self.csv = "\n".join(rows) + "\n"
        d.append("PL: [observe_csv y_x \"data.csv\" y]")
        self.labels.append("PL")

    def model(self):
        if self.p(0.5):
            return self.model_sub()
        d, r = [], self.r
        conts = [("m", "(normal 0 1)"), ("s", "(gamma 2 1)"), ("pr", "(beta 1 1)"), ("u", "(uniform_continuous -1 1)"),
                 ("ig", "(inv_gamma 3 2)"), ("v", "(multivariate_normal (zeros 2) (id_matrix 2))"),
                 ("ex", "(exponential 2)"), ("ln", "(lognormal 0 0.5)")]
        discs = [("b", "(flip 0.5)"), ("k", "(categorical (vector 0.2 0.3 0.5))"), ("n", "(poisson 3)"),
                 ("be", "(bernoulli 0.3)"), ("bn", "(binomial 3 0.4)"), ("ud", "(uniform_discrete 0 3)")]
        for name, e in r.sample(conts, r.randint(1, 4)):
            if self.p(0.3):
                e = f"(scope_include 'g{name} 0 {e})"
                self.add_scope(f"g{name}", ["0"], real=True)
            d.append(f"[assume {name} {e}]")
            self.names.append(name)
        chosen = r.sample(discs, r.randint(0, 3))
        for name, e in chosen:
            if self.p(0.3):
                e = f"(tag 'd{name} 0 {e})"
                self.add_scope(f"d{name}", ["0"], real=False)
            d.append(f"[assume {name} {e}]")
            self.names.append(name)
        if not chosen:
            self.real_scopes.append("default")
        self.border(d)
        if self.p(0.6):  # a mixture through mem, of two components or a Dirichlet process's (labels 0, 1, ...)
            if self.p(0.3):
                d.append("[assume crp (make_crp 1)]")
                self.names.append("crp")
            draw = "(crp)" if "crp" in self.names else "(bernoulli 0.5)"
            d.append(f"[assume z (mem (lambda (i) (scope_include 'z i {draw})))]")
            d.append("[assume mu (mem (lambda (j) (scope_include 'mu j (normal 0 3))))]")
            self.names += ["z", "mu"]
            zs = [str(i) for i in range(r.randint(1, 4))]
            d += [f"[observe (normal (mu (z {i})) 1) {r.uniform(-3, 3):.2f}]" for i in zs]
            if self.p(0.4):  # collapsed components: a move of (z i) takes its draw to another coin (or normal)
                kind = r.randrange(4)
                if kind == 0:
                    d.append("[assume cz (mem (lambda (j) (make_beta_bernoulli 1 1)))]")
                    d += [f"[observe ((cz (z {i}))) {r.choice(['true', 'false'])}]" for i in zs]
                elif kind == 1:
                    d.append("[assume cz (mem (lambda (j) (make_nig_normal 0 1 2 1)))]")
                    d += [f"[observe ((cz (z {i}))) {r.uniform(-3, 3):.2f}]" for i in zs]
                elif kind == 2:
                    d.append("[assume cz (mem (lambda (j) (make_gamma_poisson 2 1)))]")
                    d += [f"[observe ((cz (z {i}))) {r.randint(0, 6)}]" for i in zs]
                else:
                    d.append("[assume cz (mem (lambda (j) (make_niw_normal (vector 0 0) 1 3 (id_matrix 2))))]")
                    d += [f"[observe ((cz (z {i}))) (vector {r.uniform(-3, 3):.2f} {r.uniform(-3, 3):.2f})]"
                          for i in zs]
            self.add_scope("z", zs, real=False)
            self.add_scope("mu", ["0", "1"], real=True)
            self.default_not_real()
        if self.p(0.4):  # a choice in one branch only
            d.append("[assume br (flip 0.5)]")
            d.append("[assume bc (if br (scope_include 'bq 0 (normal 0 1)) (gamma 1 1))]")
            self.names += ["br", "bc"]
            self.add_scope("bq", ["0"], real=True)
            self.default_not_real()
            if self.p(0.5):
                d.append(f"[observe (normal bc 1) {r.uniform(-1, 2):.2f}]")
        if self.p(0.15):  # a scope whose choice is real or not by a branch
            d.append("[assume dc (flip 0.5)]")
            d.append("[assume dg (scope_include 'dg 0 (if dc (normal 0 1) (flip 0.5)))]")
            self.names += ["dc", "dg"]
            self.add_scope("dg", ["0"], real=True)
            self.default_not_real()
        # A coin whose maker absorbs moves of ca (transitions on it failed until absorbing at applications).
        if self.p(0.15):
            d += ["[assume ca (gamma 2 1)]", "[assume coin (make_beta_bernoulli ca 1)]", "[observe (coin) true]"]
            self.names += ["ca", "coin"]
        if self.p(0.15):
            d += ["[assume fb (flip 0.5)]", "[observe (if fb (normal 0 1) (normal 1 1)) 0.4]"]
            self.names.append("fb")
            self.default_not_real()
        if self.err(0.1):
            d += ["[assume xb (uniform_continuous 0 2)]", "[observe (beta xb 1) 0.001]"]
            self.names.append("xb")
        observed = [("m", f"(normal m 1) {r.uniform(-2, 2):.2f}"), ("pr", "(flip pr) true"), ("s", "(poisson s) 3")]
        for name, obs in observed:
            if name in self.names and self.p(0.5):
                d.append(f"[observe {obs}]")
        return d

    # ---------------------------------------------------------------- numbers
    def count(self, small=True):
        if self.p(0.85):
            return str(self.c([0, 1, 1, 2, 3, 5] if small else [0, 1, 5, 20]))
        return self.param_or(str(self.c([0, 1, 2])), self.bad_count)

    def bad_count(self):
        bad = ["-1", "1.5", "1e13", "nan", "inf", "-0", "true", "'3", "\"3\"", "(1)", "x",
               "1e-400", "0.0", "2.0", "-1e-300", "9007199254740993", "1e12.5", "4e12"]
        if self.err(0.05):
            bad += ["1e400", "1e12x"]  # syntax errors: the whole file fails
        return self.c(bad)

    def param_or(self, good, bad):
        """`good` or bad(), written as is or as a {param} (sometimes not given)."""
        if self.p(0.5):
            name = f"P{len(self.params)}"
            self.params[name] = (good if self.ok(0.6) else bad()).strip("'\"()")
            if self.err(0.05):
                del self.params[name]
            return "{" + name + "}"
        return bad() if self.err(0.5) else good

    def pick(self, good, bad, x=0.9):
        """A valid value (always when this directive is meant to be valid), or an invalid one."""
        return self.c(good if self.ok(x) else bad)

    SIGMA = (["0.1", "0.3", "1", "0.05", "1e-300", "1e308", "5e-324", "1e10", "2"],
             ["0", "-1", "nan", "inf", "'x", "true", "\"1\""])
    EPS = (["0", "0.01", "0.1", "0.5", "0.9", "0.999999", "1e-300", "-0", "0.0", "0.9999999999999999", "0.3", "0.05",
            "2.5e-308", "5e-324", "1e-310"], ["1", "-0.1", "1.5", "nan", "x", "1e-400"])
    NBATCH = (["1", "2", "5", "100", "1e308", "9007199254740993"], ["0", "-1", "1.5", "nan", "x", "0.5"])
    DRIFT = (["'drift", "drift", "(quote drift)"], ["'drfit", "\"drift\"", "3"])
    OPTIONS = {"'k0": (["1", "2", "3", "1e308"], ["0", "-1", "1.5", "x"]),
               "'fallback": (["'mh", "'none", "mh"], ["'xx", "1"]),
               "'eps_per": (["'decision", "'test", "decision"], ["'each"]),
               "'proxy": (["'taylor", "'none", "taylor"], ["'exact"])}

    # ---------------------------------------------------------------- inference programs
    def scope_block(self, want_real=False):
        if self.err(0.05):
            return self.c(["q", "\"zz\"", "3", "(a b)", "''w", "\"default\""]), self.c(["one", "all"])
        scope = self.c(self.real_scopes if want_real and self.real_scopes and self.p(0.85) else self.scopes)
        if scope == "default":
            block = self.c(["one", "one", "all", "'one", "0"]) if self.p(0.1) else self.c(["one", "all"])
        elif self.err(0.08):
            block = self.c(["7", "\"0\"", "true", "(1 2)", "'all", "nan"])
        else:
            block = self.c(["one", "all"] + self.blocks.get(scope, []) * 2)
        if scope != "default" and self.p(0.3):
            scope = self.c([f"'{scope}", f"(quote {scope})", f"\"{scope}\"", scope])
        return scope, block

    def mh(self):
        drift = self.p(0.4)
        scope, block = self.scope_block(want_real=drift)
        if self.err(0.04):
            return self.c([f"(mh {scope} {block})", f"(mh {scope})", "(mh)", f"(mh {scope} {block} 1 2)",
                           f"(mh {scope} {block} 'drift 1)"])
        if drift:
            return f"(mh {scope} {block} {self.pick(*self.DRIFT, 0.95)} {self.pick(*self.SIGMA)} {self.count()})"
        return f"(mh {scope} {block} {self.count()})"

    def gibbs(self):
        scope, block = self.scope_block()
        discrete = [x for x in self.scopes if x == "z" or (x.startswith("d") and x != "default")]
        if discrete and self.p(0.6):  # scopes of flips, categoricals, (poisson: refused), dg (by a branch)
            scope = self.c(discrete)
            block = self.c(["one", "all"] + self.blocks.get(scope, []))
        if self.err(0.04):
            return self.c([f"(gibbs {scope} {block})", f"(gibbs {scope})", "(gibbs)", f"(gibbs {scope} {block} 1 2)"])
        return f"(gibbs {scope} {block} {self.count()})"

    PARTICLES = (["1", "2", "5", "10"], ["0", "-1", "1.5", "nan", "x", "1e7"])

    def pgibbs(self):
        scope, block = self.scope_block()
        if self.p(0.6):  # ordered blocks: numbers in most scopes of the models; default has none (an error)
            numeric = [int(b) for b in self.blocks.get(scope.strip("'\""), []) if b.lstrip("-").isdigit()]
            lo = self.c(numeric) if numeric else 0
            block = self.c(["ordered", "ordered", f"(ordered_range {lo} {lo + self.r.randint(0, 3)})"])
            if self.err(0.05):
                block = self.c(["(ordered_range 3 1)", "(ordered_range 1)", "(ordered_range x 2)", "one", "'ordered"])
        if self.err(0.04):
            return self.c([f"(pgibbs {scope} {block} 2)", f"(pgibbs {scope})", "(pgibbs)",
                           f"(pgibbs {scope} {block} 1 2 3)"])
        return f"(pgibbs {scope} {block} {self.pick(*self.PARTICLES, 0.95)} {self.count()})"

    def sub(self):
        drift = self.p(0.6)
        scope, block = self.scope_block(want_real=drift)
        if self.p(0.7) and "w" in self.scopes:
            scope, block = "w", self.c(["all", "one", "0"])
        args = [scope, block, self.pick(*self.NBATCH), self.pick(*self.EPS)]
        if drift:
            args += [self.pick(*self.DRIFT, 0.95), self.pick(*self.SIGMA)]
        args.append(self.count() if self.p(0.3) else self.c(["5", "20", "100"]))
        options = self.r.sample(["'k0", "'fallback", "'eps_per", "'proxy"], self.r.randint(0, 4))
        if scope == "w" and "'fallback" not in options and self.p(0.5):
            options.append("'fallback")
        for name in options:
            args += [name, self.pick(*self.OPTIONS[name])]
        if self.err(0.05):
            args += self.c([["'k1", "2"], ["'k0"], ["\"k0\"", "2"], ["3", "2"], ["'k0", "2"]])
        if self.err(0.03):
            args = args[:self.r.randint(0, 4)]
        return "(subsampled_mh " + " ".join(args) + ")"

    def collect(self):
        exprs = []
        for _ in range(self.r.randint(1, 3)):
            if self.ok(0.9) and self.names:
                n = self.c(self.names)
                if n in ("z", "mu"):
                    exprs.append(f"({n} {self.r.randint(0, 2)})")
                else:
                    exprs.append(self.c([n, f"(+ {n} 1)", n]))
            elif not self.bad:
                exprs.append(self.c(["(normal 0 1)", "(+ 1 2)", "true"]))
            else:
                exprs.append(self.c(["(list 1)", "'a", "\"s\"", "(vector)", "(normal 0 -1)", "qq", "(normal 0 1)", "w",
                                     "(if (flip) 1 (list 1))", "(if dc 1 (list 1))", "(if dc 1 (vector 1 2))",
                                     "(if dc (vector 1) (vector 1 2))"]))
        if self.err(0.02):
            exprs = []
        return "(collect " + " ".join(exprs) + ")"

    def mixture(self, depth):
        parts = []
        for _ in range(self.r.randint(1, 3)):
            w = self.pick(["1", "2", "0", "0.5", "1e308", "1e-300"], ["-1", "x", "nan", "true"], 0.93)
            parts += [w, self.program(depth + 1)]
        if self.err(0.04):
            parts = parts[:-1]
        return "(mixture (" + " ".join(parts) + f") {self.count()})"

    def program(self, depth=0):
        x = self.r.random()
        if depth > 3 or x < 0.35:
            return self.c([self.mh] * 11 + [self.sub] * 5 + [self.gibbs] * 3 + [self.pgibbs] * 3 + [self.count] * 2 +
                          [self.collect] * 2)()
        if x < 0.5:
            return f"(repeat {self.count()} {self.program(depth + 1)})"
        if x < 0.78:
            body = " ".join(self.program(depth + 1) for _ in range(self.r.randint(0, 3)))
            return f"(do {body})" if x < 0.65 else f"(cycle ({body}) {self.count()})"
        if x < 0.9:
            return self.mixture(depth)
        if x < 0.95 or not self.bad:
            return self.collect()
        return self.c(["(hmc default one 1)", "(pgibbs default one 2 1)", "(smc default all 2 1)", "()", "(1 2)", "(repeat 2)",
                       "(cycle 1 2)", "(mixture () 1)", "(do . 1)", "mh", "\"mh\"", "(quote (mh default one 1))",
                       "(repeat 2 (mh default one 1) 3)", "(cycle ((mh default one 1)))", "{K}", "({K} default one 1)"])

    # ---------------------------------------------------------------- sessions
    def directive(self):
        x = self.r.random()
        if not self.bad and 0.65 <= x < 0.82:
            x = self.c([0.1, 0.61, 0.93, 0.85, 0.3])
        if x < 0.6:
            return f"[infer {self.program()}]"
        if x < 0.65:
            e = self.c(self.names) if self.names else "1"
            return f"{self.label(0.3)}[predict {f'({e} {self.r.randint(0, 5)})' if e in ('z', 'mu') else e}]"
        if x < 0.72:
            return f"[sample {self.c(['(normal 0 1)', '(mu 9)', '(z 9)', '(normal 0 -1)', 'm', 'qq'])}]"
        if x < 0.82:
            target = self.c(["(normal m 1)", "(normal (mu 0) 1)", "(normal w 1)", "m", "(flip pr)", "(normal 0 -1)",
                             "(y 3)"])
            return f"{self.label(0.5)}[observe {target} {self.c(['0.5', '1', 'true', '-1', '(vector 1)', '1e308'])}]"
        if x < 0.87 and self.sec and self.bad and self.p(0.6):
            j = self.sec[0]
            return self.c([f"[observe (y{j} 1.0) (vector 1)]", f"[observe (y{j} 1.0) -1]",
                           "[assume bad (+ w (normal 0 -1))]", "[predict (normal w -1)]", "[predict (+ w (sqrt -1))]",
                           "[sample (normal (* w 2) -1)]", "[observe (normal w 1) (sqrt -1)]",
                           f"[observe (y{j} 1.0) (normal 0 -1)]", f"[observe (y{j} 1.0) 1e308]",
                           f"[observe (y{j} 1.5) (list 1)]", "[assume w 3]", "[forget w]", f"[forget y{j}]",
                           "[forget t]", "[assume sd (scope_include 'default 0 (normal 0 1))]"])
        if x < 0.87 and self.sec:
            j, fmt = self.sec
            arg = round(self.r.uniform(-3, 3), 1)
            return f"{self.label(0.5)}[observe (y{j} {arg}) {self.datum(fmt, self.r.gauss(0, 2))}]"
        if x < 0.92 and not self.bad:
            return f"[forget {self.c(self.labels)}]" if self.labels else "[predict 1]"
        if x < 0.92:
            return f"[forget {self.c(self.labels + self.names + ['nolabel'])}]"
        return f"[predict {self.c(self.names) if self.names else 1}]"

    def session(self):
        lines = self.model()
        for _ in range(self.r.randint(2, 8)):
            self.bad = self.p(0.15)
            lines.append(self.directive())
        return lines


def run(cmd, cwd, timeout, text=""):
    try:
        p = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=timeout, cwd=cwd, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def problems_of(rc, out, err, what):
    """What is wrong with one run of pprun: a hang, a crash, a report, an error without its location."""
    if rc == "timeout":
        return [f"{what}: hang"]
    problems = [] if rc in (0, 2) else [f"{what}: exit code {rc}"]
    if m := BAD.search(out + err):
        problems.append(f"{what}: {m.group(0)}")
    lines = [line for line in err.splitlines() if line.strip()]
    if rc == 2 and not lines:
        problems.append(f"{what}: exit 2 without a message")
    if rc == 2:
        problems += [f"{what}: unlocated error: {line[:200]}" for line in lines
                     if (" error: " in line or line.startswith(("error", "pprun:"))) and not LOCATED.match(line)]
    if rc == 0 and what == "file" and any("error" in line for line in lines):
        problems.append(f"{what}: exit 0 with an error")
    if rc == 0 and what == "file":
        problems += [f"{what}: unlocated warning: {line[:200]}" for line in lines
                     if line.startswith("warning:") and not re.match(r"^warning: cur\.vnt:\d+:\d+: ", line)]
    return problems


def removable_failures(lines, err):
    """The inputs of a REPL session that failed and must have left the trace as it was, with their messages."""
    found = {}
    for block in re.split(r"(?m)^(?=<repl:\d+>:\d+:\d+: error: |warning: )", err):
        m = re.match(r"<repl:\d+>:\d+:\d+: error: (.*)", block)
        if not m:
            continue
        # The failing input is the latest the error names: one in a procedure's body is located at the assume that
        # wrote it, and an "in call to ... at <repl:N>" or "while running ... at <repl:N>" line names the caller.
        n = max(int(k) for k in re.findall(r"<repl:(\d+)>", block))
        infer = re.match(r"^(\w+: )?\[infer", lines[n - 1].lstrip())
        if not infer or (PRE_RUN.match(m.group(1)) and "\n  while running " not in block):
            found[n] = m.group(1)
    return found


def run_one(asan, release, seed, outdir):
    asan, release, outdir = os.path.abspath(asan), os.path.abspath(release), os.path.abspath(outdir)  # runs in work/
    g = Gen(seed)
    lines = g.session()
    text = "\n".join(lines) + "\n"
    work = os.path.join(outdir, "work")
    os.makedirs(work, exist_ok=True)
    for name, content in [("cur.vnt", text), ("data.csv", g.csv)]:
        if content:
            with open(os.path.join(work, name), "w") as f:
                f.write(content)
    args = ["--seed", str(seed % 7)] + [a for k, v in g.params.items() for a in ("--param", f"{k}={v}")]
    problems = []
    # A file whose text has an error runs nothing (every [infer] is checked first): the session runs it all. The
    # ASan build is far slower, so hangs are judged on the release build.
    for what, file, stdin in [("file", ["cur.vnt"], ""), ("repl", [], text)]:
        rc, out, err = run([asan] + file + args, work, 120, stdin)
        problems += [f"asan {p}" for p in problems_of(rc, out, err, what)] if rc != "timeout" else []
    first = run([release, "cur.vnt"] + args, work, 20)
    RUNS[f"files exiting {first[0]}"] += 1
    problems += problems_of(*first, "file")
    if run([release, "cur.vnt"] + args, work, 20) != first:
        problems.append("file: same seed, different output")
    rc, out, err = run([release] + args, work, 20, text)
    problems += problems_of(rc, out, err, "repl")
    failed = removable_failures(lines, err)
    if failed:
        n = g.r.choice(sorted(failed))
        rest = lines[:n - 1] + lines[n:]
        RUNS["sessions run again without a failing " + ("[infer]" if "[infer" in lines[n - 1] else "directive")] += 1
        if run([release] + args, work, 20, "\n".join(rest) + "\n")[1] != out:
            problems.append(f"repl: removing failing input {n} ({failed[n][:100]}) changes the printed values")
    if not problems:
        return None
    path = os.path.join(outdir, f"case{seed}.vnt")
    os.replace(os.path.join(work, "cur.vnt"), path)
    if g.csv:
        os.replace(os.path.join(work, "data.csv"), os.path.join(outdir, f"case{seed}.csv"))
    with open(path + ".cmd", "w") as f:
        f.write(" ".join(args) + "\n" + "\n".join(problems) + "\n")
    return "; ".join(problems)


if __name__ == "__main__":
    atexit.register(lambda: RUNS and print("runs:", dict(RUNS)))
    run_seeds(__doc__, "cases", run_one, binaries=2)
