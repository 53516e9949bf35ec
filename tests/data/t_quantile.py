"""The t quantile the reference generators (make_*_reference.py) share."""
import math

import scipy.stats as st


def t_ppf(p, df):
    """scipy.stats.t.ppf polished by Newton steps on scipy.stats.t.cdf / t.sf.

    scipy 1.10's t.ppf (cephes stdtrit) is only good to about 2e-9 relative
    (e.g. t.ppf(0.8, 29) is off by 2.3e-9 against R's qt), above the 1e-9 the
    tests demand, while t.cdf / t.sf are accurate to rounding; three Newton
    steps on them give the quantile to rounding. The median is exactly 0 by
    symmetry (t.ppf returns 8e-17 there). make_stats_reference.py
    cross-checks it against R's qt.
    """
    if math.isinf(df):
        return float(st.norm.ppf(p))
    if p == 0.5:
        return 0.0
    x = float(st.t.ppf(p, df))
    for _ in range(3):
        if p < 0.5:
            x -= (st.t.cdf(x, df) - p) / st.t.pdf(x, df)
        else:
            x += (st.t.sf(x, df) - (1 - p)) / st.t.pdf(x, df)
    return float(x)
