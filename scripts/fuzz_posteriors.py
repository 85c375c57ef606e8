#!/usr/bin/env python3
# Generates random small models whose latent random choices are coins (flips, some made by compound procedures,
# some by mem'd ones, some in branches that appear and disappear) and in some models a count (binomial or
# uniform_discrete, read by the observations' means), observed through normals, flips and assumed variables whose
# choice sits in a branch; computes the exact posterior of every named coin by enumerating every
# execution with an evaluator of its own (nothing of vnt's); runs the model with pprun under a random exact kernel
# (mh, subsampled_mh at eps 0, gibbs, pgibbs) and reports the models whose draws disagree with the exact posterior beyond 5
# standard errors (batch means).
# Finds what the crash fuzzers cannot: a wrong acceptance ratio (brush, index corrections, local sections).
# With VNT_FUZZ_SHAPE=chain the models are chains instead (each coin reads the one or two before it, observations
# read one or two neighbours), the shape pgibbs is made for and seldom refuses, under kernels of their own; with
# VNT_FUZZ_SHAPE=crp, Dirichlet process mixtures of coins: customers of a make_crp restaurant, a mem'd coin per table
# (brush that tables bring and take away), observations through the table coins and through who sits with whom,
# and in half the models flips of a collapsed coin per table (make_beta_bernoulli), which a move of the customer
# takes from one table's coin to another's.
# SPDX-License-Identifier: Apache-2.0
"""usage: fuzz_posteriors.py PPRUN FIRST LAST [OUTDIR]   (seeds FIRST..LAST; disagreeing models are kept in OUTDIR)
       fuzz_posteriors.py --reduce PPRUN MODEL             (prints a smaller model that still disagrees)"""
import copy
import math
import os
import random
import re
import subprocess
import sys
import tempfile

from fuzz_common import batch_means_se, read_draws, run_seeds

TRANSITIONS = int(os.environ.get("VNT_FUZZ_TRANSITIONS", 30000))  # more to see a smaller bias
BURN_IN = TRANSITIONS // 10
Z = 5.0
KERNEL_HAS = os.environ.get("VNT_FUZZ_KERNEL", "")  # e.g. gibbs: only the kernels whose text has it
CHAINS = os.environ.get("VNT_FUZZ_SHAPE", "") == "chain"
RESTAURANTS = os.environ.get("VNT_FUZZ_SHAPE", "") == "crp"

KERNELS = [
    "(mh default one 1)",
    "(mh default all 1)",
    "(mixture (1 (mh default one 1) 1 (mh default all 1)) 1)",
    "(subsampled_mh default one 2 0 1 'fallback 'mh)",
    "(cycle ((mh default one 1) (subsampled_mh default all 3 0 1 'fallback 'mh)) 1)",
    "(gibbs default one 1)",
    "(mixture (1 (gibbs default one 1) 1 (mh default all 1)) 1)",
    # pgibbs over the assumed coins tagged (scope_include 'c i ...), in order; mh moves the choices outside them.
    "(cycle ((pgibbs c ordered 3 1) (mh default one 1)) 1)",
    "(mixture (1 (pgibbs default all 4 1) 1 (mh default one 1)) 1)",
]
# For chains: pgibbs over the whole line, by windows, with one particle (ancestor sampling does the work when the
# chain has order one), and the others for comparison.
CHAIN_KERNELS = [
    "(pgibbs c ordered 3 1)",
    "(pgibbs c ordered 1 1)",
    "(cycle ((pgibbs c (ordered_range 0 2) 2 1) (pgibbs c (ordered_range 2 9) 2 1)) 1)",
    "(cycle ((pgibbs c ordered 2 1) (mh default one 1)) 1)",
    "(gibbs default one 1)",
    "(mh default one 1)",
]
# For restaurants: the customers (c0, c1, ...) and the table coins move by mh, gibbs (a customer at a time, Neal's
# algorithm 8), subsampled_mh at eps 0 and pgibbs over the customers in order.
CRP_KERNELS = [
    "(mh default one 1)",
    "(gibbs default one 1)",
    "(cycle ((gibbs default one 1) (mh default one 1)) 1)",
    "(subsampled_mh default one 2 0 1 'fallback 'mh)",
    "(cycle ((pgibbs c ordered 3 1) (mh default one 1)) 1)",
]
# What pgibbs refuses (a model whose coins decide which random choices exist): skipped, not a failure.
PGIBBS_REFUSALS = ("the particles must be states of the same choices", "exists only for some values of other choices",
                   "is computed from the choices of scope")


