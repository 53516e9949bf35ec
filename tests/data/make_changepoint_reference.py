#!/usr/bin/python3
"""Generates tests/data/changepoint_reference.json: reference values for
src/stats/changepoint.{h,cpp}.

Run with Debian 12's interpreter (the one that has numpy and scipy):
    /usr/bin/python3 tests/data/make_changepoint_reference.py > tests/data/changepoint_reference.json

Every value comes from the numpy code below, never from kbench code:
  segment_cost     sum w (y - ybar_w)^2 over a slice, numpy, two passes.
  brute_force      every segmentation of n <= 12 points (every subset of the
                   n - 1 gaps whose segments are all >= min_segment long)
                   enumerated, its cost summed with segment_cost plus
                   penalty x changes; the least is the reference. This is the
                   definition of the optimum PELT must reach, with no
                   recursion or pruning in it.
  optimal_partitioning  for longer series (n = 40, 120) where enumeration is
                   impossible: Jackson et al. (2005)'s O(n^2) recursion
                   F(t) = min_s F(s) + C(s, t) + penalty over every s, in
                   Python floats.
  trend_penalty    scipy.stats.f.ppf(scipy.stats.chi2.cdf(base, 1), 1, df).
  trend_noise      the trend model of docs/statistics.md: numpy log, mean,
                   var(ddof=1), median; 1.4826 x MAD of successive differences.

JSON has no NaN: NaN is written as null.
"""
import datetime
import itertools
import json
import math
import platform
import sys

import numpy as np
import scipy
import scipy.stats as st

rng = np.random.default_rng(20261201)


def segment_cost(y, w, a, b):
    ys, ws = np.asarray(y[a:b], dtype=float), np.asarray(w[a:b], dtype=float)
    mean = np.sum(ws * ys) / np.sum(ws)
    return float(np.sum(ws * (ys - mean) ** 2))


def total_cost(y, w, changes, penalty):
    bounds = [0] + list(changes) + [len(y)]
    return sum(segment_cost(y, w, bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)) + penalty * len(changes)


def brute_force(y, w, penalty, min_segment):
    n = len(y)
    best = None
    if n < 2 * min_segment:
        return [], segment_cost(y, w, 0, n)
    for k in range(0, n):
        for changes in itertools.combinations(range(1, n), k):
            bounds = [0] + list(changes) + [n]
            if any(bounds[i + 1] - bounds[i] < min_segment for i in range(len(bounds) - 1)):
                continue
            cost = total_cost(y, w, changes, penalty)
            if best is None or cost < best[1]:
                best = (list(changes), cost)
    return best


def optimal_partitioning(y, w, penalty, min_segment):
    n = len(y)
    best = [math.inf] * (n + 1)
    last = [0] * (n + 1)
    best[0] = -penalty
    for t in range(min_segment, n + 1):
        for s in range(0, t - min_segment + 1):
            if best[s] == math.inf:
                continue
            total = best[s] + segment_cost(y, w, s, t) + penalty
            if total < best[t]:
                best[t], last[t] = total, s
    changes = []
    t = n
    while last[t] > 0:
        changes.append(last[t])
        t = last[t]
    return sorted(changes), best[n]


def series(n, steps):
    """n points of unit-ish noise with steps {position: shift}, weights around 1."""
    w = rng.uniform(0.3, 3.0, n)
    y = rng.normal(0.0, 1.0, n) / np.sqrt(w)
    for position, shift in steps.items():
        y[position:] += shift
    return [float(v) for v in y], [float(v) for v in w]


