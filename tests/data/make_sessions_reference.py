#!/usr/bin/python3
"""Generates tests/data/sessions_reference.json: reference values for the
session-level test in src/stats/sessions.cpp (stats.h, "the session-level test").

Run with Debian 12's interpreter (the one that has scipy):
    /usr/bin/python3 tests/data/make_sessions_reference.py > tests/data/sessions_reference.json

Every value comes from scipy/numpy calls written out below, never from kbench
code. The exact calls per section:
  pool_log_session_variance  per profile with >= 2 sessions and every mean > 0:
                      numpy sum((log m - mean(log m))^2); summed and divided
                      by sum(sessions - 1)
  session_test        prior df 0 and >= 2 sessions a side: scipy.stats.ttest_ind(log test, log base,
                      equal_var=True) gives statistic and p; the CI of the change
                      is expm1(diff -+ t_ppf(0.5 + c/2, n_b + n_t - 2) * se) * 100
                      with se = |diff / statistic| (from scipy's statistic) or
                      recomputed from the pooled variance when the statistic is 0.
                      With a prior (d0, s0^2): the moderated t of Smyth (2004),
                      "Linear models and empirical Bayes methods for assessing
                      differential expression in microarray experiments",
                      Statistical Applications in Genetics and Molecular Biology
                      3(1), article 3, eq. (for the moderated t with d0, s0^2
                      fixed, section 5):
                          s~^2 = (d0 s0^2 + d s^2) / (d0 + d),
                          t~   = diff / (s~ sqrt(1/n_b + 1/n_t)),
                          t~ ~ t(d0 + d) under the null,
                      written out in numpy; p = 2 * scipy.stats.t.sf(|t~|, d0 + d).
  sessions_to_decide  the definition in stats.h written out in numpy: the
                      smallest k with which the CI (variance kept, df + 2k,
                      n + k a side) excludes 0 with |change| >= min change, or
                      lies inside [log1p(-min change / 100), log1p(min change / 100)]
  session_test_runs   the session test above plus a run term R = V (1/r_b + 1/r_t):
                      se = sqrt(s~^2 (1/n_b + 1/n_t) + R), df by Welch-Satterthwaite
                      (A + R)^2 / (A^2 / df + R^2 / run_df), A = s~^2 (1/n_b + 1/n_t);
                      p = 2 * scipy.stats.t.sf(|t|, that df)
  session_floor       expm1((t_ppf(1 - alpha/2, df) + t_ppf(power, df))
                      * sqrt(2 v / n)) * 100, df = d0 + 2n - 2
  session_floor_runs  one run a side: A = 2 v / n, R = 2 V, the same with
                      sqrt(A + R) and df = (A + R)^2 / (A^2 / df_s + R^2 / df_V),
                      df_s = d0 + 2n - 2 (df_s with V = 0; NaN with df_s < 1 or df_V 0)
t_ppf is scipy.stats.t.ppf polished with Newton steps on t.cdf / t.sf, as in
make_stats_reference.py (scipy 1.10's t.ppf alone is off by up to ~2e-9).

JSON has no NaN or infinity: NaN is written as null, infinities as the strings
"inf" and "-inf".
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
import warnings

# "identical sides" makes scipy warn about cancellation in the moments; the
# difference is exactly 0 there, which is the case.
warnings.filterwarnings("ignore", category=RuntimeWarning)

rng = np.random.default_rng(20261130)




def enc(x):
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


def sessions(n, level, session_cv):
    """n session means with a between-session effect on the log scale."""
    return list(level * np.exp(rng.normal(0, session_cv, n)))


def usable(means):
    return len(means) >= 2 and all(m > 0 and math.isfinite(m) for m in means)


# ---------------------------------------------------------------- prior
pool_inputs = {
    "no profile": [],
    "one profile, 3 sessions": [sessions(3, 100.0, 0.03)],
    "three profiles": [sessions(3, 100.0, 0.03), sessions(5, 250.0, 0.03), sessions(2, 90.0, 0.03)],
    "single-session profiles add nothing": [[100.0], sessions(4, 1e6, 0.02), [5.0]],
    "a mean <= 0 drops that profile": [[1.0, -2.0, 3.0], sessions(3, 7.0, 0.05), [0.0, 1.0]],
    "only single sessions": [[1.0], [2.0]],
    "levels 1e-9 and 1e12": [sessions(4, 1e-9, 0.04), sessions(3, 1e12, 0.01)],
    "identical sessions": [[5.0, 5.0, 5.0], [2.0, 2.0]],
}
pool = []
for name, profiles in pool_inputs.items():
    ss, df, used = 0.0, 0.0, 0
    for means in profiles:
        if not usable(means):
            continue
        logs = np.log(np.asarray(means, float))
        ss += float(np.sum((logs - logs.mean()) ** 2))
        df += len(logs) - 1
        used += 1
    pool.append({"name": name, "profiles": [encl(m) for m in profiles], "df": df, "profiles_used": used,
                 "variance": enc(ss / df if df > 0 else math.nan)})

# ---------------------------------------------------------------- session test


def session_test(base, test, d0, s0sq, confidence):
    row = {"valid": False}
    if len(base) == 0 or len(test) == 0:
        row["reason"] = "no session on one side"
        return row
    if not all(v > 0 and math.isfinite(v) for v in list(base) + list(test)):
        row["reason"] = "a session mean is <= 0: no relative test"
        return row
    lb, lt = np.log(np.asarray(base, float)), np.log(np.asarray(test, float))
    nb, nt = len(lb), len(lt)
    d = nb + nt - 2
    d0 = d0 if (d0 > 0 and math.isfinite(s0sq) and s0sq >= 0) else 0.0
    df = d0 + d
    if df < 1:
        row["reason"] = "1 session a side and no noise model"
        return row
    diff = float(lt.mean() - lb.mean())
    own = float(np.sum((lb - lb.mean()) ** 2) + np.sum((lt - lt.mean()) ** 2))
    if d0 == 0 and min(nb, nt) >= 2:
        # Student's pooled t-test: scipy is the reference for t and p.
        res = st.ttest_ind(lt, lb, equal_var=True)
        t, p = float(res.statistic), float(res.pvalue)
        var = own / d
        se = math.sqrt(var * (1 / nb + 1 / nt))
        if se > 0 and t != 0:
            se = abs(diff / t)  # scipy's own standard error
        method = "scipy.stats.ttest_ind(log test, log base, equal_var=True)"
    else:
        # Smyth (2004) moderated t with fixed d0, s0^2; with d0 = 0 and a side
        # of one session it is Student's pooled t, written out because scipy
        # 1.10 returns NaN there (its var(ddof=1) of one value is NaN, and
        # 0 * NaN stays NaN in the pooled variance).
        var = ((d0 * s0sq if d0 > 0 else 0.0) + own) / df
        se = math.sqrt(var * (1 / nb + 1 / nt))
        t = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
        p = min(1.0, 2 * float(st.t.sf(abs(t), df))) if se > 0 else (1.0 if diff == 0 else 0.0)
        method = ("moderated t, Smyth 2004 (numpy), p from scipy.stats.t.sf" if d0 > 0 else
                  "pooled t written out in numpy (scipy gives NaN with one value a side), p from scipy.stats.t.sf")
    q = t_ppf(0.5 + confidence / 2, df)
    row.update(valid=True, method=method, log_change=diff, variance=var, df=df, prior_df=d0,
               standard_error=se, statistic=enc(t), p_value=p,
               ci_low_pct=math.expm1(diff - q * se) * 100, ci_high_pct=math.expm1(diff + q * se) * 100)
    return row


b3 = sessions(3, 1000.0, 0.03)
test_inputs = [
    # name, base, test, prior df, prior variance, confidence
    ("3 vs 3, no prior", b3, sessions(3, 1030.0, 0.03), 0, math.nan, 0.95),
    ("3 vs 3 A/A, no prior", sessions(3, 50.0, 0.02), sessions(3, 50.0, 0.02), 0, math.nan, 0.95),
    ("2 vs 4, no prior", sessions(2, 10.0, 0.05), sessions(4, 9.0, 0.05), 0, math.nan, 0.95),
    ("1 vs 2, no prior (df 1)", [100.0], [104.0, 101.0], 0, math.nan, 0.95),
    ("5 vs 5 at 1e12, no prior", sessions(5, 1e12, 0.01), sessions(5, 1.02e12, 0.01), 0, math.nan, 0.95),
    ("5 vs 4 at 1e-9, 99%", sessions(5, 1e-9, 0.04), sessions(4, 1.1e-9, 0.04), 0, math.nan, 0.99),
    ("3 vs 3, 90%", b3, sessions(3, 990.0, 0.03), 0, math.nan, 0.90),
    ("identical sides", b3, list(b3), 0, math.nan, 0.95),
    ("3 vs 3, prior d0 4", b3, sessions(3, 1030.0, 0.03), 4, 0.03 ** 2, 0.95),
    ("3 vs 3, prior d0 20", b3, sessions(3, 1030.0, 0.03), 20, 0.025 ** 2, 0.95),
    ("1 vs 1, prior d0 4", [200.0], [212.0], 4, 0.03 ** 2, 0.95),
    ("1 vs 1, prior d0 20", [200.0], [195.0], 20, 0.01 ** 2, 0.95),
    ("2 vs 2, prior d0 8", [10.0, 10.4], [10.9, 11.2], 8, 0.02 ** 2, 0.95),
    ("1 vs 3, prior d0 6, 99%", [3.0], sessions(3, 3.3, 0.05), 6, 0.05 ** 2, 0.99),
    ("prior variance 0", [10.0, 10.4], [10.9, 11.2], 8, 0.0, 0.95),
    ("prior with NaN variance is no prior", sessions(3, 10.0, 0.02), sessions(3, 10.5, 0.02), 5, math.nan, 0.95),
    ("1 vs 1, no prior", [1.0], [2.0], 0, math.nan, 0.95),
    ("empty side", [], [2.0, 3.0], 0, math.nan, 0.95),
    ("negative mean", [1.0, -2.0], [2.0, 3.0], 0, math.nan, 0.95),
    ("zero mean with prior", [0.0], [2.0], 4, 0.01, 0.95),
]
tests = []
for name, base, test, d0, s0sq, c in test_inputs:
    row = {"name": name, "base": encl(base), "test": encl(test), "prior_df": d0, "prior_variance": enc(s0sq),
           "confidence": c}
    res = session_test(base, test, d0, s0sq, c)
    for k, v in res.items():
        row["expected_" + k if k not in ("valid", "reason", "method") else k] = (
            enc(v) if isinstance(v, float) else v)
    tests.append(row)

# ---------------------------------------------------------------- sessions to decide


def decide(res, nb, nt, min_change, confidence, limit):
    if not res["valid"]:
        return limit + 1
    lower, upper = math.log1p(-abs(min_change) / 100), math.log1p(abs(min_change) / 100)
    diff, var, df = res["log_change"], res["variance"], res["df"]
    big = abs(math.expm1(diff)) * 100 >= min_change
    for k in range(limit + 1):
        half = t_ppf(0.5 + confidence / 2, df + 2 * k) * math.sqrt(var * (1 / (nb + k) + 1 / (nt + k)))
        lo, hi = diff - half, diff + half
        if ((lo > 0 or hi < 0) and big and min_change >= 0) or (min_change > 0 and lo >= lower and hi <= upper):
            return k
    return limit + 1


decide_inputs = [
    ("3 vs 3, no prior", 2.0, 0.95, 50),
    ("3 vs 3 A/A, no prior", 2.0, 0.95, 50),
    ("3 vs 3, prior d0 20", 2.0, 0.95, 50),
    ("3 vs 3, prior d0 20", 5.0, 0.95, 50),
    ("1 vs 1, prior d0 4", 2.0, 0.95, 50),
    ("1 vs 1, prior d0 20", 2.0, 0.95, 50),
    ("2 vs 2, prior d0 8", 2.0, 0.95, 50),
    ("2 vs 2, prior d0 8", 20.0, 0.95, 50),
    ("5 vs 5 at 1e12, no prior", 0.5, 0.95, 50),
    ("3 vs 3, 90%", 1.0, 0.90, 3),
    ("1 vs 1, no prior", 2.0, 0.95, 50),
]
test_by_name = {name: (base, test, d0, s0sq, c) for name, base, test, d0, s0sq, c in test_inputs}
decide_rows = []
for name, min_change, c, limit in decide_inputs:
    base, test, d0, s0sq, c_test = test_by_name[name]
    res = session_test(base, test, d0, s0sq, c_test)
    decide_rows.append({"test": name, "min_change_pct": min_change, "confidence": c, "limit": limit,
                        "value": decide(res, len(base), len(test), min_change, c, limit)})

# ---------------------------------------------------------------- floor
floors = []
for n, v, d0, alpha, power in [(3, 0.03 ** 2, 0, 0.05, 0.8), (1, 0.03 ** 2, 4, 0.05, 0.8),
                               (1, 0.03 ** 2, 20, 0.05, 0.8), (2, 0.01 ** 2, 8, 0.05, 0.8),
                               (5, 0.05 ** 2, 0, 0.01, 0.9), (3, 0.02 ** 2, 0, 0.05 / 77, 0.8),
                               (10, 0.0, 0, 0.05, 0.8), (1, 0.03 ** 2, 0, 0.05, 0.8),
                               (2, 0.03 ** 2, 0, 0.05, 0.8)]:
    df = d0 + 2 * n - 2
    if df < 1:
        value = math.nan
    else:
        value = math.expm1((t_ppf(1 - alpha / 2, df) + t_ppf(power, df)) * math.sqrt(v * 2 / n)) * 100
    floors.append({"sessions_per_side": n, "log_variance": v, "prior_df": d0, "alpha": alpha, "power": power,
                   "value": enc(value)})

# ---------------------------------------------------------------- runs
def session_test_runs(base, test, d0, s0sq, confidence, run_variance, run_df, base_runs, test_runs):
    row = session_test(base, test, d0, s0sq, confidence)
    if not row["valid"]:
        return row
    nb, nt = len(base), len(test)
    a = row["variance"] * (1 / nb + 1 / nt)
    r = run_variance * (1 / base_runs + 1 / test_runs)
    df = (a + r) ** 2 / (a ** 2 / row["df"] + r ** 2 / run_df)
    se = math.sqrt(a + r)
    t = row["log_change"] / se
    q = t_ppf(0.5 + confidence / 2, df)
    row.update(method="session test plus a run term, Welch-Satterthwaite df (numpy), p from scipy.stats.t.sf",
               standard_error=se, statistic=t, p_value=min(1.0, 2 * float(st.t.sf(abs(t), df))), test_df=df,
               run_variance=r, run_df=run_df,
               ci_low_pct=math.expm1(row["log_change"] - q * se) * 100,
               ci_high_pct=math.expm1(row["log_change"] + q * se) * 100)
    return row


run_test_inputs = [
    # name, base, test, prior df, prior variance, confidence, run variance, run df, base runs, test runs
    ("5 vs 5, run V 0.01 df 4", sessions(5, 100.0, 0.02), sessions(5, 130.0, 0.02), 20, 0.02 ** 2, 0.95,
     0.01, 4, 1, 1),
    ("3 vs 3, no prior, run V 0.0004 df 10", sessions(3, 10.0, 0.03), sessions(3, 10.6, 0.03), 0, math.nan, 0.95,
     0.0004, 10, 1, 1),
    ("2 runs vs 1, 99%", sessions(6, 1e-6, 0.02), sessions(3, 0.9e-6, 0.02), 8, 0.02 ** 2, 0.99, 0.002, 6, 2, 1),
]
run_tests = []
for name, base, test, d0, s0sq, c, rv, rdf, rb, rt in run_test_inputs:
    row = {"name": name, "base": encl(base), "test": encl(test), "prior_df": d0, "prior_variance": enc(s0sq),
           "confidence": c, "run_noise_variance": rv, "run_noise_df": rdf, "base_runs": rb, "test_runs": rt}
    res = session_test_runs(base, test, d0, s0sq, c, rv, rdf, rb, rt)
    for k, v in res.items():
        row["expected_" + k if k not in ("valid", "reason", "method") else k] = (
            enc(v) if isinstance(v, float) else v)
    run_tests.append(row)

# ---------------------------------------------------------------- floor of separate runs
# Appended last: no random draw, so every section above keeps its values.
floors_runs = []
for n, v, d0, rv, rdf, alpha, power in [(3, 0.03 ** 2, 0, 0.01, 4, 0.05, 0.8),
                                         (1, 0.03 ** 2, 20, 0.0004, 10, 0.05, 0.8),
                                         (5, 0.05 ** 2, 0, 0.002, 1, 0.01, 0.9),
                                         (3, 0.02 ** 2, 6, 0.0001, 3, 0.05 / 77, 0.8),
                                         (3, 0.03 ** 2, 0, 0.0, 2, 0.05, 0.8),
                                         (3, 0.03 ** 2, 0, math.nan, 0, 0.05, 0.8),
                                         (1, 0.03 ** 2, 0, 0.01, 4, 0.05, 0.8)]:
    df_s = d0 + 2 * n - 2
    if df_s < 1 or rdf <= 0:
        value = math.nan
    else:
        a = v * 2 / n
        r = 2 * rv
        df = (a + r) ** 2 / (a ** 2 / df_s + r ** 2 / rdf) if r > 0 else df_s
        value = math.expm1((t_ppf(1 - alpha / 2, df) + t_ppf(power, df)) * math.sqrt(a + r)) * 100
    floors_runs.append({"sessions_per_side": n, "log_variance": v, "prior_df": d0, "run_variance": enc(rv),
                        "run_df": rdf, "alpha": alpha, "power": power, "value": enc(value)})

doc = {
    "provenance": {
        "generator": "tests/data/make_sessions_reference.py",
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "rng": "numpy.random.default_rng(20261130)",
        "moderated_t": "Smyth G.K. (2004), Statistical Applications in Genetics and Molecular Biology 3(1), "
                       "art. 3: s~^2 = (d0 s0^2 + d s^2)/(d0 + d), t~ = diff/(s~ sqrt(1/nb + 1/nt)), df d0 + d",
        "encoding": "NaN as null, infinities as \"inf\"/\"-inf\"",
    },
    "pool_log_session_variance": pool,
    "session_test": tests,
    "sessions_to_decide": decide_rows,
    "session_floor_percent": floors,
    "session_test_runs": run_tests,
    "session_floor_runs_percent": floors_runs,
}
json.dump(doc, sys.stdout, indent=1, allow_nan=False)
sys.stdout.write("\n")