# Expressions are tuples: ("const", v), ("var", name), ("flip", p), ("if", c, a, b), ("not", e), ("+", a, b),
# ("call", f, arg), ("normal", mean, sd). text() writes the vnt form, Run.eval the enumerator's.
def text(e):
    kind = e[0]
    if kind == "const":
        v = e[1]
        return ("true" if v else "false") if isinstance(v, bool) else repr(v)
    if kind == "var":
        return e[1]
    if kind == "call":
        return f"({e[1]} {text(e[2])})"
    if kind == "draw":
        return f"({e[1]})"
    if kind == "collapsed":  # a flip of the collapsed coin the key picks
        return f"(({e[1]} {text(e[2])}))"
    return "(" + " ".join([kind] + [text(x) for x in e[1:]]) + ")"


class NeedChoice(Exception):
    """The run needs one more outcome: one of `options` (2 for a coin, the tables and a new one for a customer)."""

    def __init__(self, options=2):
        super().__init__()
        self.options = options


class Restaurant:
    """A make_crp restaurant's tables within one run: label -> customers; a new table takes the smallest free label."""

    def __init__(self, alpha):
        self.alpha, self.tables = alpha, {}


class Run:
    """One execution of the model along a fixed sequence of coin outcomes (`prefix`); NeedChoice when it runs out."""

    def __init__(self, model, prefix):
        self.model, self.prefix, self.used, self.logw = model, prefix, 0, 0.0
        self.env, self.memo = {}, {}
        self.counts = {}  # a collapsed coin's (heads, tails) by key

    def coin(self, p):
        if self.used == len(self.prefix):
            raise NeedChoice
        v = self.prefix[self.used] == 1
        self.used += 1
        self.logw += math.log(p if v else 1 - p)
        return v

    def outcome(self, options):
        """One of `options` outcomes of a count choice, numbered from 0."""
        if self.used == len(self.prefix):
            raise NeedChoice(options)
        k = self.prefix[self.used]
        self.used += 1
        return k

    def seat(self, r):
        """A customer of restaurant r: an occupied table (in label order) or a new one, the last option."""
        labels = sorted(r.tables)
        if self.used == len(self.prefix):
            raise NeedChoice(len(labels) + 1)
        k = self.prefix[self.used]
        self.used += 1
        n = sum(r.tables.values())
        if k < len(labels):
            label = labels[k]
            self.logw += math.log(r.tables[label] / (n + r.alpha))
        else:
            label = next(i for i in range(len(labels) + 1) if i not in r.tables)
            self.logw += math.log(r.alpha / (n + r.alpha))
        r.tables[label] = r.tables.get(label, 0) + 1
        return label

    def score(self, e, observed, scope):
        """Evaluates e whose random choice is observed at `observed`: the choice takes it, and weighs it."""
        kind = e[0]
        if kind == "if":
            return self.score(e[2] if self.eval(e[1], scope) else e[3], observed, scope)
        if kind == "call":
            proc = self.model.procs[e[1]]
            assert not proc["mem"], "observations of mem'd procedures are not generated"
            return self.score(proc["body"], observed, {proc["param"]: self.eval(e[2], scope)})
        if kind == "var":
            assert e[1] in self.model.observed_vars, e
            return self.env[e[1]]
        if kind == "flip":
            p = self.eval(e[1], scope)
            self.logw += math.log(p if observed else 1 - p)
            return observed
        if kind == "collapsed":  # the predictive given the flips scored before: their joint, in any order
            a, b = self.model.collapsed
            heads, tails = self.counts.get(self.eval(e[2], scope), (0, 0))
            p = (a + heads) / (a + b + heads + tails)
            self.logw += math.log(p if observed else 1 - p)
            self.counts[self.eval(e[2], scope)] = (heads + observed, tails + (not observed))
            return observed
        assert kind == "normal", e
        m, s = self.eval(e[1], scope), self.eval(e[2], scope)
        self.logw += -0.5 * ((observed - m) / s) ** 2 - math.log(s) - 0.5 * math.log(2 * math.pi)
        return observed

    def eval(self, e, scope):
        kind = e[0]
        if kind == "const":
            return e[1]
        if kind == "var":
            return scope[e[1]] if e[1] in scope else self.env[e[1]]
        if kind == "flip":
            return self.coin(self.eval(e[1], scope))
        if kind == "if":
            return self.eval(e[2] if self.eval(e[1], scope) else e[3], scope)
        if kind == "not":
            return not self.eval(e[1], scope)
        if kind == "=":
            return self.eval(e[1], scope) == self.eval(e[2], scope)
        if kind == "make_crp":
            return Restaurant(e[1][1])
        if kind == "draw":
            return self.seat(self.env[e[1]])
        if kind == "+":
            return self.eval(e[1], scope) + self.eval(e[2], scope)
        if kind == "binomial":
            n, p = self.eval(e[1], scope), self.eval(e[2], scope)
            k = self.outcome(n + 1)
            self.logw += math.log(math.comb(n, k)) + k * math.log(p) + (n - k) * math.log(1 - p)
            return k
        if kind == "uniform_discrete":
            lo, hi = self.eval(e[1], scope), self.eval(e[2], scope)
            self.logw -= math.log(hi - lo)
            return lo + self.outcome(hi - lo)
        if kind == "call":
            proc = self.model.procs[e[1]]
            arg = self.eval(e[2], scope)
            if proc["mem"]:
                key = (e[1], arg)
                if key not in self.memo:
                    self.memo[key] = self.eval(proc["body"], {proc["param"]: arg})
                return self.memo[key]
            return self.eval(proc["body"], {proc["param"]: arg})
        raise AssertionError(f"an unobserved {kind} cannot be enumerated")

    def run(self):
        for d in self.model.directives:
            if d[0] == "assume" and d[1] in self.model.observed_vars:
                self.env[d[1]] = self.score(d[2], self.model.observed_vars[d[1]], {})
            elif d[0] == "assume":
                self.env[d[1]] = self.eval(d[2], {})
            elif d[0] == "observe" and d[1][0] != "var":  # an observed variable was weighed where assumed
                self.score(d[1], d[2], {})
        return {name: self.env[name] for name in self.model.queries}