def exact_cases():
    cases = []
    for n, steps, penalty, min_segment in [
        (1, {}, 2.0, 1), (2, {}, 0.0, 1), (3, {1: 5.0}, 1.0, 1), (5, {}, 3.0, 2), (6, {3: 4.0}, 5.0, 3),
        (8, {4: 3.0}, 6.0, 1), (8, {2: 4.0, 6: -4.0}, 4.0, 1), (9, {}, 0.5, 1), (10, {5: 2.0}, 6.9, 2),
        (11, {3: 5.0, 7: 5.0}, 7.2, 1), (12, {6: -6.0}, 7.45, 1), (12, {4: 3.0, 8: 3.0}, 2.0, 2),
        (12, {}, 7.45, 1), (12, {1: 8.0, 11: -8.0}, 3.0, 1), (12, {3: 3.0, 6: -3.0, 9: 3.0}, 4.0, 3),
    ]:
        y, w = series(n, steps)
        changes, cost = brute_force(y, w, penalty, min_segment)
        cases.append({"method": "brute_force", "values": y, "weights": w, "penalty": penalty,
                      "min_segment": min_segment, "change_points": changes, "penalised_cost": cost,
                      "segment_cost_whole": segment_cost(y, w, 0, n)})
    for n, steps, penalty, min_segment in [(40, {13: 3.0, 29: -2.5}, 3 * math.log(40), 1),
                                           (40, {}, 2.0, 1), (120, {30: 2.0, 60: 2.0, 90: -4.0}, 3 * math.log(120), 4),
                                           (120, {50: 1.0}, 1.0, 2)]:
        y, w = series(n, steps)
        changes, cost = optimal_partitioning(y, w, penalty, min_segment)
        cases.append({"method": "optimal_partitioning", "values": y, "weights": w, "penalty": penalty,
                      "min_segment": min_segment, "change_points": changes, "penalised_cost": cost,
                      "segment_cost_whole": segment_cost(y, w, 0, n)})
    return cases


def trend_noise(per_point):
    logs = [np.log(np.asarray(p, dtype=float)) for p in per_point]
    means = np.array([np.mean(l) for l in logs])
    within_df = sum(len(l) - 1 for l in logs)
    within = (sum(np.var(l, ddof=1) * (len(l) - 1) for l in logs if len(l) >= 2) / within_df
              if within_df > 0 else None)
    d = np.diff(means)
    scale = 1.4826 * np.median(np.abs(d - np.median(d)))
    point_variance = scale * scale / 2
    inverse_sessions = np.mean([1.0 / len(l) for l in logs])
    between = point_variance if within is None else max(0.0, point_variance - within * inverse_sessions)
    variances = [between + (0.0 if within is None else within) / len(l) for l in logs]
    return {"means": [float(m) for m in means], "within": None if within is None else float(within),
            "within_df": within_df, "between": float(between), "variances": [float(v) for v in variances]}


def noise_cases():
    cases = []
    for points, sessions, run_sd, session_sd, step in [(6, [1], 0.02, 0.01, None), (10, [3], 0.01, 0.01, 5),
                                                       (8, [2, 3, 1, 4], 0.0, 0.02, 4), (12, [3], 0.05, 0.005, 6)]:
        per_point = []
        for k in range(points):
            level = 1000.0 * (1.1 if step is not None and k >= step else 1.0) * math.exp(rng.normal(0, run_sd))
            count = sessions[k % len(sessions)]
            per_point.append([float(level * math.exp(rng.normal(0, session_sd))) for _ in range(count)])
        cases.append({"session_means": per_point, **trend_noise(per_point)})
    return cases


def penalty_cases():
    return [{"base": b, "df": df, "penalty": float(st.f.ppf(st.chi2.cdf(b, 1), 1, df))}
            for b, df in [(3 * math.log(8), 7), (3 * math.log(10), 8), (3 * math.log(12), 10), (3 * math.log(40), 38),
                          (3 * math.log(200), 190), (2.0, 1), (6.0, 3)]]


def main():
    out = {
        "provenance": {
            "generator": "tests/data/make_changepoint_reference.py",
            "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "rng": "numpy.random.default_rng(20261201)",
        },
        "segmentations": exact_cases(),
        "trend_noise": noise_cases(),
        "trend_penalty": penalty_cases(),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
