#!/usr/bin/env python3
"""The curves of psi-kernel's CSV files, and the simulator's model fitted to them.

  fit.py FILE.csv [FILE.csv ...]     the table of the points (mean, min, max over repetitions)
                                     and the fit, on stdout

The model (hack/sim/model.h) is a Weibull curve of the load L = demand / capacity:

    some(L) = 1 - exp(-(L / scale) ** shape)

fitted by least squares (a grid over scale and shape) to every repetition of every node-level
point: CPU "some" against the demand fraction, memory "some" and "full" against the
overcommit (working set / limit). No third-party modules.
"""
import csv
import math
import statistics
import sys


def rows(paths):
    for p in paths:
        with open(p) as f:
            yield from csv.DictReader(line for line in f if not line.startswith("#"))


def weibull(L, scale, shape):
    return 1 - math.exp(-((L / scale) ** shape)) if L > 0 else 0.0


def fit(points):
    """points: [(L, share 0..1)]. The (scale, shape) of least squared error, and its RMS and
    largest error in percentage points."""
    def sse(s, k):
        return sum((weibull(L, s, k) - y) ** 2 for L, y in points)

    best = None
    for i in range(40, 301):  # scale 0.40 .. 3.00
        s = i / 100
        for j in range(50, 1001, 5):  # shape 0.5 .. 10
            k = j / 100
            e = sse(s, k)
            if best is None or e < best[0]:
                best = (e, s, k)
    e, s, k = best
    # refine around the grid point
    for i in range(-50, 51):
        for j in range(-25, 26):
            s2, k2 = s + i / 10000, k + j / 1000
            if s2 > 0 and k2 > 0:
                e2 = sse(s2, k2)
                if e2 < best[0]:
                    best = (e2, s2, k2)
    e, s, k = best
    rms = 100 * math.sqrt(e / len(points))
    worst = 100 * max(abs(weibull(L, s, k) - y) for L, y in points)
    return s, k, rms, worst


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cpu, mem = {}, {}
    runnable = {}
    for r in rows(argv[1:]):
        if r["group"] != "node":
            continue
        key = (int(r["cpus"]), r["shape"], float(r["demand_fraction"]))
        if r["kind"] == "cpu":
            cpu.setdefault(key, []).append(float(r["some_pct"]))
            runnable.setdefault(key, []).append((float(r["usage_cores"]), float(r["runnable"])))
        elif r["kind"] == "memory":
            mem.setdefault(key, []).append((float(r["some_pct"]), float(r["full_pct"])))

    print("CPU some %% (node group) by demand fraction: mean [min..max] (repetitions); usage and runnable, cores")
    for key in sorted(cpu):
        v = cpu[key]
        u = statistics.mean(x for x, _ in runnable[key])
        q = statistics.mean(x for _, x in runnable[key])
        print(f"  {key[0]} cpu {key[1]:7s} {key[2]:4.2f}: {statistics.mean(v):6.2f} [{min(v):6.2f}..{max(v):6.2f}] ({len(v)})"
              f"  usage {u:5.2f}  runnable {q:5.2f}")
    if mem:
        print("memory some / full %% by overcommit (working set / limit): mean [min..max]")
        for key in sorted(mem):
            s = [x for x, _ in mem[key]]
            f = [x for _, x in mem[key]]
            print(f"  x{key[2]:4.2f}: some {statistics.mean(s):6.2f} [{min(s):6.2f}..{max(s):6.2f}]"
                  f"  full {statistics.mean(f):6.2f} [{min(f):6.2f}..{max(f):6.2f}] ({len(s)})")

    print("fits: some = 1 - exp(-(L / scale) ** shape)")
    sizes = sorted({k[0] for k in cpu})
    for c in sizes + [None]:
        pts = [(k[2], y / 100) for k, v in cpu.items() if c is None or k[0] == c for y in v]
        s, k, rms, worst = fit(pts)
        label = "cpu, all sizes" if c is None else f"cpu, {c} cpu"
        print(f"  {label:16s} scale {s:.3f} shape {k:.3f}  RMS {rms:.1f} pts, worst {worst:.1f} pts ({len(pts)} points)")
    if mem:
        for i, name in ((0, "memory some"), (1, "memory full")):
            pts = [(k[2], y[i] / 100) for k, v in mem.items() for y in v]
            s, k, rms, worst = fit(pts)
            print(f"  {name:16s} scale {s:.3f} shape {k:.3f}  RMS {rms:.1f} pts, worst {worst:.1f} pts ({len(pts)} points)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