def exact_posterior(model):
    """P(name = true | observations) for each query, by enumerating every sequence of outcomes."""
    todo, total, mass = [[]], 0.0, {q: 0.0 for q in model.queries}
    while todo:
        prefix = todo.pop()
        run = Run(model, prefix)
        try:
            values = run.run()
        except NeedChoice as need:
            todo += [prefix + [k] for k in range(need.options)]
            continue
        w = math.exp(run.logw)
        total += w
        for q, v in values.items():
            mass[q] += w if v else 0.0
    return {q: m / total for q, m in mass.items()}


class Model:
    def __init__(self):
        self.directives, self.procs, self.observed_vars, self.queries = [], {}, {}, []
        self.collapsed = None  # (alpha, beta) of the collapsed coins `cc`, if the model has them

    def vnt(self, kernel):
        lines = []
        if self.collapsed is not None:
            a, b = self.collapsed
            lines.append(f"[assume cc (mem (lambda (k) (make_beta_bernoulli {a} {b})))]")
        for name, p in self.procs.items():
            lam = f"(lambda ({p['param']}) {text(p['body'])})"
            lines.append(f"[assume {name} {'(mem ' + lam + ')' if p['mem'] else lam}]")
        for d in self.directives:
            if d[0] == "assume":
                e = text(d[2])
                if "pgibbs c" in kernel and re.fullmatch(r"c\d+", d[1]):
                    e = f"(scope_include 'c {d[1][1:]} {e})"
                lines.append(f"[assume {d[1]} {e}]")
            else:
                lines.append(f"[observe {text(d[1])} {text(('const', d[2]))}]")
        cols = " ".join(self.queries)
        lines.append(f"[infer (repeat {TRANSITIONS} (do {kernel} (collect {cols})))]")
        return "\n".join(lines) + "\n"


