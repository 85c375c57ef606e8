#!/usr/bin/env python3
"""The reference posteriors that examples/regression.vnt, examples/mixture.vnt, examples/hmm.vnt,
examples/state_space.vnt, examples/dpm.vnt, examples/dpm_collapsed.vnt, examples/lda.vnt and examples/pumps.vnt
state in their comments, and
tests/cli/examples.sh checks their summaries against: posterior means and sds by numerical integration (midpoint rule on a grid wide enough that
widening it changes no printed digit), for the hidden Markov model by the forward-backward recursions, for the
state-space model by the Kalman smoother on a grid of its coefficient, and for the Dirichlet process mixtures by
summing over every partition of their points (for the collapsed one, with its concentration integrated out on a
grid of its logarithm), for the topic model by summing over every assignment of topics, for the pumps on a grid of
the logarithms of the two hyperparameters (the failure rates integrated out). Plain Python, no numpy: about 15 s.

    python3 scripts/example_references.py
"""
# SPDX-License-Identifier: Apache-2.0
import math

# examples/regression.vnt: w ~ N(0, I_3), y ~ bernoulli(logistic(w0 + w1 x1 + w2 x2)).
REGRESSION = [((-0.3, 0.5), 0), ((1.1, 0.5), 1), ((1.1, 0.4), 1), ((-0.3, 0.2), 1), ((-1.7, 0.9), 0),
              ((0.2, 1.4), 0), ((-0.9, -0.5), 0), ((1.9, 0.6), 1), ((0.3, 0.4), 1), ((0.3, -0.6), 1),
              ((-0.6, -0.7), 0), ((0.3, 0.1), 1), ((-0.4, -1.0), 1), ((-0.9, -0.6), 0), ((0.4, -1.5), 1),
              ((-1.1, -0.6), 0), ((-0.1, -0.8), 0), ((0.8, 0.7), 0), ((0.7, 0.9), 1), ((-0.8, -1.5), 0),
              ((0.6, -0.6), 1), ((-1.1, -0.7), 0), ((1.3, -2.0), 1), ((-0.2, -0.3), 0)]

# examples/mixture.vnt: p ~ beta(1, 1), mu_k ~ N(0, 3), z_i ~ bernoulli(p), y_i ~ N(mu_{z_i}, 1).
MIXTURE = [3.2, -2.4, 2.5, 3.6, -2.8, -1.2, 2.2, -1.5, -3.4, 4.4, 2.7, 2.5]


# examples/dpm.vnt: z ~ CRP(1), mu_k ~ N(0, 3), y_i ~ N(mu_{z_i}, 1).
DPM = [-2.3, -1.9, -2.8, 0.6, 2.4, 2.9, 1.8, 3.3]

# examples/dpm_collapsed.vnt: alpha ~ gamma(1, 1), z ~ CRP(alpha), each table's feature f a collapsed coin of
# weight beta(0.5, 0.5), item i's features flips of its table's coins.
ITEMS = [(1, 1, 0, 0), (1, 1, 0, 1), (1, 0, 0, 0), (1, 1, 0, 0), (0, 0, 1, 1), (0, 1, 1, 1), (0, 0, 1, 1),
         (0, 0, 0, 1)]

# examples/lda.vnt: two topics, each document's topic mix ~ dirichlet(0.5, 0.5) and each topic's words ~
# dirichlet(0.1, 0.1, 0.1, 0.1), both integrated out; token n of document d is DOCS[d][n].
DOCS = [(0, 0, 1), (2, 3, 3), (0, 1, 3)]

# examples/pumps.vnt: pump i failed PUMPS[i][0] times in PUMPS[i][1] thousand hours; its rate ~ gamma(alpha, beta),
# alpha ~ gamma(1, 1), beta ~ gamma(0.1, 1).
PUMPS = [(5, 94.3), (1, 15.7), (5, 62.9), (14, 126.0), (3, 5.24), (19, 31.4), (1, 1.05), (1, 1.05), (4, 2.1),
         (22, 10.5)]

