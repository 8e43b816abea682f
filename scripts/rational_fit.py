"""The rational fit and the float32 multiply-add that fit_gelu.py and fit_tanh.py share.

Needs Debian's python3-numpy.
"""
import numpy as np


def fit_even_rational(t, f, weight, p_deg, q_deg, iterations, scale=1.0):
    """P(t^2) / Q(t^2) ~ f on the points t, Q(0) = 1: linearised least squares (P - f Q, each point
    divided by the previous Q) with Lawson's reweighting towards the smallest largest
    |weight (P / Q - f)|. The basis is (t / scale)^2 (a wide range needs scale ~ max t to stay well
    conditioned); the coefficients returned are of powers of t^2. Returns (that error, p, q)."""
    u = (t / scale) ** 2
    lawson = np.ones_like(t)
    q_prev = np.ones_like(t)
    best = None
    for _ in range(iterations):
        s = weight / q_prev * np.sqrt(lawson)
        cols = [u**i for i in range(p_deg + 1)] + [-f * u**j for j in range(1, q_deg + 1)]
        sol, *_ = np.linalg.lstsq(np.stack(cols, 1) * s[:, None], f * s, rcond=None)
        p, q = sol[: p_deg + 1], np.concatenate([[1.0], sol[p_deg + 1 :]])
        pv, qv = np.polyval(p[::-1], u), np.polyval(q[::-1], u)
        err = weight * (pv / qv - f)
        worst = np.abs(err).max()
        if best is None or worst < best[0]:
            best = (worst, p.copy(), q.copy())
        q_prev = qv
        lawson = lawson * (np.abs(err) / worst + 1e-3)
        lawson /= lawson.mean()
    worst, p, q = best
    powers = lambda c: np.array([c[k] / scale ** (2 * k) for k in range(len(c))])
    return worst, powers(p), powers(q)


def fused(a, b, c):
    """a * b + c rounded once to float32."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