def generate_chain(rnd):
    """c_0 ~ flip, c_i ~ flip(p(c_{i-1})) mostly; some read c_{i-2} (order two) or hold their choice in a branch;
    observations of one state or two neighbours, through normals and flips, after the state they read."""
    m = Model()

    def prob():
        return ("const", round(rnd.choice([0.15, 0.3, 0.5, 0.7, 0.85]) + rnd.uniform(-0.05, 0.05), 3))

    def number():
        return ("const", round(rnd.uniform(-1.5, 1.5), 2))

    def c(i):
        return ("var", f"c{i}")

    for i in range(rnd.randint(3, 7)):
        r = rnd.random()
        if i == 0:
            e = ("flip", prob())
        elif r < 0.55:
            e = ("flip", ("if", c(i - 1), prob(), prob()))
        elif r < 0.65:
            e = ("flip", ("if", ("not", c(i - 1)), prob(), prob()))
        elif r < 0.8 and i >= 2:  # order two
            e = ("flip", ("if", c(i - 1), ("if", c(i - 2), prob(), prob()), prob()))
        elif r < 0.9:  # the choice in a branch: another choice for each value of c_{i-1}
            e = ("if", c(i - 1), ("flip", prob()), ("flip", prob()))
        else:
            e = ("flip", prob())
        m.directives.append(("assume", f"c{i}", e))
        m.queries.append(f"c{i}")
        if rnd.random() < 0.8:
            test = c(i) if i == 0 or rnd.random() < 0.7 else ("if", c(i), c(i - 1), ("not", c(i - 1)))
            if rnd.random() < 0.7:
                o = ("normal", ("if", test, number(), number()), ("const", rnd.choice([0.7, 1, 1.5])))
                m.directives.append(("observe", o, round(rnd.uniform(-1.5, 1.5), 2)))
            else:
                m.directives.append(("observe", ("flip", ("if", test, prob(), prob())), rnd.random() < 0.6))
    return m, rnd.choice([k for k in CHAIN_KERNELS if KERNEL_HAS in k])


def generate_restaurant(rnd):
    """c_i ~ crp (2 to 4 customers), t(k) a mem'd flip per table; queries: who sits with whom, and each customer's
    table coin; observations of table coins (normals, flips) and of pairs sitting together."""
    m = Model()
    m.procs["t"] = {"param": "k", "mem": True, "body": ("flip", ("const", round(rnd.uniform(0.2, 0.8), 2)))}
    m.directives.append(("assume", "crp", ("make_crp", ("const", rnd.choice([0.5, 1, 2])))))
    n = rnd.randint(2, 4)
    for i in range(n):
        m.directives.append(("assume", f"c{i}", ("draw", "crp")))
    for i in range(n):
        m.directives.append(("assume", f"t{i}", ("call", "t", ("var", f"c{i}"))))
        m.queries.append(f"t{i}")
        for j in range(i):
            m.directives.append(("assume", f"s{j}{i}", ("=", ("var", f"c{j}"), ("var", f"c{i}"))))
            m.queries.append(f"s{j}{i}")
    for _ in range(rnd.randint(1, 4)):
        i, j = rnd.randrange(n), rnd.randrange(n)
        coin = ("call", "t", ("var", f"c{i}"))
        r = rnd.random()
        if r < 0.5:
            mean = ("if", coin, ("const", round(rnd.uniform(-1.5, 1.5), 2)), ("const", round(rnd.uniform(-1.5, 1.5), 2)))
            m.directives.append(("observe", ("normal", mean, ("const", 1)), round(rnd.uniform(-1.5, 1.5), 2)))
        elif r < 0.75 or i == j:
            p = ("if", coin, ("const", round(rnd.uniform(0.1, 0.9), 2)), ("const", round(rnd.uniform(0.1, 0.9), 2)))
            m.directives.append(("observe", ("flip", p), rnd.random() < 0.6))
        else:
            same = ("=", ("var", f"c{i}"), ("var", f"c{j}"))
            p = ("if", same, ("const", round(rnd.uniform(0.1, 0.9), 2)), ("const", round(rnd.uniform(0.1, 0.9), 2)))
            m.directives.append(("observe", ("flip", p), rnd.random() < 0.5))
    if rnd.random() < 0.5:
        m.collapsed = (rnd.choice([0.5, 1, 2]), rnd.choice([0.5, 1, 2]))
        for _ in range(rnd.randint(1, 2 * n)):
            i = rnd.randrange(n)
            m.directives.append(("observe", ("collapsed", "cc", ("var", f"c{i}")), rnd.random() < 0.6))
    return m, rnd.choice([k for k in CRP_KERNELS if KERNEL_HAS in k])


