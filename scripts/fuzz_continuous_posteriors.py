#!/usr/bin/env python3
# Generates random models with a continuous parameter w read by many data, the shape subsampled_mh partitions, and
# checks their draws against the exact posterior computed here (nothing of vnt's). Three families:
# - linear-Gaussian: w, a few global latents z reading w and each other, per-datum latents, deterministic assumes,
#   procedures, lets, data that read w twice, vectors, observe_csv rows; the posterior is Gaussian (conditioning).
# - w alone, read through anything: branches on w (brush), exp, logistic, mem'd procedures keyed by w, laplace and
#   student_t likelihoods, observe_csv rows; the posterior of w by quadrature on a fine grid.
# - logistic regression with a bias and one weight, w ~ multivariate_normal: rows of observe_csv (the fused plate
#   rows, with and without 'proxy 'taylor) and single observations; the posterior by quadrature on a 2-D grid.
# The kernels are exact: mh (drift and prior proposals, through the partition or not), subsampled_mh with eps 0 or
# a mini-batch as large as N (on w, and on a second border z0), with 'fallback 'mh where a section cannot be
# partitioned, and pgibbs over w and the global latents tagged in order (scope p: w, z0, z1), whose random
# dependencies make some chains of order one (ancestor sampling) and some not. Reports the models whose posterior mean or second moment of a latent disagrees beyond 5 standard
# errors (batch means). Finds what the coin fuzzer cannot reach: continuous proposals, section chains and DAGs,
# plates, latents below the border.
# SPDX-License-Identifier: Apache-2.0
"""usage: fuzz_continuous_posteriors.py PPRUN FIRST LAST [OUTDIR]   (seeds FIRST..LAST; disagreeing models in OUTDIR)"""
import math
import os
import random
import subprocess
import tempfile

from fuzz_common import batch_means_se, read_draws, run_seeds

TRANSITIONS = int(os.environ.get("VNT_FUZZ_TRANSITIONS", 20000))
BURN_IN = TRANSITIONS // 10
Z = 5.0
KERNEL_HAS = os.environ.get("VNT_FUZZ_KERNEL", "")  # e.g. pgibbs: only the kernels whose text has it, where any has

# Linear models with z0 (scope z): a second border, moved by its own partitioned kernel.
Z_KERNELS = [
    "(cycle ((mh default one 'drift 0.5 3) (subsampled_mh w all 3 0 'drift {d} 1 'fallback 'mh)"
    " (subsampled_mh z all 3 0 'drift {d} 1 'fallback 'mh)) 1)",
    "(cycle ((mh default one 3) (subsampled_mh z all 1000 0.1 1 'fallback 'mh) (mh w all 'drift {d} 1)) 1)",
]

LOGISTIC_KERNELS = [
    "(mh w all 'drift {d} 1)",
    "(subsampled_mh w all 3 0 'drift {d} 1)",
    "(subsampled_mh w all 3 0 'drift {d} 1 'proxy 'taylor)",
    "(subsampled_mh w all 1000 0.1 'drift {d} 1 'proxy 'taylor)",
    "(subsampled_mh w all 2 0 1)",
    "(mixture (1 (mh w all 'drift {d} 1) 1 (subsampled_mh w all 4 0 'drift {d} 2 'proxy 'taylor)) 1)",
]

KERNELS = [
    "(cycle ((mh default one 'drift 0.5 4) (mh w all 'drift {d} 1)) 1)",
    "(cycle ((mh default one 4) (subsampled_mh w all 3 0 'drift {d} 1 'fallback 'mh)) 1)",
    "(cycle ((mh default one 'drift 0.5 4) (subsampled_mh w all 1000 0.1 1 'fallback 'mh)) 1)",
    "(mixture (1 (mh default one 'drift 0.5 4) 1 (subsampled_mh w all 2 0 'drift {d} 1 'fallback 'mh)) 1)",
    "(cycle ((subsampled_mh w all 5 0 'drift {d} 2 'fallback 'mh) (mh default one 'drift 0.4 3)) 1)",
]

