#!/usr/bin/env python3
"""The reference posteriors that examples/regression.vnt, examples/mixture.vnt and examples/hmm.vnt state in their
comments, and tests/cli/examples.sh checks their summaries against: posterior means and sds by numerical
integration (midpoint rule on a grid wide enough that widening it changes no printed digit), and for the hidden
Markov model by the forward-backward recursions. Plain Python, no numpy: about 15 s.

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


if __name__ == "__main__":
    regression()
    mixture()
    hmm()
