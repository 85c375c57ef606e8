#!/usr/bin/env python3
"""Writes state_space.csv (t,x for t = 1..60) for examples/state_space.vnt: h_0 = 0, h_t ~ N(0.9 h_{t-1}, 0.3),
x_t ~ N(h_t, 0.3), from Python's random.Random(2014). The CSV is committed; this says where it came from."""
# SPDX-License-Identifier: Apache-2.0
import os
import random

rnd = random.Random(2014)
h = 0.0
rows = ["t,x"]
for t in range(1, 61):
    h = 0.9 * h + 0.3 * rnd.gauss(0, 1)
    rows.append(f"{t},{h + 0.3 * rnd.gauss(0, 1):.4f}")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "state_space.csv"), "w") as f:
    f.write("\n".join(rows) + "\n")