# pgibbs over w (block 0) and the global latents z_j (block j + 1), tagged (scope_include 'p k ...) when drawn; mh
# moves the latents below w.
PGIBBS_KERNELS = [
    "(cycle ((pgibbs p ordered 3 1) (mh default one 'drift 0.5 4)) 1)",
    "(cycle ((pgibbs p ordered 1 1) (mh default one 4) (mh w all 'drift {d} 1)) 1)",
]


def r2(x):
    return round(x, 2)


class Model:
    def __init__(self):
        self.lines = []      # directives before the [infer]
        self.files = {}      # name -> CSV text
        self.queries = []    # names collected
        self.latents = ["w"]  # linear family: the Gaussian's coordinates
        self.factors = []    # linear family: (coefficients by latent, h, sigma): (sum g v - h) / sigma ~ N(0, 1)
        self.loglik = []     # w-alone family: functions of w giving a log density term
        self.nonlinear = False
        self.logistic = None  # logistic family: (prior mean, prior variance, rows (y, x))

    def vnt(self, kernel):
        cols = " ".join(self.queries)
        return "\n".join(self.lines + [f"[infer (repeat {TRANSITIONS} (do {kernel} (collect {cols})))]"]) + "\n"


def log_normal(y, mean, sd):
    return -0.5 * ((y - mean) / sd) ** 2 - math.log(sd)


def log_laplace(y, mean, b):
    return -abs(y - mean) / b - math.log(b)


def log_student_t4(y, mean, scale):  # up to a constant
    return -2.5 * math.log1p(((y - mean) / scale) ** 2 / 4) - math.log(scale)


def generate_logistic(rnd, seed):
    m = Model()
    mean = [r2(rnd.uniform(-0.5, 0.5)), r2(rnd.uniform(-0.5, 0.5))]
    var = r2(rnd.uniform(0.5, 2))
    w = [rnd.gauss(mu, math.sqrt(var)) for mu in mean]
    m.lines.append(f"[assume w (scope_include 'w 0 (multivariate_normal (vector {mean[0]} {mean[1]}) "
                   f"(* {var} (id_matrix 2))))]")
    m.lines.append("[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]")
    m.queries.append("w")
    rows = []

    def draw(x):
        y = int(rnd.random() < 1 / (1 + math.exp(-(w[0] + w[1] * x))))
        rows.append((y, x))
        return y
    files = rnd.randint(0, 2)
    for k in range(files):
        lines = ["y,x"] + [f"{draw(x)},{x}" for x in (r2(rnd.uniform(-2, 2)) for _ in range(rnd.randint(2, 40)))]
        m.files[f"rows_{seed}_{k}.csv"] = "\n".join(lines) + "\n"
        m.lines.append(f'[observe_csv y_x "rows_{seed}_{k}.csv" y]')
    for _ in range(rnd.randint(0 if files else 3, 15)):
        x = r2(rnd.uniform(-2, 2))
        y = draw(x)
        form = rnd.choice(["(y_x (vector {x}))", "(bernoulli (linear_logistic w (vector {x})))",
                           "(bernoulli (logistic (+ (lookup w 0) (* {x} (lookup w 1)))))"])
        m.lines.append(f"[observe {form.format(x=x)} {'true' if y else 'false'}]")
    m.logistic = (mean, var, rows)
    return m, rnd.choice(LOGISTIC_KERNELS).replace("{d}", str(r2(rnd.uniform(0.1, 0.5))))