def generate(seed):
    rnd = random.Random(seed)
    if CHAINS:
        return generate_chain(rnd)
    if RESTAURANTS:
        return generate_restaurant(rnd)
    m = Model()
    coins = []  # names of boolean assumes defined so far
    counts = []  # names of count assumes (binomial, uniform_discrete), read by the observations' means

    def prob():
        return round(rnd.choice([0.2, 0.3, 0.5, 0.6, 0.8]) + rnd.uniform(-0.05, 0.05), 3)

    def boolean(depth=0):
        r = rnd.random()
        if coins and (r < 0.35 or depth > 1):
            e = ("var", rnd.choice(coins))
            return ("not", e) if rnd.random() < 0.2 else e
        if r < 0.5 or depth > 1:
            return ("flip", ("const", prob()))
        if r < 0.65:
            return ("flip", ("if", boolean(depth + 1), ("const", prob()), ("const", prob())))
        coin_procs = [name for name in m.procs if name[0] in "fg"]  # h procedures make normals
        if r < 0.8 and coin_procs:
            name = rnd.choice(coin_procs)
            if not m.procs[name]["mem"]:
                arg = boolean(depth + 1)
            elif rnd.random() < 0.6:  # a mem key that moves with a coin
                arg = ("if", boolean(depth + 1), ("const", 1), ("const", 2))
            else:
                arg = ("const", rnd.randint(1, 2))
            return ("call", name, arg)
        return ("if", boolean(depth + 1), boolean(depth + 1), boolean(depth + 1))

    def number():
        r = rnd.random()
        base = ("if", boolean(1), ("const", round(rnd.uniform(-1, 1), 2)), ("const", round(rnd.uniform(-1, 1), 2)))
        if r < 0.3 and m.observed_vars:
            return ("+", ("var", rnd.choice(list(m.observed_vars))), base)
        if r < 0.6 and counts:
            return ("+", ("var", rnd.choice(counts)), base)
        return base

    def normal():
        return ("normal", number(), ("const", rnd.choice([1, 1.5, 2])))

    for i in range(rnd.randint(2, 4)):
        name = f"c{i}"
        m.directives.append(("assume", name, boolean()))
        coins.append(name)
        m.queries.append(name)
        if i == 0 or rnd.random() < 0.5:  # procedures may read the coins defined before them
            j = len(m.procs)
            kind = rnd.random()
            if kind < 0.4:
                body = ("if", ("var", "x"), ("flip", ("const", prob())), boolean(1))
                m.procs[f"f{j}"] = {"param": "x", "body": body, "mem": False}
            elif kind < 0.7:
                body = ("flip", ("if", ("var", "x"), ("const", prob()), ("const", prob())))
                m.procs[f"f{j}"] = {"param": "x", "body": body, "mem": False}
            else:
                body = ("flip", ("const", prob())) if rnd.random() < 0.5 else \
                    ("if", ("var", rnd.choice(coins)), ("flip", ("const", prob())), ("flip", ("const", prob())))
                m.procs[f"g{j}"] = {"param": "k", "body": body, "mem": True}
    if rnd.random() < 0.4:  # a count choice, its probability perhaps decided by a coin; queried by one value
        if rnd.random() < 0.6:
            p = ("if", boolean(1), ("const", prob()), ("const", prob())) if rnd.random() < 0.5 else ("const", prob())
            n = rnd.randint(1, 3)
            e, v = ("binomial", ("const", n), p), rnd.randint(0, n)
        else:
            lo = rnd.randint(-1, 1)
            hi = lo + rnd.randint(2, 3)
            e, v = ("uniform_discrete", ("const", lo), ("const", hi)), rnd.randint(lo, hi - 1)
        m.directives.append(("assume", "k0", e))
        counts.append("k0")
        m.directives.append(("assume", "k0q", ("=", ("var", "k0"), ("const", v))))
        m.queries.append("k0q")
    # Observed variables: a choice in a branch (or a procedure's body), observed later, read by other observations.
    for i in range(rnd.randint(0, 2)):
        name = f"a{i}"
        if rnd.random() < 0.3:
            j = len(m.procs)
            m.procs[f"h{j}"] = {"param": "x", "mem": False,
                                "body": ("if", ("var", "x"), normal(), normal())}
            e = ("call", f"h{j}", boolean(1))
        else:
            e = ("if", boolean(1), normal(), normal())
        m.directives.append(("assume", name, e))
        m.observed_vars[name] = round(rnd.uniform(-1.5, 1.5), 2)
    observations = [("var", a) for a in m.observed_vars]
    for _ in range(rnd.randint(1, 4)):
        r = rnd.random()
        if r < 0.35:
            observations.append(normal())
        elif r < 0.65:
            observations.append(("if", boolean(1), normal(), normal()))
        else:
            observations.append(("flip", ("if", boolean(1), ("const", prob()), ("const", prob()))))
    rnd.shuffle(observations)
    for o in observations:
        if o[0] == "var":
            m.directives.append(("observe", o, m.observed_vars[o[1]]))
        elif o[0] == "flip":
            m.directives.append(("observe", o, rnd.random() < 0.7))
        else:
            m.directives.append(("observe", o, round(rnd.uniform(-1.5, 1.5), 2)))
    return m, rnd.choice([k for k in KERNELS if KERNEL_HAS in k])


