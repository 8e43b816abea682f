#!/usr/bin/python3
"""Fits the rational tanh of the native kernels (lib/cpu/vmath_impl.inc's tanh_scaled) and checks it.

tanh(t) ~ t P(t^2) / Q(t^2) on t in [0, FIT], P and Q of degree 4 in t^2, by linearised least
squares (P - f Q against the previous Q) with Lawson's reweighting towards the smallest largest
relative error, then Q made monic so that the kernel's first Horner step of Q is an add.

The kernel saturates by clamping x to [-C, C]. Near 1 the roundings of P / Q (a few ulp) would
carry it past 1, so C is the last point before the float32 evaluation first exceeds 1 over every
float of [3, FIT], with fused and with separate multiply-adds (the portable build's): tanh stays in
[-1, 1], at the price of saturating 4 ulp below 1. The kernel is then replayed for tanh(x) and for
the LSTM gates' sigmoid, tanh(x / 2) / 2 + 1 / 2 with the halvings folded into the coefficients,
and their errors printed against double precision.

Needs Debian's python3-numpy. Prints the coefficients as the kernel writes them.
"""
import numpy as np

from rational_fit import fit_even_rational, fused

FIT = 9.01  # 1 - tanh(FIT) < 2^-25: tanh rounds to +-1 in float beyond
C = 8.0  # the clamp: below the first float where the evaluation exceeds 1 (main checks it)
P_DEG, Q_DEG = 4, 4


def fit(t):
    """(largest relative error, P, Q monic) in float32, coefficients of powers of t^2."""
    worst, p, q = fit_even_rational(t, np.tanh(t) / t, t / np.tanh(t), P_DEG, Q_DEG, 80, scale=t.max())
    return worst, (p / q[Q_DEG]).astype(np.float32), (q / q[Q_DEG]).astype(np.float32)


def separate(a, b, c):
    """a * b + c with two roundings to float32."""
    return a.astype(np.float32) * b.astype(np.float32) + c.astype(np.float32)


def kernel(x, p, q, F=0, G=0, fma=fused, clamp=None):
    """tanh_scaled<F, G> in float32, step by step: 2^-G tanh(2^-F x)."""
    f, g = 2.0**-F, 2.0**-G
    s = f**-8  # keeps Q monic in x
    pp = [np.float32(p[k] * g * f ** (2 * k + 1) * s) for k in range(P_DEG + 1)]
    qq = [np.float32(q[k] * f ** (2 * k) * s) for k in range(Q_DEG + 1)]
    c = np.float32((C if clamp is None else clamp) / f)
    x = np.minimum(c, np.maximum(-c, x))
    z = x * x
    pv = fma(np.full_like(z, pp[P_DEG]), z, np.full_like(z, pp[P_DEG - 1]))
    for k in range(P_DEG - 2, -1, -1):
        pv = fma(pv, z, np.full_like(z, pp[k]))
    qv = z + qq[Q_DEG - 1]
    for k in range(Q_DEG - 2, -1, -1):
        qv = fma(qv, z, np.full_like(z, qq[k]))
    return (x * pv) / qv


def main():
    worst, p, q = fit(np.linspace(1e-6, FIT, 60001))
    print(f"// tanh fit: largest relative error {worst:.3g} on [0, {FIT}]")
    print("// P:", ", ".join(f"{v:.9g}f" for v in p))
    print("// Q:", ", ".join(f"{v:.9g}f" for v in q))
    every = np.arange(np.float32(3).view(np.uint32), np.float32(FIT).view(np.uint32) + 1, dtype=np.uint32).view(np.float32)
    over = np.zeros(every.shape, bool)
    for fma in (fused, separate):
        over |= kernel(every, p, q, fma=fma, clamp=2 * FIT) > 1
        over |= kernel(2 * every, p, q, 1, 1, fma=fma, clamp=2 * FIT) + np.float32(0.5) > 1  # the same t = x / 2
    first = every[np.argmax(over)] if over.any() else None
    print(f"// the evaluation first exceeds 1 at x = {first}; the clamp C = {C}")
    assert first is None or C < first
    xs = np.concatenate([np.linspace(-20, 20, 600001), np.linspace(-1e-3, 1e-3, 20001)]).astype(np.float32)
    want = np.tanh(xs.astype(np.float64))
    err = np.abs(kernel(xs, p, q).astype(np.float64) - want)
    nz = np.abs(want) > 1e-30
    print(f"// float32 replay, tanh: largest abs error {err.max():.3g}, relative {(err[nz] / np.abs(want[nz])).max():.3g}")
    gate = kernel(xs, p, q, 1, 1) + np.float32(0.5)
    sig = 1 / (1 + np.exp(-xs.astype(np.float64)))
    print(f"// float32 replay, gate sigmoid: largest abs error {np.abs(gate - sig).max():.3g}")


if __name__ == "__main__":
    main()