# examples/hmm.vnt: s_0 ~ flip(0.5), s_t ~ flip(0.9 if s_{t-1} else 0.2), y_t ~ N(1 if s_t else -1, 1.2).
HMM = [0.8, 0.6, 1.1, -0.6, 0.9, 1.3, 1.9, 0.0, 0.5, -1.4, -1.6, -3.6, -2.7, 0.3, -3.6, 2.0, 1.4, 0.6, 1.6, 1.6]


def grid(lo, hi, n):
    h = (hi - lo) / n
    return [lo + (i + 0.5) * h for i in range(n)]


def softplus(z):
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


def normal_pdf(x, mean, sd):
    return math.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


class Moments:
    def __init__(self):
        self.weight = 0.0
        self.sums = {}

    def add(self, weight, **values):
        self.weight += weight
        for name, v in values.items():
            s = self.sums.setdefault(name, [0.0, 0.0])
            s[0] += weight * v
            s[1] += weight * v * v

    def show(self, example):
        for name, (s1, s2) in self.sums.items():
            mean = s1 / self.weight
            print(f"{example} {name}: mean {mean:.4f} sd {math.sqrt(s2 / self.weight - mean * mean):.4f}")


def regression():
    m = Moments()
    points = grid(-3.5, 5.0, 70)
    for a in points:
        for b in points:
            for c in points:
                log_p = -0.5 * (a * a + b * b + c * c)
                for (x1, x2), y in REGRESSION:
                    z = a + b * x1 + c * x2
                    log_p -= softplus(-z) if y else softplus(z)
                m.add(math.exp(log_p), **{"w[0]": a, "w[1]": b, "w[2]": c})
    m.show("regression.vnt")


def mixture():
    m = Moments()
    means = grid(-12.0, 12.0, 150)
    like = [[normal_pdf(y, mu, 1.0) for y in MIXTURE] for mu in means]
    for i, a in enumerate(means):
        for j, b in enumerate(means):
            prior = normal_pdf(a, 0, 3) * normal_pdf(b, 0, 3)
            for p in grid(0.0, 1.0, 100):
                w = prior
                for k in range(len(MIXTURE)):  # z_i summed out
                    w *= (1 - p) * like[i][k] + p * like[j][k]
                m.add(w, low=min(a, b), high=max(a, b), w_high=p if a < b else 1 - p)
    m.show("mixture.vnt")


def hmm():
    """P(s_t = true | y) by the forward-backward recursions (exact: a sum over the 2^20 state sequences)."""
    def move(prev, now):
        p = 0.9 if prev else 0.2
        return p if now else 1 - p

    def emit(t, st):
        return normal_pdf(HMM[t], 1.0 if st else -1.0, 1.2)

    n = len(HMM)
    fwd = [{st: 0.5 * emit(0, st) for st in (False, True)}]
    for t in range(1, n):
        fwd.append({st: emit(t, st) * sum(fwd[-1][pr] * move(pr, st) for pr in (False, True))
                    for st in (False, True)})
    bwd = [{False: 1.0, True: 1.0}]
    for t in range(n - 2, -1, -1):
        bwd.insert(0, {st: sum(move(st, nx) * emit(t + 1, nx) * bwd[0][nx] for nx in (False, True))
                       for st in (False, True)})
    for t in (3, 8, 13):
        on = fwd[t][True] * bwd[t][True]
        p = on / (on + fwd[t][False] * bwd[t][False])
        print(f"hmm.vnt s{t}: mean {p:.4f} sd {math.sqrt(p * (1 - p)):.4f}")


