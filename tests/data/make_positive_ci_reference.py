#!/usr/bin/python3
"""Generates tests/data/positive_ci_reference.json: reference values for
kbench::stats::positive_mean_ci (src/stats/sessions.cpp), the per-swprofile
confidence interval of `kbench trend`.

Run with Debian 12's interpreter (the one that has scipy):
    /usr/bin/python3 tests/data/make_positive_ci_reference.py > tests/data/positive_ci_reference.json

Every value comes from numpy/scipy calls written out below, never from kbench
code:
  log scale (every value > 0): the modified Cox interval for the mean of a
      log-normal sample, Olsson U. (2005), "Confidence Intervals for the Mean
      of a Log-Normal Distribution", Journal of Statistics Education 13(1):
          y = numpy.log(v), ybar = mean(y), s2 = var(y, ddof=1), n = len(v)
          exp(ybar + s2/2 -+ t_ppf(0.5 + c/2, n - 1) * sqrt(s2/n + s2^2 / (2 (n - 1))))
  otherwise: the plain t-interval mean -+ t_ppf(0.5 + c/2, n - 1) * scipy.stats.sem(v)
Each case also carries the plain t-interval (`t_low`, `t_high`), which the
test uses to show that the old formula goes below zero where the new one
does not.
t_ppf is scipy.stats.t.ppf polished with Newton steps (t_quantile.py).
"""
import datetime
import json
import math
import platform
import sys

import numpy as np
import scipy
import scipy.stats as st

from t_quantile import t_ppf  # shared by the generators


def cox(values, confidence):
    y = np.log(np.asarray(values, dtype=float))
    n = len(y)
    s2 = float(np.var(y, ddof=1))
    centre = float(np.mean(y)) + s2 / 2
    half = t_ppf(0.5 + confidence / 2, n - 1) * math.sqrt(s2 / n + s2 * s2 / (2 * (n - 1)))
    return math.exp(centre - half), math.exp(centre + half)


def plain_t(values, confidence):
    v = np.asarray(values, dtype=float)
    half = t_ppf(0.5 + confidence / 2, len(v) - 1) * float(st.sem(v))
    return float(np.mean(v)) - half, float(np.mean(v)) + half


rng = np.random.default_rng(20261202)
cases = [
    # The issue-14 shape: ten p99.9 session means of a syscall row, one of
    # them from a session with a preemption burst (ns).
    ("heavy right tail, 10 sessions", [412.0, 398.5, 405.2, 1890.0, 401.7, 399.9, 407.3, 403.1, 396.8, 5120.0], 0.95),
    ("two sessions far apart", [250.0, 2500.0], 0.95),
    ("three sessions, one 20x", [100.0, 102.0, 2000.0], 0.95),
    ("quiet row, 5 sessions", [123.4, 123.9, 122.8, 124.1, 123.5], 0.95),
    ("quiet row, 90% level", [1.0e6, 1.01e6, 0.995e6, 1.003e6], 0.90),
    ("log-normal draws, 8 sessions", [float(x) for x in rng.lognormal(5.0, 1.2, 8)], 0.95),
    ("log-normal draws, 30 sessions, 99%", [float(x) for x in rng.lognormal(2.0, 0.5, 30)], 0.99),
    ("equal values", [7.5, 7.5, 7.5], 0.95),
    ("a zero: no log scale", [0.0, 3.0, 4.0, 5.0], 0.95),
    ("a negative value: no log scale", [-2.0, 3.0, 4.0], 0.95),
]

rows = []
for name, values, confidence in cases:
    t_low, t_high = plain_t(values, confidence)
    log_scale = all(v > 0 for v in values)
    low, high = cox(values, confidence) if log_scale else (t_low, t_high)
    rows.append({"name": name, "values": values, "confidence": confidence, "log_scale": log_scale,
                 "low": low, "high": high, "t_low": t_low, "t_high": t_high})

doc = {
    "provenance": {
        "generator": "tests/data/make_positive_ci_reference.py",
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "rng": "numpy.random.default_rng(20261202)",
        "method": "modified Cox interval, Olsson U. (2005), J. Statistics Education 13(1): "
                  "exp(ybar + s2/2 -+ t(0.5 + c/2, n - 1) sqrt(s2/n + s2^2/(2(n - 1)))), y = log v",
    },
    "positive_mean_ci": rows,
}
json.dump(doc, sys.stdout, indent=1, allow_nan=False)
sys.stdout.write("\n")
