#!/usr/bin/python3
"""Generates tests/data/stats_reference.json: reference values for src/stats.

Run with Debian 12's interpreter (the one that has scipy):
    /usr/bin/python3 tests/data/make_stats_reference.py > tests/data/stats_reference.json

Every value comes from scipy/numpy calls written out below, never from kbench
code. The exact calls per section:
  summarize           numpy mean, median, std(ddof=1), min, max;
                      mean -+ t_ppf(0.975, n-1) * scipy.stats.sem(x)
                      (what t.interval computes, also for constant data)
  t_quantile          t_ppf(p, df): scipy.stats.t.ppf polished with Newton steps on
                      scipy.stats.t.cdf/sf (see t_ppf), cross-checked with R's qt;
                      df = inf: scipy.stats.norm.ppf. Every other t quantile
                      below (CIs, Fieller, noise floor) uses t_ppf too.
  mean_ci_halfwidth   t_ppf(0.5 + c/2, n-1) * s / sqrt(n)
  welch               scipy.stats.ttest_ind(a, b, equal_var=False); df recomputed
                      with scipy's own formula (_unequal_var_ttest_denom)
  mwu                 scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
                      method='auto'); the method auto chose is recorded from
                      scipy.stats._mannwhitneyu._mwu_choose_method
  (welch and mwu are cross-checked with R's t.test and wilcox.test when
  Rscript is installed; the result is recorded in the provenance)
  ci95_disjoint       from the CI bounds above
  bh                  straightforward numpy Benjamini-Hochberg (scipy 1.10 has no
                      false_discovery_control), cross-checked with R's
                      p.adjust(method = "BH") when Rscript is installed
  relative_change_ci  Fieller's theorem, Welch-Satterthwaite df, t from t_ppf;
                      the quadratic solved with numpy.roots
  session_variance    one-way random-effects ANOVA moment estimates in numpy
  noise_floor         (t_ppf(1-alpha/2, df) + t_ppf(power, df)) * sqrt(va+vb) * 100
  geometric_mean      scipy.stats.gmean over the non-NaN values

JSON has no NaN or infinity: NaN is written as null, infinities as the strings
"inf" and "-inf".
"""
import datetime
import json
import math
import platform
import shutil
import subprocess
import sys
import warnings

import numpy as np
import scipy
import scipy.stats as st

from t_quantile import t_ppf  # shared by the generators
from scipy.stats import _mannwhitneyu as scipy_mwu

# The constant-sample cases make scipy warn about precision loss in the
# moments; the values (NaN or +-inf) are what the cases are about.
warnings.filterwarnings("ignore", category=RuntimeWarning)

rng = np.random.default_rng(20261129)




