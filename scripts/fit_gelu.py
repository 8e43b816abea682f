#!/usr/bin/python3
"""Fits the rational erf of the native GELU (lib/cpu/vmath_impl.inc's gelu_v) and checks it.

erf(t / sqrt 2) ~ t P(t^2) / Q(t^2) on t in [0, C], P of degree 5, Q of degree 5 with Q(0) = 1,
by linearised least squares, P - f Q against the previous Q, with Lawson's reweighting towards the
smallest largest error of t (P / Q - f). Then the kernel's float32 evaluation (Horner with fused
multiply-adds, a division, x / 2 + (x / 2) t P / Q) is replayed over the unit test's grid and its
error printed against double precision's x erfc(-x / sqrt 2) / 2.

Needs Debian's python3-numpy. Prints the C++ lines of the coefficients.
"""
import math

import numpy as np

from rational_fit import fit_even_rational, fused

C = 5.4  # erf(C / sqrt 2) rounds to 1 in float: GELU is x beyond, 0 within 1.8e-7 below -C
P_DEG, Q_DEG = 5, 5


def fit(t, f):
    return fit_even_rational(t, f, t, P_DEG, Q_DEG, 40)


def kernel(x, p, q):
    """gelu_v in float32, step by step."""
    f32 = np.float32
    xl = np.maximum(x, f32(-C))
    t = np.minimum(xl, f32(C))
    z = t * t
    pv = fused(np.full_like(z, p[P_DEG]), z, np.full_like(z, p[P_DEG - 1]))
    for i in range(P_DEG - 2, -1, -1):
        pv = fused(pv, z, np.full_like(z, p[i]))
    qv = fused(np.full_like(z, q[Q_DEG]), z, np.full_like(z, q[Q_DEG - 1]))
    for i in range(Q_DEG - 2, -1, -1):
        qv = fused(qv, z, np.full_like(z, q[i]))
    hx = f32(0.5) * xl
    return fused(hx * t, pv / qv, hx)


def main():
    t = np.linspace(1e-6, C, 20001)
    f = np.array([math.erf(v / math.sqrt(2)) / v for v in t])
    worst, p, q = fit(t, f)
    print(f"// erf fit: largest |t (P/Q - erf(t/sqrt2)/t)| = {worst:.3g} on [0, {C}]")
    p32, q32 = p.astype(np.float32), q.astype(np.float32)
    print("// P:", ", ".join(f"{v:.9g}f" for v in p32))
    print("// Q:", ", ".join(f"{v:.9g}f" for v in q32))
    xs = np.arange(-14 * 1024, 14 * 1024 + 1) / 1024.0
    y = kernel(xs.astype(np.float32), p32, q32).astype(np.float64)
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in xs])
    rel = np.abs(y - want) / np.maximum(np.abs(xs), 1e-30)
    i = int(rel.argmax())
    print(f"// float32 replay: largest |error| / |x| = {rel[i]:.3g} at x = {xs[i]:g}")


if __name__ == "__main__":
    main()