def compare(pprun, model, kernel, seed, exact):
    """Runs the model and returns what disagrees with `exact` (an empty list if nothing), or None if pprun failed
    (the failure then in the second value)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.vnt")
        draws = os.path.join(tmp, "draws.csv")
        with open(path, "w") as f:
            f.write(model.vnt(kernel))
        try:
            proc = subprocess.run([pprun, "--quiet", "--seed", str(seed), "--draws", draws, path],
                                  capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return None, "pprun did not finish in 600 s"  # a move started again for ever, once
        if proc.returncode != 0 and "pgibbs:" in proc.stderr and any(r in proc.stderr for r in PGIBBS_REFUSALS):
            print(f"seed {seed}: skipped, pgibbs refused the model", flush=True)
            return [], None  # refused with a message, the model not run: nothing to compare
        if proc.returncode != 0:
            return None, f"pprun exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
        cols, problem = read_draws(draws, exact.keys(), BURN_IN)
        if problem is not None:
            return None, problem
    problems = []
    for q, p in exact.items():
        xs = cols[q]
        mean = sum(xs) / len(xs)
        se = batch_means_se(xs)
        if se == 0:
            # A coin of extreme probability may stay on one side for a whole run: no error to judge it by.
            if 0.01 < p < 0.99:
                problems.append(f"{q}: never moved from {mean} (exact P = {p:.4f})")
        elif abs(mean - p) > Z * se + 1e-9:
            problems.append(f"{q}: frequency {mean:.4f}, exact {p:.4f}, se {se:.4f} ({abs(mean - p) / se:.1f} se)")
    return problems, None


def run_one(pprun, seed, outdir):
    model, kernel = generate(seed)
    program = model.vnt(kernel)
    exact = exact_posterior(model)
    problems, failure = compare(pprun, model, kernel, seed, exact)
    if failure is not None:
        problems = [failure]
    if not problems:
        return None
    os.makedirs(outdir, exist_ok=True)
    kept = os.path.join(outdir, f"posterior_{seed}.vnt")
    with open(kept, "w") as f:
        f.write(f"; pprun --seed {seed}; exact: " + ", ".join(f"P({q}) = {p:.6f}" for q, p in exact.items()) + "\n")
        f.write(program)
    return f"{kept}: " + "; ".join(problems)


# Reduction of a kept model: parsed back (the generator's grammar only), then directives, procedures and
# subexpressions are dropped or simplified while pprun still disagrees with the exact posterior under two seeds.
def parse_sexpr(text):
    tokens = re.findall(r"\(|\)|[^\s()]+", text)

    def read(i):
        if tokens[i] != "(":
            return tokens[i], i + 1
        out, i = [], i + 1
        while tokens[i] != ")":
            x, i = read(i)
            out.append(x)
        return out, i + 1
    return read(0)[0]


def to_expr(x):
    if isinstance(x, str):
        if x in ("true", "false"):
            return ("const", x == "true")
        for kind in (int, float):
            try:
                return ("const", kind(x))
            except ValueError:
                pass
        return ("var", x)
    if x[0] in ("flip", "not"):
        return (x[0], to_expr(x[1]))
    if x[0] == "scope_include":  # written for pgibbs kernels, which write it again
        return to_expr(x[3])
    if x[0] in ("if", "+", "normal"):
        return (x[0],) + tuple(to_expr(y) for y in x[1:])
    return ("call", x[0], to_expr(x[1]))


def sexpr_text(x):
    return x if isinstance(x, str) else "(" + " ".join(sexpr_text(y) for y in x) + ")"


def parse_model(path):
    m, kernel = Model(), None
    with open(path) as f:
        for line in f:
            if not line.startswith("["):
                continue
            d = parse_sexpr("(" + line.strip()[1:-1] + ")")
            if d[0] == "assume" and isinstance(d[2], list) and d[2][0] in ("lambda", "mem"):
                lam = d[2] if d[2][0] == "lambda" else d[2][1]
                m.procs[d[1]] = {"param": lam[1][0], "body": to_expr(lam[2]), "mem": d[2][0] == "mem"}
            elif d[0] == "assume":
                m.directives.append(("assume", d[1], to_expr(d[2])))
            elif d[0] == "observe":
                observed, value = to_expr(d[1]), to_expr(d[2])[1]
                if observed[0] == "var":
                    m.observed_vars[observed[1]] = value
                m.directives.append(("observe", observed, value))
            elif d[0] == "infer":  # (repeat N (do KERNEL (collect NAMES...)))
                kernel, m.queries = sexpr_text(d[1][2][1]), d[1][2][2][1:]
    return m, kernel


def subexpressions(e, path=()):
    yield path, e
    if e[0] in ("flip", "not", "if", "+", "normal", "call"):
        for i in range(2 if e[0] == "call" else 1, len(e)):
            yield from subexpressions(e[i], path + (i,))


def replaced(e, path, new):
    if not path:
        return new
    return e[:path[0]] + (replaced(e[path[0]], path[1:], new),) + e[path[0] + 1:]


def simpler(e):
    if e[0] == "if":
        yield from (e[2], e[3])
    if e[0] == "not":
        yield e[1]
    if e[0] == "+":
        yield from (e[1], e[2])
    if e[0] == "flip" or (e[0] == "var" and e[1][0] == "c") or (e[0] == "call" and e[1][0] in "fg"):
        yield from (("const", True), ("const", False))  # booleans only: a0 and (h x) are numbers


def smaller_models(m):
    for i, d in enumerate(m.directives):
        t = copy.deepcopy(m)
        del t.directives[i]
        if d[0] == "observe" and d[1][0] == "var":
            del t.observed_vars[d[1][1]]
        if d[0] == "assume" and (d[1] in m.observed_vars or d[1] in m.queries):
            continue
        yield t
    for name in m.procs:
        t = copy.deepcopy(m)
        del t.procs[name]
        yield t
    for i, d in enumerate(m.directives):
        e = d[2] if d[0] == "assume" else d[1]
        for path, sub in subexpressions(e):
            for new in simpler(sub):
                t = copy.deepcopy(m)
                e2 = replaced(e, path, new)
                t.directives[i] = (d[0], d[1], e2) if d[0] == "assume" else (d[0], e2, d[2])
                yield t


def reduce(pprun, path):
    m, kernel = parse_model(path)

    def disagrees(model):
        try:
            exact = exact_posterior(model)
        except (AssertionError, KeyError, TypeError, ZeroDivisionError, ValueError):
            return False  # not a model the enumerator (or the generator's grammar) allows
        for seed in (1, 2):
            problems, failure = compare(pprun, model, kernel, seed, exact)
            if failure is not None or not problems:
                return False
        return True
    if not disagrees(m):
        sys.exit(f"{path}: agrees with its exact posterior under seeds 1 and 2")
    progress = True
    while progress:
        progress = False
        for t in smaller_models(m):
            if disagrees(t):
                m, progress = t, True
                break
    print(m.vnt(kernel), end="")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--reduce":
        reduce(sys.argv[2], sys.argv[3])
    else:
        run_seeds(__doc__, "models", run_one)