def enc(x):
    """A float for JSON: NaN -> None, +-inf -> strings."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encl(xs):
    return [enc(x) for x in xs]


def normal(n, mean, cv):
    return list(rng.normal(mean, abs(mean) * cv, n))


# ---------------------------------------------------------------- summarize
summary_inputs = {
    "empty": [],
    "one value": [42.0],
    "two values": [1.0, 2.0],
    "odd count": [5.0, 1.0, 4.0, 2.0, 3.0],
    "even count": [4.0, 1.0, 3.0, 2.0],
    "constant": [3.0, 3.0, 3.0, 3.0],
    "negative mean": [-10.0, -12.0, -11.5, -9.0],
    "realistic cv 1%": normal(10, 250.0, 0.01),
    "realistic cv 3%": normal(30, 1.5e6, 0.03),
    "huge 1e12": normal(10, 1e12, 0.002),
    "tiny 1e-9": normal(10, 1e-9, 0.05),
    "large n": normal(1000, 7.0, 0.2),
    "ties": [2.0, 2.0, 3.0, 3.0, 3.0, 5.0],
}
summaries = []
summary_of = {}
for name, x in summary_inputs.items():
    a = np.array(x, dtype=float)
    n = len(a)
    row = {"name": name, "values": encl(a), "count": n}
    if n == 0:
        vals = dict(mean=math.nan, median=math.nan, stddev=math.nan, cv=math.nan,
                    min=math.nan, max=math.nan, ci95_low=math.nan, ci95_high=math.nan)
    else:
        mean = float(np.mean(a))
        vals = dict(mean=mean, median=float(np.median(a)), min=float(np.min(a)),
                    max=float(np.max(a)))
        if n >= 2:
            sd = float(np.std(a, ddof=1))
            vals["stddev"] = sd
            vals["cv"] = sd / abs(mean)
            # t.interval(0.95, n-1, loc=mean, scale=sem) gives the same bounds but
            # refuses scale 0 (NaN for constant data); the interval is then the point.
            half = t_ppf(0.975, n - 1) * float(st.sem(a))
            vals["ci95_low"], vals["ci95_high"] = mean - half, mean + half
        else:
            vals.update(stddev=math.nan, cv=math.nan, ci95_low=math.nan, ci95_high=math.nan)
    for k, v in vals.items():
        row[k] = enc(v)
    summaries.append(row)
    summary_of[name] = vals | {"count": n}

# ---------------------------------------------------------------- t quantiles
t_quantiles = []
for df in [1, 2, 3.5, 9, 18.7, 29, 100, 1e6, math.inf]:
    for p in [0.975, 0.995, 0.5, 0.025, 0.8, 0.999999, 1e-10]:
        v = t_ppf(p, df)
        t_quantiles.append({"p": p, "df": enc(df), "value": enc(v)})

halfwidths = []
for s, n, c in [(1.0, 2, 0.95), (2.5, 10, 0.95), (0.01, 30, 0.99), (1e12, 5, 0.9),
                (3e-9, 1000, 0.95), (0.0, 7, 0.95)]:
    v = t_ppf(0.5 + c / 2, n - 1) * s / math.sqrt(n)
    halfwidths.append({"stddev": s, "count": n, "confidence": c, "value": enc(v)})

# ---------------------------------------------------------------- Welch


def welch_df(a, b):
    """scipy 1.10 _unequal_var_ttest_denom, including its NaN -> 1 rule."""
    n1, n2 = len(a), len(b)
    vn1, vn2 = np.var(a, ddof=1) / n1, np.var(b, ddof=1) / n2
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1) + vn2 ** 2 / (n2 - 1))
    return 1.0 if np.isnan(df) else float(df)


base10 = normal(10, 1000.0, 0.01)
welch_inputs = {
    "2% shift n=10": (base10, normal(10, 1020.0, 0.01)),
    "no shift n=10": (normal(10, 50.0, 0.02), normal(10, 50.0, 0.02)),
    "unequal sizes 5 vs 12": (normal(5, 10.0, 0.05), normal(12, 10.4, 0.02)),
    "n=2 vs n=2": ([1.0, 2.0], [3.0, 5.0]),
    "n=2 vs n=30": ([100.0, 101.0], normal(30, 103.0, 0.01)),
    "one side constant": ([7.0, 7.0, 7.0, 7.0], [7.1, 6.9, 7.3, 7.2, 7.4]),
    "both constant, different": ([5.0, 5.0, 5.0], [6.0, 6.0]),
    "both constant, different, b lower": ([6.0, 6.0, 6.0], [5.0, 5.0, 5.0, 5.0]),
    "both constant, identical": ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0, 5.0]),
    "identical samples": (base10, list(base10)),
    "huge 1e12": (normal(10, 1e12, 0.002), normal(10, 1.001e12, 0.002)),
    "tiny 1e-9": (normal(8, 1e-9, 0.05), normal(9, 1.08e-9, 0.05)),
    "very significant": (normal(20, 100.0, 0.001), normal(20, 110.0, 0.001)),
    "large n": (normal(200, 5.0, 0.1), normal(300, 5.02, 0.1)),
    "ties": ([1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 3.0, 4.0, 4.0]),
    "one sample a side": ([1.0], [2.0, 3.0]),
    "empty side": ([], [2.0, 3.0]),
}
welch = []
for name, (a, b) in welch_inputs.items():
    row = {"name": name, "a": encl(a), "b": encl(b)}
    if len(a) < 2 or len(b) < 2:
        row.update(valid=False, reason="needs at least 2 samples per side",
                   statistic=None, df=None, p_value=None)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            res = st.ttest_ind(a, b, equal_var=False)
        t, p = float(res.statistic), float(res.pvalue)
        valid = not math.isnan(p)
        row.update(valid=valid, statistic=enc(t), df=enc(welch_df(a, b) if valid else math.nan),
                   p_value=enc(p))
    welch.append(row)

# ---------------------------------------------------------------- Mann-Whitney U
mwu_inputs = {
    "exact 1 vs 1": ([1.0], [2.0]),
    "exact 1 vs 5": ([3.5], [1.0, 2.0, 3.0, 4.0, 5.0]),
    "exact 2 vs 2": ([1.0, 2.0], [3.0, 4.0]),
    "exact 2 vs 7": ([10.0, 11.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 12.0]),
    "exact 3 vs 4": ([1.1, 2.2, 3.3], [0.5, 4.4, 5.5, 6.6]),
    "exact 5 vs 5 separated": ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]),
    "exact 5 vs 5 interleaved": ([1.0, 3.0, 5.0, 7.0, 9.0], [2.0, 4.0, 6.0, 8.0, 10.0]),
    "exact 7 vs 3": (normal(7, 10.0, 0.1), normal(3, 10.5, 0.1)),
    "exact 7 vs 7": (normal(7, 10.0, 0.1), normal(7, 10.3, 0.1)),
    "exact 7 vs 7 separated": (list(np.arange(1.0, 8.0)), list(np.arange(8.0, 15.0))),
    "exact 6 vs 7 U at centre": ([1.0, 4.0, 5.0, 8.0, 9.0, 12.0], [2.0, 3.0, 6.0, 7.0, 10.0, 11.0, 13.0]),
    "exact 8 vs 8": (normal(8, 3.0, 0.1), normal(8, 3.3, 0.1)),
    "exact 8 vs 40 (one side <= 8)": (normal(8, 3.0, 0.1), normal(40, 3.2, 0.1)),
    "exact 4 vs 30": (normal(4, 3.0, 0.1), normal(30, 3.2, 0.1)),
    "exact huge 1e12": (normal(5, 1e12, 0.002), normal(6, 1.003e12, 0.002)),
    "exact tiny 1e-9": (normal(6, 1e-9, 0.05), normal(5, 1.05e-9, 0.05)),
    "asymptotic 9 vs 9": (normal(9, 100.0, 0.02), normal(9, 102.0, 0.02)),
    "asymptotic 10 vs 12": (normal(10, 100.0, 0.02), normal(12, 101.0, 0.02)),
    "asymptotic 30 vs 40": (normal(30, 100.0, 0.02), normal(40, 100.5, 0.02)),
    "asymptotic 9 vs 9 separated": (list(np.arange(1.0, 10.0)), list(np.arange(10.0, 19.0))),
    "ties 3 vs 4": ([1.0, 2.0, 2.0], [2.0, 3.0, 4.0, 4.0]),
    "ties 2 vs 2": ([1.0, 1.0], [1.0, 2.0]),
    "ties 10 vs 10": (list(np.round(rng.normal(10, 2, 10))), list(np.round(rng.normal(11, 2, 10)))),
    "ties 7 vs 7 integers": ([1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0], [3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 6.0]),
    "ties 25 vs 20 few levels": (list(rng.integers(0, 4, 25).astype(float)),
                                 list(rng.integers(1, 5, 20).astype(float))),
    "all tied": ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0, 5.0]),
    "identical samples 10": (base10, list(base10)),
}
mwu = []
for name, (a, b) in mwu_inputs.items():
    res = st.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    xy = np.concatenate([np.asarray(a, float), np.asarray(b, float)])
    method = scipy_mwu._mwu_choose_method(len(a), len(b), xy, "auto")
    mwu.append({"name": name, "a": encl(a), "b": encl(b), "method": method,
                "statistic": enc(res.statistic), "p_value": enc(res.pvalue)})

# ---------------------------------------------------------------- R cross-check


def r_vector(xs):
    return "c(%s)" % ",".join(repr(float(x)) for x in xs)


def r_numbers(expr):
    out = subprocess.run([rscript, "-e", expr], check=True, capture_output=True, text=True)
    return [float(v) for v in out.stdout.split()]


rscript = shutil.which("Rscript")
tests_check = "Rscript not installed: welch and mwu not cross-checked with R"
if rscript:
    worst_welch = worst_mwu = 0.0
    for row in welch:
        if not row["valid"] or row["p_value"] in (0.0, None):
            continue  # R's t.test refuses constant data
        t, df, p = r_numbers("r <- t.test(%s, %s, var.equal=FALSE); cat(sprintf('%%.17g', "
                             "c(r$statistic, r$parameter, r$p.value)), sep='\\n')"
                             % (r_vector(row["a"]), r_vector(row["b"])))
        for mine, theirs in ((row["statistic"], t), (row["df"], df), (row["p_value"], p)):
            if theirs != 0:
                worst_welch = max(worst_welch, abs(mine - theirs) / abs(theirs))
    for row in mwu:
        # wilcox.test's W is U of the first sample; exact= picks the same branch
        # scipy chose (R's own automatic rule differs: n < 50).
        w, p = r_numbers("r <- suppressWarnings(wilcox.test(%s, %s, exact=%s, correct=TRUE)); "
                         "cat(sprintf('%%.17g', c(r$statistic, r$p.value)), sep='\\n')"
                         % (r_vector(row["a"]), r_vector(row["b"]),
                            "TRUE" if row["method"] == "exact" else "FALSE"))
        if row["name"] == "all tied":
            continue  # R gives NaN there (0/0); scipy's p = 1 is the stored reference
        for mine, theirs in ((row["statistic"], w), (row["p_value"], p)):
            if theirs != 0:
                worst_mwu = max(worst_mwu, abs(mine - theirs) / abs(theirs))
    tests_check = ("welch agrees with R t.test(var.equal=FALSE), worst relative difference %.3g; "
                   "mwu agrees with R wilcox.test(exact=<scipy's choice>, correct=TRUE), "
                   "worst relative difference %.3g" % (worst_welch, worst_mwu))
    if worst_welch > 1e-9 or worst_mwu > 1e-9:
        sys.exit("scipy and R disagree: " + tests_check)

# ---------------------------------------------------------------- CI overlap
disjoint_pairs = [
    ("realistic cv 1%", "two values"), ("odd count", "even count"), ("odd count", "ties"),
    ("constant", "even count"), ("constant", "constant"), ("one value", "two values"),
    ("realistic cv 1%", "realistic cv 1%"), ("negative mean", "odd count"),
]
ci_disjoint = []
for an, bn in disjoint_pairs:
    sa, sb = summary_of[an], summary_of[bn]
    d = bool(sa["ci95_high"] < sb["ci95_low"] or sb["ci95_high"] < sa["ci95_low"])
    ci_disjoint.append({"a": an, "b": bn, "disjoint": d})

t_check = "Rscript not installed: t quantiles not cross-checked with R"
if rscript:
    finite = [q for q in t_quantiles if q["df"] != "inf"]
    expr = "p <- c(%s); df <- c(%s); cat(sprintf('%%.17g', qt(p, df)), sep='\\n')" % (
        ",".join(repr(q["p"]) for q in finite), ",".join(repr(q["df"]) for q in finite))
    out = subprocess.run([rscript, "-e", expr], check=True, capture_output=True, text=True)
    worst = 0.0
    for q, r_value in zip(finite, map(float, out.stdout.split())):
        if q["value"] == 0:
            worst = max(worst, abs(r_value))
            continue
        worst = max(worst, abs(q["value"] - r_value) / abs(r_value))
    t_check = "t quantiles agree with R qt(p, df), worst relative difference %.3g" % worst
    if worst > 1e-12:
        sys.exit("t quantiles: scipy (polished) and R disagree: " + t_check)

# ---------------------------------------------------------------- Benjamini-Hochberg


def bh_numpy(p):
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = len(idx)
    if m == 0:
        return q
    order = idx[np.argsort(p[idx], kind="stable")]
    ranks = np.arange(1, m + 1)
    adjusted = p[order] * m / ranks
    adjusted = np.minimum.accumulate(adjusted[::-1])[::-1]
    q[order] = np.minimum(adjusted, 1.0)
    return q


bh_inputs = {
    "empty": [],
    "single": [0.03],
    "textbook": [0.01, 0.04, 0.03, 0.005, 0.2, 0.5],
    "with untested rows": [0.02, math.nan, 0.001, 0.04, math.nan, 0.6],
    "all untested": [math.nan, math.nan],
    "ties": [0.01, 0.01, 0.01, 0.04, 0.04],
    "capped at 1": [0.9, 0.95, 0.99, 1.0],
    "zeros": [0.0, 0.0, 0.3],
    "150 uniform": list(rng.uniform(0, 1, 150)),
    "150 with 5 real effects": list(np.concatenate([rng.uniform(0, 1, 145),
                                                    [1e-6, 1e-5, 2e-4, 1e-3, 3e-3]])),
}
bh = []
for name, p in bh_inputs.items():
    bh.append({"name": name, "p": encl(p), "q": encl(bh_numpy(p))})

r_check = "Rscript not installed: BH not cross-checked with R"
if rscript:
    worst = 0.0
    for row in bh:
        p = [math.nan if v is None else v for v in row["p"]]
        if not p:
            continue
        expr = "p <- c(%s); cat(sprintf('%%.17g', p.adjust(p, method='BH')), sep='\\n')" % (
            ",".join("NA" if math.isnan(v) else repr(v) for v in p))
        out = subprocess.run([rscript, "-e", expr], check=True, capture_output=True, text=True)
        r_q = [math.nan if s == "NA" else float(s) for s in out.stdout.split()]
        for mine, theirs in zip(row["q"], r_q):
            mine = math.nan if mine is None else mine
            if math.isnan(mine) != math.isnan(theirs):
                sys.exit(f"BH disagrees with R in {row['name']}: {mine} vs {theirs}")
            if not math.isnan(mine):
                worst = max(worst, abs(mine - theirs) / max(abs(theirs), 1e-300))
    r_version = subprocess.run([rscript, "--version"], capture_output=True, text=True)
    r_check = "agrees with R p.adjust(method='BH') (%s), worst relative difference %.3g" % (
        (r_version.stdout + r_version.stderr).splitlines()[0].strip(), worst)
    if worst > 1e-12:
        sys.exit("BH: numpy and R disagree: " + r_check)

# ---------------------------------------------------------------- change CI (Fieller)


def fieller_percent(a, b, confidence):
    a, b = np.asarray(a, float), np.asarray(b, float)
    na, nb = len(a), len(b)
    ma, mb = np.mean(a), np.mean(b)
    va, vb = np.var(a, ddof=1) / na, np.var(b, ddof=1) / nb
    if ma == 0:
        return False, math.nan, math.nan
    if va == 0 and vb == 0:
        r = (mb / ma - 1) * 100
        return True, r, r
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    t = t_ppf(0.5 + confidence / 2, df)
    # (mb - rho*ma)^2 - t^2 (vb + rho^2 va) = 0, as a polynomial in rho
    c2 = ma * ma - t * t * va
    if c2 <= 0:
        return False, math.nan, math.nan
    c1 = -2 * ma * mb
    c0 = mb * mb - t * t * vb
    roots = np.sort(np.real(np.roots([c2, c1, c0])))
    for rho in roots:  # the bounds must satisfy the defining equation
        lhs, rhs = (mb - rho * ma) ** 2, t * t * (vb + rho * rho * va)
        assert abs(lhs - rhs) <= 1e-8 * max(lhs, rhs), (lhs, rhs)
    return True, (roots[0] - 1) * 100, (roots[1] - 1) * 100


change_inputs = {
    "2% shift n=10": (*welch_inputs["2% shift n=10"], 0.95),
    "no shift n=10": (*welch_inputs["no shift n=10"], 0.95),
    "unequal sizes 5 vs 12": (*welch_inputs["unequal sizes 5 vs 12"], 0.95),
    "n=2 vs n=2": ([1.0, 2.0], [3.0, 5.0], 0.95),
    "n=2 vs n=30": (*welch_inputs["n=2 vs n=30"], 0.95),
    "one side constant": (*welch_inputs["one side constant"], 0.95),
    "both constant, different": ([5.0, 5.0, 5.0], [6.0, 6.0], 0.95),
    "huge 1e12": (*welch_inputs["huge 1e12"], 0.95),
    "tiny 1e-9": (*welch_inputs["tiny 1e-9"], 0.95),
    "large n": (*welch_inputs["large n"], 0.95),
    "90% confidence": (*welch_inputs["2% shift n=10"], 0.90),
    "99% confidence": (*welch_inputs["unequal sizes 5 vs 12"], 0.99),
    "halving": ([10.0, 11.0, 9.5, 10.5], [5.0, 5.2, 4.9, 5.1], 0.95),
    "base mean near zero": ([-1.0, 1.0, 0.5, -0.2], [3.0, 3.1, 2.9], 0.95),
    "base mean zero": ([-1.0, 1.0], [3.0, 3.1], 0.95),
}
change = []
for name, (a, b, c) in change_inputs.items():
    valid, lo, hi = fieller_percent(a, b, c)
    if valid and np.var(a) + np.var(b) > 0:
        # Fieller with Welch df excludes 0% exactly when Welch rejects at 1 - c.
        p = st.ttest_ind(a, b, equal_var=False).pvalue
        assert (lo > 0 or hi < 0) == (p < 1 - c), name
    change.append({"name": name, "a": encl(a), "b": encl(b), "confidence": c,
                   "valid": valid, "low": enc(lo), "high": enc(hi)})

# ---------------------------------------------------------------- sessions


def anova(groups):
    groups = [np.asarray(g, float) for g in groups if len(g) > 0]
    k = len(groups)
    sizes = np.array([len(g) for g in groups], float)
    n = sizes.sum()
    if k < 2:
        return {"valid": False, "reason": "needs at least 2 sessions"}
    if n <= k:
        return {"valid": False, "reason": "needs a session with at least 2 samples"}
    grand = np.concatenate(groups).mean()
    means = np.array([g.mean() for g in groups])
    msb = float(np.sum(sizes * (means - grand) ** 2) / (k - 1))
    msw = float(sum(np.sum((g - g.mean()) ** 2) for g in groups) / (n - k))
    n0 = float((n - np.sum(sizes ** 2) / n) / (k - 1))
    between = max(0.0, (msb - msw) / n0)
    total = between + msw
    return {"valid": True, "ms_between": msb, "ms_within": msw, "n0": n0,
            "between": between, "within": msw,
            "between_share": between / total if total > 0 else math.nan,
            "noisy": bool(k >= 2 and between > 0 and between >= msw),
            "session_means": [float(m) for m in means]}


def sessions_with_effect(k, reps, mean, session_sd, repeat_sd):
    return [list(rng.normal(mean + rng.normal(0, session_sd), repeat_sd, r))
            for r in ([reps] * k if isinstance(reps, int) else reps)]


session_inputs = {
    "balanced, session effect": sessions_with_effect(3, 5, 100.0, 2.0, 1.0),
    "balanced, no session effect": sessions_with_effect(4, 6, 100.0, 0.0, 1.0),
    "unbalanced": sessions_with_effect(4, [2, 7, 5, 3], 50.0, 1.0, 1.0),
    "with empty and singleton sessions": [[1.0, 2.0, 1.5], [], [4.0], [3.0, 3.5]],
    "huge 1e12": sessions_with_effect(3, 4, 1e12, 2e9, 1e9),
    "tiny 1e-9": sessions_with_effect(5, 3, 1e-9, 1e-11, 2e-11),
    "constant everywhere": [[2.0, 2.0], [2.0, 2.0, 2.0]],
    "constant sessions, different": [[2.0, 2.0], [3.0, 3.0, 3.0]],
    "one session": [[1.0, 2.0, 3.0]],
    "only singletons": [[1.0], [2.0], [3.0]],
}
session_rows = []
for name, groups in session_inputs.items():
    row = {"name": name, "sessions": [encl(g) for g in groups]}
    res = anova(groups)
    for key, v in res.items():
        if isinstance(v, float):
            res[key] = enc(v)
        elif isinstance(v, list):
            res[key] = encl(v)
    row.update(res)
    session_rows.append(row)

# ---------------------------------------------------------------- noise floor
noise = []
for na, cva, nb, cvb, alpha, power in [
        (10, 0.01, 10, 0.01, 0.05, 0.8), (5, 0.02, 5, 0.02, 0.05, 0.8),
        (2, 0.01, 2, 0.01, 0.05, 0.8), (30, 0.03, 30, 0.03, 0.05, 0.8),
        (10, 0.01, 20, 0.02, 0.05, 0.8), (10, 0.01, 10, 0.01, 0.01, 0.9),
        (10, 0.01, 10, 0.01, 0.0003, 0.8), (10, 0.0, 10, 0.0, 0.05, 0.8),
        (8, 0.0, 12, 0.02, 0.05, 0.8)]:
    va, vb = cva ** 2 / na, cvb ** 2 / nb
    if va + vb == 0:
        v = 0.0
    else:
        df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
        v = (t_ppf(1 - alpha / 2, df) + t_ppf(power, df)) * math.sqrt(va + vb) * 100
    noise.append({"count_a": na, "cv_a": cva, "count_b": nb, "cv_b": cvb, "alpha": alpha,
                  "power": power, "value": enc(v)})

# ---------------------------------------------------------------- geometric mean
geo = []
for values in [[1.02, 0.98, 1.10], [2.0], [1.0, math.nan, 4.0], [], [math.nan],
               [1.5, 0.0], [1.5, -2.0], [1e12, 1e-9, 3.0], list(rng.uniform(0.9, 1.1, 150))]:
    finite = [v for v in values if not math.isnan(v)]
    if not finite or min(finite) <= 0:
        v = math.nan
    else:
        v = float(st.gmean(finite))
    geo.append({"values": encl(values), "value": enc(v)})

doc = {
    "provenance": {
        "generator": "tests/data/make_stats_reference.py",
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "rng": "numpy.random.default_rng(20261129)",
        "bh_cross_check": r_check,
        "t_quantile_method": "scipy.stats.t.ppf polished by 3 Newton steps on scipy.stats.t.cdf/sf "
                             "(scipy 1.10 t.ppf alone is off by up to ~2e-9 relative)",
        "t_quantile_cross_check": t_check,
        "welch_mwu_cross_check": tests_check,
        "mwu_auto_rule": "scipy %s _mwu_choose_method: asymptotic if both sizes > 8 or any tie, "
                         "else exact" % scipy.__version__,
        "encoding": "NaN as null, infinities as \"inf\"/\"-inf\"",
    },
    "summarize": summaries,
    "t_quantile": t_quantiles,
    "mean_ci_halfwidth": halfwidths,
    "welch": welch,
    "mwu": mwu,
    "ci95_disjoint": ci_disjoint,
    "bh": bh,
    "relative_change_ci": change,
    "session_variance": session_rows,
    "noise_floor": noise,
    "geometric_mean": geo,
}
json.dump(doc, sys.stdout, indent=1, allow_nan=False)
sys.stdout.write("\n")