def state_space():
    """phi ~ beta(5, 1), h_0 = 0, h_t ~ N(phi h_{t-1}, 0.3), x_t ~ N(h_t, 0.3): for each phi on a grid of (0, 1), the
    Kalman filter's likelihood weighs the Rauch-Tung-Striebel smoother's moments of h_1 and h_60."""
    import csv
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "examples", "data", "state_space.csv")) as f:
        xs = [float(r["x"]) for r in csv.DictReader(f)]
    q, r = 0.3 ** 2, 0.3 ** 2
    m_phi = Moments()
    moments = {1: Moments(), len(xs): Moments()}
    for phi in grid(0.0, 1.0, 2000):
        m, p, log_like = 0.0, 0.0, 4 * math.log(phi)  # beta(5, 1): density 5 phi^4
        mf, pf, mp, pp = [], [], [], []
        for x in xs:
            m, p = phi * m, phi * phi * p + q
            mp.append(m), pp.append(p)
            log_like += math.log(normal_pdf(x, m, math.sqrt(p + r)))
            k = p / (p + r)
            m, p = m + k * (x - m), (1 - k) * p
            mf.append(m), pf.append(p)
        ms, ps = mf[:], pf[:]
        for t in range(len(xs) - 2, -1, -1):
            j = pf[t] * phi / pp[t + 1]
            ms[t] = mf[t] + j * (ms[t + 1] - mp[t + 1])
            ps[t] = pf[t] + j * j * (ps[t + 1] - pp[t + 1])
        w = math.exp(log_like + 60)  # a constant shift keeps the weights within range
        m_phi.add(w, phi=phi)
        for t, mo in moments.items():  # E[h], and E[h^2] = var + mean^2, mixed over phi
            mo.weight += w
            s = mo.sums.setdefault(f"h_{t}", [0.0, 0.0])
            s[0] += w * ms[t - 1]
            s[1] += w * (ps[t - 1] + ms[t - 1] ** 2)
    m_phi.show("state_space.vnt")
    for mo in moments.values():
        mo.show("state_space.vnt")


def partitions(n):
    """Every partition of 0..n-1, as lists of blocks."""
    if n == 0:
        yield []
        return
    for p in partitions(n - 1):
        for k in range(len(p)):
            yield p[:k] + [p[k] + [n - 1]] + p[k + 1:]
        yield p + [[n - 1]]


def dpm():
    """Every partition of the points (4140), weighed by the CRP's Ewens prior and each cluster's marginal likelihood
    (mu integrated out); the mean of point 0's component given its cluster, N(v s / (1 + v n), v / (1 + v n))."""
    alpha, v = 1.0, 9.0

    def log_marginal(c):
        n, s, q = len(c), sum(DPM[i] for i in c), sum(DPM[i] ** 2 for i in c)
        return -0.5 * n * math.log(2 * math.pi) - 0.5 * math.log1p(v * n) - 0.5 * (q - v * s * s / (1 + v * n))

    m = Moments()
    for p in partitions(len(DPM)):
        w = math.exp(len(p) * math.log(alpha) + sum(math.lgamma(len(c)) + log_marginal(c) for c in p))
        c0 = next(c for c in p if 0 in c)
        mean, var = v * sum(DPM[i] for i in c0) / (1 + v * len(c0)), v / (1 + v * len(c0))
        z = {i: k for k, c in enumerate(p) for i in c}
        m.add(w, K=len(p), same01=float(z[0] == z[1]), same03=float(z[0] == z[3]), same34=float(z[3] == z[4]))
        s = m.sums.setdefault("mu_z0", [0.0, 0.0])  # E[mu] and E[mu^2] = var + mean^2, mixed over partitions
        s[0] += w * mean
        s[1] += w * (var + mean * mean)
    m.show("dpm.vnt")


