#!/usr/bin/env python3
"""Writes the simulated series (rows t,x) of the state-space examples; the CSVs are committed, this says where they
came from. Each comes from its own random.Random(2014), with h_0 = 0:

- state_space.csv, for examples/state_space.vnt: t = 1..60, h_t ~ N(0.9 h_{t-1}, 0.3), x_t ~ N(h_t, 0.3);
- stochastic_volatility.csv, for examples/stochastic_volatility.vnt, with the parameters of the sublinear-MH
  paper's section 4.3: t = 1..50, h_t ~ N(0.95 h_{t-1}, 0.1), x_t ~ N(0, exp(h_t / 2))."""
# SPDX-License-Identifier: Apache-2.0
import math
import os
import random


def write(name, steps, phi, sig, observe):
    rnd = random.Random(2014)
    h = 0.0
    rows = ["t,x"]
    for t in range(1, steps + 1):
        h = phi * h + sig * rnd.gauss(0, 1)
        rows.append(f"{t},{observe(h, rnd.gauss(0, 1)):.4f}")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w") as f:
        f.write("\n".join(rows) + "\n")


write("state_space.csv", 60, 0.9, 0.3, lambda h, e: h + 0.3 * e)
write("stochastic_volatility.csv", 50, 0.95, 0.1, lambda h, e: math.exp(h / 2) * e)
