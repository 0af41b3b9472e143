#!/usr/bin/env python3
"""The curves of psi-kernel's CSV files, and the simulator's model fitted to them.

  fit.py FILE.csv [FILE.csv ...]     the table of the points (mean, min, max over repetitions)
                                     and the fit, on stdout

The model (hack/sim/model.h) is a Weibull curve of the load L = demand / capacity:

    some(L) = 1 - exp(-(L / scale) ** shape)

fitted by least squares (a grid over scale and shape) to every repetition of every node-level
point: CPU "some" against the demand fraction, memory "some" and "full" against the
overcommit (working set / limit).

Per workload (the child groups: w0/w1, vm4/vm2, noisy/victim), the group's own CPU "some"
against the node's and the group's own demand d (cores; psi-kernel.c's header gives each
shape's split) on C CPUs:

    own = node_some * (1 - exp(-d / (scale * C)))

node_some taken from the node curve of the simulator (MODEL_KERNEL_CPU_SCALE/SHAPE) and, to
judge the per-workload factor alone, from the node group's own reading; the share of the
node's demand (own = node_some * share ** a) is fitted beside it for comparison, and the
group's "full" as a fixed ratio of its "some". A point where the node group got less than 93 %
of min(demand, CPUs) is left out of the per-workload fit: foreign tasks took its CPUs. No
third-party modules.
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


# the simulator's node curve (hack/sim/model.h, MODEL_KERNEL_CPU_SCALE / _SHAPE)
NODE_SCALE, NODE_SHAPE = 0.922, 3.913
VICTIM_DEMAND, NOISY_THREADS = 0.1, 4


def group_demand(r):
    """The cores a child group wants, and its threads, as psi-kernel.c splits the demand."""
    demand, n, g = float(r["demand"]), int(r["threads"]), r["group"]
    if r["shape"] == "noisy":
        return (VICTIM_DEMAND, 1) if g == "victim" else (demand - VICTIM_DEMAND, NOISY_THREADS)
    if r["shape"] == "vm":
        duty = min(1.0, demand / 6)
        return (4 * duty, 4) if g == "vm4" else (2 * duty, 2)
    k = (n + 1) // 2 if g == "w0" else n // 2  # task i goes to w(i % 2)
    return k * demand / n, k


def workload_points(paths):
    """Every child group's reading with its node group's, where the node got its CPUs."""
    nodes, groups = {}, []
    for path in paths:
        for r in rows([path]):
            if r["kind"] != "cpu":
                continue
            key = (path, r["cpus"], r["shape"], r["demand_fraction"], r["rep"])
            if r["group"] == "node":
                nodes[key] = r
            else:
                groups.append((key, r))
    out, dropped = [], 0
    for key, r in groups:
        n = nodes[key]
        cpus, demand = int(r["cpus"]), float(r["demand"])
        if float(n["usage_cores"]) < 0.93 * min(demand, cpus):
            dropped += 1
            continue
        d, k = group_demand(r)
        out.append(dict(cpus=cpus, L=demand / cpus, d=d, k=k, share=d / demand, shape=r["shape"], group=r["group"],
                        node=float(n["some_pct"]) / 100, own=float(r["some_pct"]) / 100,
                        full=float(r["full_pct"]) / 100))
    return out, dropped


def pod_factor(p, scale):
    return 1 - math.exp(-p["d"] / (scale * p["cpus"]))


def rms_of(errors):
    return 100 * math.sqrt(sum(e * e for e in errors) / len(errors)), 100 * max(abs(e) for e in errors)


def fit1(points, model, lo, hi, steps=2000):
    """The parameter in lo..hi of least squared error of model(p, a) against p["own"]."""
    best = None
    for i in range(steps + 1):
        a = lo + (hi - lo) * i / steps
        e = sum((model(p, a) - p["own"]) ** 2 for p in points)
        if best is None or e < best[0]:
            best = (e, a)
    a = best[1]
    return a, rms_of([model(p, a) - p["own"] for p in points])


def workloads(paths):
    pts, dropped = workload_points(paths)
    if not pts:
        return
    noisy = [p for p in pts if p["shape"] == "noisy"]
    if noisy:
        print("noisy shape: own CPU some % by load, mean [min..max] over repetitions (node | noisy | victim)")
        cells = {}
        for p in noisy:
            cells.setdefault((p["cpus"], round(p["L"], 2), p["group"]), []).append(p)
        for c, L in sorted({(k[0], k[1]) for k in cells}):
            line = f"  {c} cpu {L:4.2f}:"
            for g in ("noisy", "victim"):
                v = cells.get((c, L, g), [])
                if not v:
                    continue
                own = [100 * p["own"] for p in v]
                if g == "noisy":
                    node = [100 * p["node"] for p in v]
                    line += f" node {statistics.mean(node):5.1f} [{min(node):5.1f}..{max(node):5.1f}] |"
                line += f" {g} {statistics.mean(own):5.1f} [{min(own):5.1f}..{max(own):5.1f}] |"
            print(line + f" ({len(v)})")
    print(f"per-workload fits ({len(pts)} group readings, {dropped} left out: node short of its CPUs)")
    curve = lambda p: weibull(p["L"], NODE_SCALE, NODE_SHAPE)
    for label, node in (("node curve", curve), ("node reading", lambda p: p["node"])):
        s, (rms, worst) = fit1(pts, lambda p, a: node(p) * pod_factor(p, a), 0.05, 3.0)
        print(f"  own = node some * (1 - exp(-d / (scale * C))), {label:12s}: scale {s:.3f}  RMS {rms:.1f} pts, "
              f"worst {worst:.1f}")
        a, (rms, worst) = fit1(pts, lambda p, a: node(p) * p["share"] ** a, 0.0, 3.0)
        print(f"  own = node some * share ** a,                 {label:12s}: a {a:.3f}      RMS {rms:.1f} pts, "
              f"worst {worst:.1f}")
    ratio = sum(p["own"] * p["full"] for p in pts) / sum(p["own"] ** 2 for p in pts)
    rms, worst = rms_of([ratio * p["own"] - p["full"] for p in pts])
    print(f"  full = ratio * own some: ratio {ratio:.3f}  RMS {rms:.1f} pts, worst {worst:.1f}")


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
    workloads(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