def generate(seed):
    rnd = random.Random(seed)
    if rnd.random() < 0.3:
        return generate_logistic(rnd, seed)
    m = Model()
    m.nonlinear = rnd.random() < 0.4
    m0, s0 = r2(rnd.uniform(-1, 1)), r2(rnd.uniform(0.6, 2))
    w = rnd.gauss(m0, s0)  # the values the data are drawn from
    m.lines.append(f"[assume w (scope_include 'w 0 (normal {m0} {s0}))]")
    m.queries.append("w")
    m.factors.append(({"w": 1.0}, m0, s0))
    m.loglik.append(lambda v, m0=m0, s0=s0: log_normal(v, m0, s0))
    values = {"w": w}
    latents = ["w"]

    def lin(names):
        """A linear expression of some of `names`: its text, coefficients and constant."""
        picked = [n for n in names if rnd.random() < 0.6] or [rnd.choice(names)]
        coef = {n: r2(rnd.choice([-1, 1]) * rnd.uniform(0.3, 1.5)) for n in picked}
        c = r2(rnd.uniform(-1, 1))
        terms = [f"(* {a} {n})" if rnd.random() < 0.7 else f"(* {n} {a})" for n, a in coef.items()]
        text = terms[0] if len(terms) == 1 and c == 0 else f"(+ {' '.join(terms)} {c})"
        return text, coef, c

    def value(coef, c):
        return sum(a * values[n] for n, a in coef.items()) + c

    if not m.nonlinear:
        for j in range(rnd.randint(0, 2)):  # global latents reading w and each other
            text, coef, c = lin(latents)
            s = r2(rnd.uniform(0.5, 1.5))
            name = f"z{j}"
            choice = f"(normal {text} {s})"
            tagged = "(scope_include 'z 0 " + choice + ")"  # z0 is a border of its own kernels (Z_KERNELS)
            m.lines.append(f"[assume {name} {tagged if j == 0 else choice}]")
            m.factors.append(({name: 1.0, **{n: -a for n, a in coef.items()}}, c, s))
            m.latents.append(name)
            values[name] = rnd.gauss(value(coef, c), s)
            latents.append(name)
            m.queries.append(name)

    def observe_linear(text, coef, c, s):
        y = r2(rnd.gauss(value(coef, c), s))
        m.factors.append((dict(coef), y - c, s))
        return y

    def observe_w(text, f, s, logpdf=None):
        y = r2(rnd.gauss(f(w), s))
        lp = logpdf or log_normal
        m.loglik.append(lambda v, f=f, s=s, y=y: lp(y, f(v), s))
        return y

    procs = set()

    def proc(name, text):
        if name not in procs:
            procs.add(name)
            m.lines.append(f"[assume {name} {text}]")

    n = rnd.randint(3, 30)
    for i in range(n):
        s = r2(rnd.uniform(0.5, 1.5))
        x = r2(rnd.uniform(-2, 2))
        a, b = r2(rnd.uniform(-1.5, 1.5)), r2(rnd.uniform(-1.5, 1.5))
        if not m.nonlinear:
            kind = rnd.choice(["plain", "plain", "proc", "proc2", "twice", "let", "latent", "det", "vector", "if"])
            if kind == "plain":
                text, coef, c = lin(latents)
                y = observe_linear(text, coef, c, s)
                m.lines.append(f"[observe (normal {text} {s}) {y}]")
            elif kind == "proc":
                proc("f", "(lambda (x) (normal (* w x) 0.8))")
                y = observe_linear("", {"w": x}, 0, 0.8)
                m.lines.append(f"[observe (f {x}) {y}]")
            elif kind == "proc2":
                other = rnd.choice(latents)
                proc(f"g_{other}", f"(lambda (x c) (normal (+ (* w x) (* c {other})) 1.2))")
                coef = {"w": x}
                coef[other] = coef.get(other, 0) + a
                y = observe_linear("", coef, 0, 1.2)
                m.lines.append(f"[observe (g_{other} {x} {a}) {y}]")
            elif kind == "twice":
                y = observe_linear("", {"w": a + b}, 0, s)
                m.lines.append(f"[observe (normal (+ (* {a} w) (* w {b})) {s}) {y}]")
            elif kind == "let":
                y = observe_linear("", {"w": a}, x, s)
                m.lines.append(f"[observe (let ((m (* {a} w))) (normal (+ m {x}) {s})) {y}]")
            elif kind == "latent":  # a latent below the border, observed once
                name = f"u{i}"
                m.latents.append(name)
                values[name] = rnd.gauss(a * w, s)
                m.factors.append(({name: 1.0, "w": -a}, 0.0, s))
                y = observe_linear("", {name: 1.0}, 0, 0.7)
                m.lines.append(f"[observe (normal (normal (* {a} w) {s}) 0.7) {y}]")
            elif kind == "det":  # a deterministic value of w read by the data after it
                proc("t", f"(* 2 w)")
                y = observe_linear("", {"w": 2.0}, x, s)
                m.lines.append(f"[observe (normal (+ t {x}) {s}) {y}]")
            elif kind == "vector":
                other = rnd.choice(latents)
                y = observe_linear("", {"w": x} if other == "w" else {"w": x, other: 1.0}, 0, s)
                m.lines.append(f"[observe (normal (+ (* (lookup (vector w {other}) 0) {x}) "
                               f"{'0' if other == 'w' else f'(lookup (vector w {other}) 1)'}) {s}) {y}]")
            else:  # a branch on a constant: the read of w is in the branch's family
                y = observe_linear("", {"w": a}, 0, s)
                m.lines.append(f"[observe (normal (if (> {x} 0) (* {a} w) (* w {a})) {s}) {y}]")
        else:
            kind = rnd.choice(["plain", "branch", "branch", "exp", "logistic", "mem", "heavy"])
            if kind == "heavy":  # a likelihood with heavier tails than the normal's
                dist, lp = rnd.choice([("laplace", log_laplace), ("student_t 4", log_student_t4)])
                y = observe_w("", lambda v, a=a, x=x: a * v + x, s, lp)
                m.lines.append(f"[observe ({dist} (+ (* {a} w) {x}) {s}) {y}]")
            elif kind == "plain":
                y = observe_w("", lambda v, a=a, x=x: a * v + x, s)
                m.lines.append(f"[observe (normal (+ (* {a} w) {x}) {s}) {y}]")
            elif kind == "branch":  # brush: the branch taken depends on w
                k = r2(rnd.uniform(m0 - s0, m0 + s0))
                y = observe_w("", lambda v, a=a, b=b, k=k: a * v if v > k else b * v + 1, s)
                m.lines.append(f"[observe (normal (if (> w {k}) (* {a} w) (+ (* {b} w) 1)) {s}) {y}]")
            elif kind == "exp":
                y = observe_w("", lambda v, a=a: math.exp(0.4 * v) * a, s)
                m.lines.append(f"[observe (normal (* (exp (* 0.4 w)) {a}) {s}) {y}]")
            elif kind == "logistic":
                y = observe_w("", lambda v, a=a: 3 * a / (1 + math.exp(-v)), s)
                m.lines.append(f"[observe (normal (* 3 {a} (logistic w)) {s}) {y}]")
            elif kind == "mem":  # a family keyed by w, shared by the data that ask for it
                proc("h", "(mem (lambda (v) (* 0.5 v)))")
                y = observe_w("", lambda v, x=x: 0.5 * v + x, s)
                m.lines.append(f"[observe (normal (+ (h w) {x}) {s}) {y}]")
    if rnd.random() < 0.4:  # rows of a plate
        rows, xs = rnd.randint(2, 40), []
        a = r2(rnd.uniform(0.5, 1.5))
        lines = ["y,x"]
        for _ in range(rows):
            x = r2(rnd.uniform(-2, 2))
            if m.nonlinear:
                y = observe_w("", lambda v, a=a, x=x: a * v * x, 1.0)
            else:
                y = observe_linear("", {"w": a * x}, 0, 1.0)
            lines.append(f"{y},{x}")
        m.files[f"rows_{seed}.csv"] = "\n".join(lines) + "\n"
        m.lines.append(f"[assume row (lambda (r) (normal (* {a} (* w (lookup r 0))) 1))]")
        m.lines.append(f'[observe_csv row "rows_{seed}.csv" y]')
    kernels = (KERNELS + Z_KERNELS if "z0" in m.latents else KERNELS) + PGIBBS_KERNELS
    kernel = rnd.choice([k for k in kernels if KERNEL_HAS in k] or kernels).replace("{d}", str(r2(rnd.uniform(0.1, 0.4))))
    if "pgibbs p" in kernel:  # tag w and the z_j in order
        for i, line in enumerate(m.lines):
            for name, block in [("w", 0)] + [(z, int(z[1:]) + 1) for z in m.latents if z.startswith("z")]:
                head = f"[assume {name} "
                if line.startswith(head):
                    m.lines[i] = f"{head}(scope_include 'p {block} {line[len(head):-1]})]"
    return m, kernel