def dpm_collapsed():
    """Every partition of the items, weighed by each table's beta-binomial marginal likelihood of each feature and
    prod (n_k - 1)! times the Ewens factor alpha^K Gamma(alpha) / Gamma(alpha + n) integrated against alpha's prior
    (midpoint rule in log alpha on [-25, 8]: the integrand is alpha^(K+1) near 0 and e^-alpha alpha^(K-n) far
    out); alpha's moments from the same integrals."""
    n, a, b = len(ITEMS), 0.5, 0.5
    us = grid(-25, 8, 40000)
    du = 33 / 40000

    def ewens(k, power):  # integral of alpha^power e^-alpha alpha^K Gamma(alpha) / Gamma(alpha + n) d alpha
        return sum(math.exp((k + power + 1) * u - math.exp(u) + math.lgamma(math.exp(u)) -
                            math.lgamma(math.exp(u) + n)) for u in us) * du

    mass = {k: [ewens(k, p) for p in range(3)] for k in range(1, n + 1)}

    def log_marginal(c):
        lw = 0.0
        for f in range(len(ITEMS[0])):
            h = sum(ITEMS[i][f] for i in c)
            t = len(c) - h
            lw += math.lgamma(a + h) + math.lgamma(b + t) - math.lgamma(a + b + h + t)
            lw -= math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return lw

    m = Moments()
    alpha = [0.0, 0.0]
    for p in partitions(n):
        base = math.exp(sum(math.lgamma(len(c)) + log_marginal(c) for c in p))
        w = base * mass[len(p)][0]
        z = {i: k for k, c in enumerate(p) for i in c}
        m.add(w, K=len(p), same01=float(z[0] == z[1]), same23=float(z[2] == z[3]), same34=float(z[3] == z[4]))
        alpha[0] += base * mass[len(p)][1]
        alpha[1] += base * mass[len(p)][2]
    m.sums["alpha"] = alpha
    m.show("dpm_collapsed.vnt")


def lda():
    """Every assignment of the 9 tokens to the 2 topics, weighed by the Dirichlet-multinomial probability of each
    document's topics and of each topic's words (the documents' mixes and the topics integrated out)."""
    def log_dm(counts, a):  # a sequence with these counts, under a symmetric dirichlet(a) integrated out
        k, n = len(counts), sum(counts)
        return (math.lgamma(k * a) - math.lgamma(k * a + n) +
                sum(math.lgamma(a + c) - math.lgamma(a) for c in counts))

    tokens = [(d, n) for d in range(len(DOCS)) for n in range(len(DOCS[d]))]
    m = Moments()
    for bits in range(2 ** len(tokens)):
        z = {t: (bits >> i) & 1 for i, t in enumerate(tokens)}
        lw = 0.0
        for d in range(len(DOCS)):
            lw += log_dm([sum(1 for n in range(3) if z[(d, n)] == k) for k in range(2)], 0.5)
        for k in range(2):
            lw += log_dm([sum(1 for t in tokens if z[t] == k and DOCS[t[0]][t[1]] == w) for w in range(4)], 0.1)
        m.add(math.exp(lw), same00_01=float(z[(0, 0)] == z[(0, 1)]), same00_11=float(z[(0, 0)] == z[(1, 1)]),
              same11_12=float(z[(1, 1)] == z[(1, 2)]), same20_22=float(z[(2, 0)] == z[(2, 2)]))
    m.show("lda.vnt")


def pumps():
    """alpha and beta on a midpoint grid of their logarithms (u = log alpha in [-7, 4], v = log beta in [-12, 5]),
    each pump's rate integrated out: its count's negative binomial marginal likelihood
    Gamma(alpha + x) / (Gamma(alpha) x!) beta^alpha t^x / (beta + t)^(alpha + x). The rates' posterior means given
    alpha and beta, (alpha + x) / (beta + t), averaged over them."""
    m = Moments()
    for u in grid(-7.0, 4.0, 700):
        a = math.exp(u)
        lg_a = math.lgamma(a)
        base = [math.lgamma(a + x) - lg_a - math.lgamma(x + 1) + x * math.log(t) for x, t in PUMPS]
        for v in grid(-12.0, 5.0, 700):
            b = math.exp(v)
            log_p = -a + (0.1 - 1) * v - b  # the priors: gamma(1, 1) in alpha, gamma(0.1, 1) in beta
            for (x, t), c in zip(PUMPS, base):
                log_p += c + a * v - (a + x) * math.log(b + t)
            m.add(math.exp(log_p + u + v), alpha=a, beta=b, **{"(rate1)": (a + 5) / (b + 94.3),
                                                                "(rate10)": (a + 22) / (b + 10.5)})
    m.show("pumps.vnt")


if __name__ == "__main__":
    regression()
    mixture()
    hmm()
    state_space()
    dpm()
    dpm_collapsed()
    lda()
    pumps()
