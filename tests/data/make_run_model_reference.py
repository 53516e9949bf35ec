#!/usr/bin/python3
"""Generates tests/data/run_model_reference.json: reference values for
kbench::stats::fit_run_model and run_contrast (src/stats/run_model.cpp), the
mixed model of log session means nested in runs.

Run with Debian 12's interpreter (scipy, and statsmodels from the package
python3-statsmodels):
    /usr/bin/python3 tests/data/make_run_model_reference.py > tests/data/run_model_reference.json

Every value comes from statsmodels, never from kbench code:
    model = statsmodels.formula.api.mixedlm("y ~ 0 + C(g)", data, groups=data["run"])
    fit = model.fit(reml=True, method=["lbfgs", "powell"], ...)
  statsmodels' own optimiser stops early (its ratio run/session variance was
  off by up to 3e-4 relative), so its REML log-likelihood, model.loglike with
  the fixed effects profiled out, is then maximised over that ratio with
  scipy.optimize.minimize_scalar (bounded, xatol 1e-13) around fit's value:
  session_variance = model.get_scale(fe, ratio), run_variance = ratio *
  session_variance, group_means = model.get_fe_params(ratio), and for the
  contrast test - base (groups 1 and 0) estimate = fe[1] - fe[0] and
  variance = c' (X' V^-1 X)^-1 c with V = scale (I + ratio Z Z') built densely
  with numpy. The statsmodels fit's own values are kept beside them
  (`statsmodels_fit`) to show how close it came.

The cases are the structures compare meets: interleaved runs (both groups in
every run), separate runs (one group a run: the run variance is not
identified), a base measured in two runs and a test in a third, a mixed
history (a base run of its own plus a run shared with the test), and a third
group (another kernel) that bridges two runs.

The cases with rounds (a `round` array: rounds nested in runs, one session of
each group a round, as plan exec alternates swprofiles) come from
    model = smf.mixedlm("y ~ 0 + C(g)", data, groups=data["run"],
                        re_formula="1" (or "0" with one run), vc_formula={"round": "0 + C(round)"})
and its REML log-likelihood (fixed effects profiled out) maximised over the
log ratios round/session and run/session with scipy.optimize.minimize
(Nelder-Mead, xatol 1e-12) from the statsmodels fit's values; the contrast
variance is c' (X' V^-1 X)^-1 c with V = scale (I + ratio_run Z Z' +
ratio_round B B'), B the round indicators.
"""
import datetime
import json
import platform
import sys
import warnings

import numpy as np
import pandas as pd
import scipy
import statsmodels
import statsmodels.formula.api as smf
from scipy.optimize import minimize, minimize_scalar
from statsmodels.regression.mixed_linear_model import MixedLMParams

warnings.simplefilter("ignore")


def indicators(levels):
    z = np.zeros((len(levels), max(levels) + 1))
    z[np.arange(len(levels)), levels] = 1.0
    return z


def contrast(groups, fe, v):
    """fe[1] - fe[0] and its GLS variance c' (X' V^-1 X)^-1 c."""
    x = indicators(groups)
    cov = np.linalg.inv(x.T @ np.linalg.solve(v, x))
    c = np.zeros(len(fe))
    c[1], c[0] = 1.0, -1.0
    return float(c @ fe), float(c @ cov @ c)


