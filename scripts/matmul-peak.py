#!/usr/bin/env python3
"""The machine's float32 matrix-multiply rate, measured with NumPy (OpenBLAS), as the yardstick
for `camelot bench net` (issue: the default network must reach >= 45% of it at batch >= 64).

Run it the way docs/BENCHMARKS.md records it:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/matmul-peak.py

(the workplace presets of those two variables halve OpenBLAS's speed). Prints one line per
size and a last line `peak: G GFLOP/s (f32, N x N)`.
"""
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("numpy is missing: pip install numpy")


def rate(n: int, seconds: float) -> float:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b  # warm-up: thread pool and caches
    runs = 0
    start = time.perf_counter()
    while True:
        a @ b
        runs += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return 2.0 * n**3 * runs / elapsed / 1e9


def main() -> None:
    seconds = float(os.environ.get("MATMUL_SECONDS", "2"))
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print(f"warning: {var}={os.environ[var]} is set; it slows OpenBLAS down", file=sys.stderr)
    best = (0.0, 0)
    for n in (512, 1024, 2048, 4096):
        g = rate(n, seconds)
        print(f"matmul {n} x {n}: {g:.1f} GFLOP/s")
        best = max(best, (g, n))
    print(f"peak: {best[0]:.1f} GFLOP/s (f32, {best[1]} x {best[1]})")


if __name__ == "__main__":
    main()