def solve(a, b):
    """x with a x = b, by Gaussian elimination with partial pivoting (a is small and positive definite)."""
    k = len(b)
    a = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        for r in range(k):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][k] / a[i][i] for i in range(k)]


def exact_moments(m):
    """The exact posterior mean and second moment of each query (of each element of the logistic family's w)."""
    if m.logistic:
        mean, var, rows = m.logistic
        steps, half = 240, 6 * math.sqrt(var)
        axes = [[mu - half + 2 * half * i / steps for i in range(steps + 1)] for mu in mean]
        logp, points = [], []
        for a in axes[0]:
            for b in axes[1]:
                lp = -((a - mean[0]) ** 2 + (b - mean[1]) ** 2) / (2 * var)
                for y, x in rows:
                    t = a + b * x
                    lp -= math.log1p(math.exp(-t)) if y else math.log1p(math.exp(t))
                logp.append(lp)
                points.append((a, b))
        top = max(logp)
        p = [math.exp(x - top) for x in logp]
        z = sum(p)
        out = {}
        for i in range(2):
            out[f"w[{i}]"] = (sum(pt[i] * q for pt, q in zip(points, p)) / z,
                              sum(pt[i] ** 2 * q for pt, q in zip(points, p)) / z)
        return out
    if m.nonlinear:
        lo, hi, steps = -12.0, 12.0, 48000
        grid = [lo + (hi - lo) * i / steps for i in range(steps + 1)]
        logp = [sum(term(v) for term in m.loglik) for v in grid]
        top = max(logp)
        p = [math.exp(x - top) for x in logp]
        z = sum(p)
        mean = sum(v * q for v, q in zip(grid, p)) / z
        second = sum(v * v * q for v, q in zip(grid, p)) / z
        return {"w": (mean, second)}
    idx = {n: i for i, n in enumerate(m.latents)}
    k = len(idx)
    prec = [[0.0] * k for _ in range(k)]
    eta = [0.0] * k
    for g, h, s in m.factors:
        for u, gu in g.items():
            eta[idx[u]] += gu * h / s ** 2
            for v, gv in g.items():
                prec[idx[u]][idx[v]] += gu * gv / s ** 2
    mean = solve(prec, eta)
    out = {}
    for q in m.queries:
        e = [0.0] * k
        e[idx[q]] = 1.0
        var = solve(prec, e)[idx[q]]
        out[q] = (mean[idx[q]], var + mean[idx[q]] ** 2)
    return out