def case(name, groups, runs, seed, run_sd, session_sd, shift):
    rng = np.random.default_rng(seed)
    run_effect = {r: rng.normal(0, run_sd) for r in set(runs)}
    y = [4.0 + shift * (g == 1) + 0.05 * g + run_effect[r] + rng.normal(0, session_sd) for g, r in zip(groups, runs)]
    data = pd.DataFrame({"y": y, "g": groups, "run": runs})
    model = smf.mixedlm("y ~ 0 + C(g)", data, groups=data["run"])
    fit = model.fit(reml=True, method=["lbfgs", "powell"], maxiter=2000, gtol=1e-12)
    model.cov_pen, model.fe_pen = None, None  # fit() sets these; loglike reads them

    def params(ratio):
        return MixedLMParams.from_components(fe_params=np.zeros(model.k_fe), cov_re=np.array([[ratio]]))

    start = float(np.asarray(fit.cov_re)[0, 0]) / float(fit.scale)
    best = minimize_scalar(lambda t: -model.loglike(params(np.exp(t)), profile_fe=True),
                           bounds=(np.log(start) - 3, np.log(start) + 3), method="bounded",
                           options={"xatol": 1e-13})
    ratio = float(np.exp(best.x))
    fe, _ = model.get_fe_params(np.array([[ratio]]), np.zeros(0))
    fe = np.asarray(fe, dtype=float)
    scale = float(model.get_scale(fe, np.array([[ratio]]), np.zeros(0)))
    z = indicators(runs)
    estimate, variance = contrast(groups, fe, scale * (np.eye(len(y)) + ratio * z @ z.T))
    return {
        "name": name,
        "log_means": [float(v) for v in y],
        "group": [int(g) for g in groups],
        "run": [int(r) for r in runs],
        "session_variance": scale,
        "run_variance": ratio * scale,
        "group_means": [float(v) for v in fe],
        "contrast_estimate": estimate,
        "contrast_variance": variance,
        "converged": bool(fit.converged),
        "statsmodels_fit": {"session_variance": float(fit.scale), "run_variance": float(np.asarray(fit.cov_re)[0, 0])},
    }


def round_case(name, sessions, seed, run_sd, round_sd, session_sd, shift):
    """sessions: (group, run, round) triples, rounds numbered across runs."""
    rng = np.random.default_rng(seed)
    groups = [g for g, _, _ in sessions]
    runs = [r for _, r, _ in sessions]
    rounds = [b for _, _, b in sessions]
    run_effect = {r: rng.normal(0, run_sd) for r in set(runs)}
    round_effect = {b: rng.normal(0, round_sd) for b in set(rounds)}
    y = [4.0 + shift * (g == 1) + 0.05 * g + run_effect[r] + round_effect[b] + rng.normal(0, session_sd)
         for g, r, b in sessions]
    data = pd.DataFrame({"y": y, "g": groups, "run": runs, "round": rounds})
    one_run = len(set(runs)) == 1
    model = smf.mixedlm("y ~ 0 + C(g)", data, groups=data["run"], re_formula="0" if one_run else "1",
                        vc_formula={"round": "0 + C(round)"})
    fit = model.fit(reml=True, method=["lbfgs", "powell"], maxiter=2000, gtol=1e-12)
    model.cov_pen, model.fe_pen = None, None

    def components(t):
        cov_re = np.zeros((0, 0)) if one_run else np.array([[np.exp(t[1])]])
        return cov_re, np.array([np.exp(t[0])])

    def params(t):
        cov_re, vcomp = components(t)
        return MixedLMParams.from_components(fe_params=np.zeros(model.k_fe), cov_re=cov_re, vcomp=vcomp)

    scale0 = float(fit.scale)
    start = [np.log(float(fit.vcomp[0]) / scale0)]
    if not one_run:
        start.append(np.log(float(np.asarray(fit.cov_re)[0, 0]) / scale0))
    objective = lambda t: -model.loglike(params(t), profile_fe=True)
    best = minimize(objective, start, method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 20000, "maxfev": 40000})
    best = minimize(objective, best.x, method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 20000, "maxfev": 40000})
    cov_re, vcomp = components(best.x)
    fe, _ = model.get_fe_params(cov_re, vcomp)
    fe = np.asarray(fe, dtype=float)
    scale = float(model.get_scale(fe, cov_re, vcomp))
    ratio_round = float(vcomp[0])
    ratio_run = 0.0 if one_run else float(cov_re[0, 0])
    z, b = indicators(runs), indicators(rounds)
    estimate, variance = contrast(groups, fe, scale * (np.eye(len(y)) + ratio_run * z @ z.T + ratio_round * b @ b.T))
    return {
        "name": name,
        "log_means": [float(v) for v in y],
        "group": [int(g) for g in groups],
        "run": [int(r) for r in runs],
        "round": [int(r) for r in rounds],
        "session_variance": scale,
        "run_variance": ratio_run * scale,
        "round_variance": ratio_round * scale,
        "group_means": [float(v) for v in fe],
        "contrast_estimate": estimate,
        "contrast_variance": variance,
        "converged": bool(fit.converged) and bool(best.success),
        "statsmodels_fit": {"session_variance": scale0, "round_variance": float(fit.vcomp[0]),
                            "run_variance": 0.0 if one_run else float(np.asarray(fit.cov_re)[0, 0])},
    }


