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
from scipy.optimize import minimize_scalar
from statsmodels.regression.mixed_linear_model import MixedLMParams

warnings.simplefilter("ignore")


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
    x = np.zeros((len(y), len(fe)))
    x[np.arange(len(y)), groups] = 1.0
    z = np.zeros((len(y), max(runs) + 1))
    z[np.arange(len(y)), runs] = 1.0
    v = scale * (np.eye(len(y)) + ratio * z @ z.T)
    cov = np.linalg.inv(x.T @ np.linalg.solve(v, x))
    c = np.zeros(len(fe))
    c[1], c[0] = 1.0, -1.0
    return {
        "name": name,
        "log_means": [float(v) for v in y],
        "group": [int(g) for g in groups],
        "run": [int(r) for r in runs],
        "session_variance": scale,
        "run_variance": ratio * scale,
        "group_means": [float(v) for v in fe],
        "contrast_estimate": float(c @ fe),
        "contrast_variance": float(c @ cov @ c),
        "converged": bool(fit.converged),
        "statsmodels_fit": {"session_variance": float(fit.scale), "run_variance": float(np.asarray(fit.cov_re)[0, 0])},
    }


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