def run_one(pprun, seed, outdir):
    model, kernel = generate(seed)
    program = model.vnt(kernel)
    exact = exact_moments(model)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in model.files.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        path, draws = os.path.join(tmp, "model.vnt"), os.path.join(tmp, "draws.csv")
        with open(path, "w") as f:
            f.write(program)
        try:
            proc = subprocess.run([pprun, "--quiet", "--seed", str(seed), "--draws", draws, path],
                                  capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                problems.append(f"pprun exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
            else:
                cols, problem = read_draws(draws, exact.keys(), BURN_IN)
                if problem is not None:
                    problems.append(problem)
                for q, (mean, second) in exact.items() if cols else ():
                    xs = cols[q]
                    for what, ys, want in (("mean", xs, mean), ("second moment", [x * x for x in xs], second)):
                        got, se = sum(ys) / len(ys), batch_means_se(ys)
                        if abs(got - want) > Z * se + 1e-9:
                            problems.append(f"{q} {what}: {got:.4f}, exact {want:.4f}, se {se:.4f} "
                                            f"({abs(got - want) / max(se, 1e-300):.1f} se)")
        except subprocess.TimeoutExpired:
            problems.append("pprun did not finish in 600 s")
    if not problems:
        return None
    os.makedirs(outdir, exist_ok=True)
    kept = os.path.join(outdir, f"continuous_{seed}.vnt")
    with open(kept, "w") as f:
        f.write(f"; pprun --seed {seed}; exact: " +
                ", ".join(f"E[{q}] = {a:.6f}, E[{q}^2] = {b:.6f}" for q, (a, b) in exact.items()) + "\n")
        f.write(program)
    for name, text in model.files.items():
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)
    return f"{kept}: " + "; ".join(problems)


if __name__ == "__main__":
    run_seeds(__doc__, "models", run_one)