def interleaved_rounds(groups, rounds, run=0, first_round=0):
    return [(g, run, first_round + b) for b in range(rounds) for g in groups]


def main():
    cases = [
        # Both groups in each of three runs: the runs' drift cancels.
        case("interleaved", [0, 1] * 9, [0] * 6 + [1] * 6 + [2] * 6, 1, 0.03, 0.01, -0.1),
        # Base in two runs (4 + 3 sessions), test in a third (5).
        case("base_twice", [0] * 7 + [1] * 5, [0] * 4 + [1] * 3 + [2] * 5, 2, 0.04, 0.01, -0.1),
        # Base 4 sessions in a run of its own plus 2 in a run shared with 3 test sessions.
        case("mixed_history", [0] * 4 + [0, 0, 1, 1, 1], [0] * 4 + [1] * 5, 3, 0.05, 0.01, 0.0),
        # A third kernel (group 2) measured in both runs bridges base (run 0) and test (run 1).
        case("bridge", [0] * 4 + [2] * 3 + [1] * 4 + [2] * 3, [0] * 7 + [1] * 7, 4, 0.05, 0.01, 0.08),
        # Calibration-like: a kernel (group 2) in 8 runs of 2 sessions, base and test in a run each.
        case("calibrated", [2] * 16 + [0] * 5 + [1] * 5, [r for r in range(8) for _ in range(2)] + [8] * 5 + [9] * 5,
             5, 0.02, 0.01, -0.1),
        # Unbalanced interleaving: 3 runs with 1-3 sessions of each group.
        case("unbalanced", [0, 1, 1, 0, 0, 1, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2, 2], 6, 0.02, 0.02, 0.05),
        # One plan exec of 3 swprofiles, 6 rounds: the rounds' drift cancels.
        round_case("rounds_one_run", interleaved_rounds([0, 1, 2], 6), 11, 0.0, 0.03, 0.01, -0.1),
        # Two plan execs of 2 swprofiles, 5 rounds each.
        round_case("rounds_two_runs", interleaved_rounds([0, 1], 5, 0, 0) + interleaved_rounds([0, 1], 5, 1, 5),
                   12, 0.04, 0.02, 0.01, 0.05),
        # A base run of its own (5 sessions, rounds of one) and a plan exec of base and test (4 rounds).
        round_case("rounds_mixed_history", [(0, 0, b) for b in range(5)] + interleaved_rounds([0, 1], 4, 1, 5),
                   13, 0.05, 0.02, 0.01, -0.08),
        # Rounds with a session missing (an interrupted round, a failed session).
        round_case("rounds_unbalanced", interleaved_rounds([0, 1, 2], 5)[:-1] + [(0, 0, 5), (2, 0, 6), (1, 0, 6)],
                   14, 0.0, 0.025, 0.012, 0.03),
    ]
    json.dump({
        "provenance": {
            "generator": "tests/data/make_run_model_reference.py",
            "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(),
            "statsmodels": statsmodels.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
        "cases": cases,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
