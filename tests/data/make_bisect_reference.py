#!/usr/bin/python3
"""Generates tests/data/bisect_reference.json: reference values for the
bisect classification in src/analysis/bisect.cpp (docs/bisect.md).

Run with Debian 12's interpreter (the one that has scipy):
    /usr/bin/python3 tests/data/make_bisect_reference.py > tests/data/bisect_reference.json

Every value comes from numpy/scipy calls written out below, never from kbench
code. The exact calls:
  classify_row     logs with numpy.log; means numpy.mean, variances
                   numpy.var(ddof=1); s = sign(mean log B - mean log G);
                   d = s (mean log C - (mean log G + mean log B) / 2);
                   se^2 = v_C/n_C + (v_G/n_G + v_B/n_B)/4;
                   df = se^4 / sum(term_i^2 / (n_i - 1)) (Welch-Satterthwaite);
                   level = alpha / max_looks; interval d -+ t_ppf(1 - level/2, df) se;
                   fraction = 0.5 + d / |mean log B - mean log G| (and the interval's ends)
  check_endpoints  Welch: scipy.stats.ttest_ind(log B, log G, equal_var=False)
                   gives the statistic; se = |diff / statistic|, df written out
                   (Welch-Satterthwaite); interval diff -+ t_ppf(1 - alpha/2, df) se
t_ppf is scipy.stats.t.ppf polished with Newton steps on t.cdf / t.sf, as in
make_stats_reference.py (scipy 1.10's t.ppf alone is off by up to ~2e-9).
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

rng = np.random.default_rng(20261201)




def sessions(n, level, cv):
    return [float(x) for x in level * np.exp(rng.normal(0, cv, n))]


def classify(g, b, c, alpha, looks):
    lg, lb, lc = np.log(g), np.log(b), np.log(c)
    gap = np.mean(lb) - np.mean(lg)
    s = 1.0 if gap > 0 else -1.0
    d = s * (np.mean(lc) - (np.mean(lg) + np.mean(lb)) / 2)
    terms = [(np.var(lc, ddof=1) / len(lc), len(lc) - 1),
             (np.var(lg, ddof=1) / len(lg) / 4, len(lg) - 1),
             (np.var(lb, ddof=1) / len(lb) / 4, len(lb) - 1)]
    var = sum(t for t, _ in terms)
    se = math.sqrt(var)
    df = var * var / sum(t * t / k for t, k in terms)
    level = alpha / looks
    half = t_ppf(1 - level / 2, df) * se
    low, high = d - half, d + half
    width = abs(gap)
    side = "bad" if low > 0 else "good" if high < 0 else "unsettled"
    return {"good": g, "bad": b, "candidate": c, "alpha": alpha, "max_looks": looks,
            "position": float(d), "standard_error": se, "df": float(df), "level": level,
            "low": float(low), "high": float(high), "fraction": float(0.5 + d / width),
            "fraction_low": float(0.5 + low / width), "fraction_high": float(0.5 + high / width), "side": side}


def endpoints(g, b, lower_is_better, alpha):
    lg, lb = np.log(g), np.log(b)
    diff = float(np.mean(lb) - np.mean(lg))
    statistic = st.ttest_ind(lb, lg, equal_var=False).statistic
    se = abs(diff / statistic)
    vg, vb = np.var(lg, ddof=1) / len(lg), np.var(lb, ddof=1) / len(lb)
    df = (vg + vb) ** 2 / (vg * vg / (len(lg) - 1) + vb * vb / (len(lb) - 1))
    half = t_ppf(1 - alpha / 2, df) * se
    low, high = diff - half, diff + half
    differs = low > 0 if lower_is_better else high < 0
    return {"good": g, "bad": b, "lower_is_better": lower_is_better, "alpha": alpha, "log_change": diff,
            "standard_error": float(se), "df": float(df), "low": float(low), "high": float(high),
            "change_pct": math.expm1(diff) * 100, "differs": bool(differs)}


rows = []
for name, g, b, c, alpha, looks in [
    ("candidate at good", sessions(3, 100.0, 0.01), sessions(3, 110.0, 0.01), sessions(3, 100.0, 0.01), 0.01, 10),
    ("candidate at good, more sessions", sessions(6, 100.0, 0.01), sessions(6, 110.0, 0.01), sessions(6, 100.0, 0.01), 0.01, 10),
    ("candidate at bad", sessions(4, 100.0, 0.02), sessions(3, 110.0, 0.02), sessions(5, 110.0, 0.02), 0.01, 10),
    ("candidate midway", sessions(3, 100.0, 0.02), sessions(3, 110.0, 0.02), sessions(3, 104.9, 0.02), 0.01, 10),
    ("higher is better: bad is lower", sessions(5, 5e6, 0.03), sessions(5, 4e6, 0.03), sessions(2, 4e6, 0.03), 0.05, 4),
    ("one look, wide noise", sessions(2, 10.0, 0.2), sessions(2, 12.0, 0.2), sessions(2, 10.0, 0.2), 0.05, 1),
    ("levels 1e-9", sessions(6, 1e-9, 0.05), sessions(6, 2e-9, 0.05), sessions(12, 1.9e-9, 0.05), 0.01, 12),
]:
    row = classify(g, b, c, alpha, looks)
    row["name"] = name
    rows.append(row)

checks = []
for name, g, b, lower, alpha in [
    ("regression in ns", sessions(3, 100.0, 0.01), sessions(3, 110.0, 0.01), True, 0.01),
    ("improvement in ns is not a regression", sessions(3, 110.0, 0.01), sessions(3, 100.0, 0.01), True, 0.01),
    ("regression in ops/sec", sessions(4, 5e6, 0.02), sessions(4, 4.5e6, 0.02), False, 0.05),
    ("too close to tell", sessions(3, 100.0, 0.05), sessions(3, 101.0, 0.05), True, 0.01),
]:
    check = endpoints(g, b, lower, alpha)
    check["name"] = name
    checks.append(check)

doc = {
    "provenance": {
        "generator": "tests/data/make_bisect_reference.py",
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "rng": "numpy.random.default_rng(20261201)",
        "method": "position d = s (mean log C - (mean log G + mean log B)/2), se^2 = v_C/n_C + (v_G/n_G + v_B/n_B)/4, "
                  "Welch-Satterthwaite df, two-sided interval at alpha/max_looks",
    },
    "classify_row": rows,
    "check_endpoints": checks,
}
json.dump(doc, sys.stdout, indent=1, allow_nan=False)
sys.stdout.write("\n")
