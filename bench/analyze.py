#!/usr/bin/env python3
"""Figures of bench/run.sh from its raw files (no network).

  analyze.py scale  --dir D --nodes N --audit AUDIT_LOG --interval S --sustain S  > result.json
  analyze.py report --dir RUN_DIR --out FILE [--meta k=v ...]   table on stdout, JSON to FILE
  analyze.py table  FILE                                          the table of a results file
"""
import argparse
import datetime
import glob
import json
import os
import re
import statistics
import sys

OPERATOR_USER = "system:serviceaccount:psi-rebalancer:psi-rebalancer"
TAINT_ABOVE = 25.0


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def part_at_max(proc, key):
    """The given part of the RSS (MiB) in the sample where the whole RSS was largest."""
    rss, part = proc.get("rss_kib") or [], proc.get(key) or []
    if not rss or len(part) != len(rss):
        return None
    return round(part[rss.index(max(rss))] / 1024, 2)


def heap_stacks_max(proc):
    """The largest sample of anonymous RSS less the pages of mapped files written (MiB)."""
    anon, lib = proc.get("rss_anon_kib") or [], proc.get("lib_anon_kib") or []
    if not anon or len(lib) != len(anon):
        return None
    return round(max(a - l for a, l in zip(anon, lib)) / 1024, 2)


def heap_stacks_hwm(proc):
    """The window's peak RSS less the file-backed RSS and the libraries' written pages at its
    end (MiB): the peak of heap and stacks, within the growth of the libraries' part."""
    files, lib = proc.get("rss_file_kib") or [], proc.get("lib_anon_kib") or []
    if not files or not lib:
        return None
    return round((proc["hwm_kib"] - files[-1] - lib[-1]) / 1024, 2)


def smaps(path):
    """The operator's mappings at the end of a window (a copy of /proc/PID/smaps), summed per
    file: resident KiB, and of it the pages made private by writing (relocations, data: these
    count in RssAnon, not RssFile); and the anonymous mappings ([heap], [stack], the rest)."""
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    per, name = {}, None
    for ln in lines:
        head = ln.split()
        if head and re.match(r"^[0-9a-f]+-[0-9a-f]+$", head[0]):
            name = head[5] if len(head) > 5 else "[anon]"
            name = os.path.basename(name) if name.startswith("/") else name
            per.setdefault(name, {"rss_kib": 0, "anon_kib": 0})
        elif name and head and head[0] in ("Rss:", "Anonymous:"):
            per[name]["rss_kib" if head[0] == "Rss:" else "anon_kib"] += int(head[1])
    files = {k: v for k, v in per.items() if not k.startswith("[")}
    return {"files": dict(sorted(files.items(), key=lambda kv: -kv[1]["rss_kib"])),
            "files_rss_kib": sum(v["rss_kib"] for v in files.values()),
            "files_anon_kib": sum(v["anon_kib"] for v in files.values()),
            "anonymous": {k: v["rss_kib"] for k, v in per.items() if k.startswith("[")}}


def iso(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


# ---- Prometheus text format ----
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)')


def parse_metrics(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = LINE.match(line)
                if not m:
                    continue
                labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3) or ""))
                try:
                    out.append((m.group(1), labels, float(m.group(4))))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def msum(samples, name, **want):
    return sum(v for n, l, v in samples if n == name and all(l.get(k) == w for k, w in want.items()))


def quantile(q, buckets):
    """histogram_quantile over cumulative (le, count) pairs, linear inside a bucket."""
    buckets = sorted(buckets)
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if le == float("inf"):
                return prev_le
            if c == prev_c:
                return le
            return prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
        prev_le, prev_c = le, c
    return prev_le


def hist_delta(a, b, name):
    def bk(s):
        return {float(l["le"]): v for n, l, v in s if n == name + "_bucket"}
    ba, bb = bk(a), bk(b)
    return [(le, bb[le] - ba.get(le, 0.0)) for le in bb]


# ---- audit log ----
def audit_events(path):
    ev = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("user", {}).get("username") != OPERATOR_USER:
                    continue
                ref = e.get("objectRef", {})
                ev.append({"t": iso(e["stageTimestamp"]), "verb": e.get("verb"), "resource": ref.get("resource", ""),
                           "sub": ref.get("subresource", ""), "name": ref.get("name", ""),
                           "code": e.get("responseStatus", {}).get("code")})
    except OSError:
        pass
    return ev


def by_resource(events, t0, t1):
    out = {}
    for e in events:
        if t0 <= e["t"] < t1:
            k = f'{e["verb"]} {e["resource"]}{"/" + e["sub"] if e["sub"] else ""}'
            out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))


def by_verb(events, t0, t1):
    out = {}
    for e in events:
        if t0 <= e["t"] < t1:
            out[e["verb"]] = out.get(e["verb"], 0) + 1
    return out


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    k = q * (len(xs) - 1)
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def window(d, name, events, interval):
    s0, s1 = load(f"{d}/{name}0.json"), load(f"{d}/{name}1.json")
    proc = load(f"{d}/{name}.proc")
    if not s0 or not s1 or not proc:
        return None
    m0, m1 = parse_metrics(f"{d}/{name}0.metrics"), parse_metrics(f"{d}/{name}1.metrics")
    secs = s1["t"] - s0["t"]
    cycles = secs / interval
    h = hist_delta(m0, m1, "psi_rebalancer_reconcile_duration_seconds")
    rec = msum(m1, "psi_rebalancer_reconciles_total") - msum(m0, "psi_rebalancer_reconciles_total")
    verbs = by_verb(events, s0["t"], s1["t"])
    rss = proc["rss_kib"]
    p50, p99 = quantile(0.5, h), quantile(0.99, h)
    hs = hist_delta(m0, m1, "psi_rebalancer_pressure_sample_duration_seconds")
    s50, s99 = quantile(0.5, hs), quantile(0.99, hs)
    return {
        "seconds": round(secs, 1),
        "rss_mib_max": round(max(rss) / 1024, 2) if rss else None,
        "rss_mib_mean": round(statistics.mean(rss) / 1024, 2) if rss else None,
        "rss_hwm_mib": round(proc["hwm_kib"] / 1024, 2),
        # the parts of the largest sample: the heap and stacks, and the mapped shared libraries
        "rss_anon_mib_at_max": part_at_max(proc, "rss_anon_kib"),
        "rss_file_mib_at_max": part_at_max(proc, "rss_file_kib"),
        "rss_anon_mib_max": round(max(proc["rss_anon_kib"]) / 1024, 2) if proc.get("rss_anon_kib") else None,
        # heap and stacks: the anonymous RSS less the libraries' written pages, at the largest
        # sample, and at the window's peak (VmHWM less the file-backed RSS and those pages at
        # the end: the libraries' part does not shrink)
        "heap_stacks_mib_max": heap_stacks_max(proc),
        "heap_stacks_hwm_mib": heap_stacks_hwm(proc),
        "smaps_at_end": smaps(f"{d}/{name}.smaps"),
        "cpu_s_per_min": round(proc["cpu_s"] / (proc["t1"] - proc["t0"]) * 60, 3),
        "reconciles": int(rec),
        "reconcile_ms_p50": round(p50 * 1000, 2) if p50 is not None else None,
        "reconcile_ms_p99": round(p99 * 1000, 2) if p99 is not None else None,
        # the part of a cycle spent reading the pressure (the PromQL query and its reply)
        "sample_ms_p50": round(s50 * 1000, 2) if s50 is not None else None,
        "sample_ms_p99": round(s99 * 1000, 2) if s99 is not None else None,
        "api_requests_per_min_by_verb": {k: round(v / secs * 60, 1) for k, v in sorted(verbs.items())},
        "api_requests_by_method_operator_metric": {
            m: msum(m1, "psi_rebalancer_api_requests_total", method=m) - msum(m0, "psi_rebalancer_api_requests_total", method=m)
            for m in sorted({l.get("method") for n, l, v in m1 if n == "psi_rebalancer_api_requests_total"})},
        "api_requests_by_verb_resource": by_resource(events, s0["t"], s1["t"]),
        "list_calls": verbs.get("list", 0),
        "status_writes_per_cycle": round((msum(m1, "psi_rebalancer_status_writes_total") -
                                          msum(m0, "psi_rebalancer_status_writes_total")) / cycles, 3),
        "promql_queries_per_cycle": round((s1["prom_queries"] - s0["prom_queries"]) / cycles, 3),
        "taint_transitions": msum(m1, "psi_rebalancer_taint_transitions_total") -
        msum(m0, "psi_rebalancer_taint_transitions_total"),
    }


def scale(a):
    d = a.dir
    events = audit_events(a.audit)
    start = load(f"{d}/start.json", {}).get("t", 0)
    steady0 = load(f"{d}/steady0.json", {}).get("t")
    out = {"nodes": a.nodes, "steady": window(d, "steady", events, a.interval),
           "storm": window(d, "storm", events, a.interval)}
    mine = [e for e in events if e["t"] >= start]
    if steady0:
        out["list_calls_startup"] = sum(1 for e in mine if e["verb"] == "list" and e["t"] < steady0)
        out["list_calls_after_startup"] = sum(1 for e in mine if e["verb"] == "list" and e["t"] >= steady0)
        out["api_requests_startup_by_verb_resource"] = by_resource(events, start, steady0)
        out["list_after_startup_detail"] = sorted({f'{e["resource"]}' for e in mine
                                                   if e["verb"] == "list" and e["t"] >= steady0})
    storm = load(f"{d}/storm.json")
    cross = load(f"{d}/crossings.json")
    if storm and cross:
        first_cross = {}
        for r in cross.get("data", {}).get("result", []):
            inst = r["metric"].get("instance")
            ts = [float(t) for t, v in r["values"]]
            if inst and ts:
                first_cross[inst] = min(ts)
        nodes = set(storm["nodes"])
        taint = {}
        for e in events:
            if e["verb"] == "patch" and e["resource"] == "nodes" and e["name"] in nodes and e["t"] >= storm["t"]:
                taint[e["name"]] = min(taint.get(e["name"], 1e18), e["t"])
        lat = [taint[n] - first_cross[n] - a.sustain for n in nodes if n in taint and n in first_cross]
        total = [taint[n] - storm["t"] for n in nodes if n in taint]
        out["reaction"] = {
            "crossings": len(nodes), "measured": len(lat), "not_tainted": len(nodes - set(taint)),
            "beyond_sustain_s_p50": round(pct(lat, 0.5), 3) if lat else None,
            "beyond_sustain_s_p99": round(pct(lat, 0.99), 3) if lat else None,
            "beyond_sustain_s_max": round(max(lat), 3) if lat else None,
            "step_to_taint_s_max": round(max(total), 3) if total else None,
            "target_s": a.interval + 1,
        }
        out["storm_end"] = load(f"{d}/storm-end.json")
    out["status_size"] = {w: load(f"{d}/status-{w}.json") for w in ("steady", "storm")}
    try:
        with open(f"{d}/exporter-deaths") as f:
            out["exporter_deaths"] = sum(1 for _ in f)
    except OSError:
        out["exporter_deaths"] = 0
    dp = load(f"{d}/desched.proc")
    if dp:
        out["descheduler_lnu_requests"] = {
            "rss_mib_max": round(max(dp["rss_kib"]) / 1024, 2) if dp["rss_kib"] else None,
            "rss_hwm_mib": round(dp["hwm_kib"] / 1024, 2),
            "cpu_s_per_min": round(dp["cpu_s"] / (dp["t1"] - dp["t0"]) * 60, 3),
            "interval_s": 5,
        }
    json.dump(out, sys.stdout, indent=1)


# ---- side by side ----
def side(d):
    run = load(f"{d}/run.json")
    if not run:
        return {"error": open(f"{d}/error").read().strip() if os.path.exists(f"{d}/error") else "no run"}
    t0, t1 = run["t0"], run["t1"]
    recs = []
    try:
        with open(f"{d}/record.jsonl") as f:
            for line in f:
                try:
                    r = json.loads(line)
                    r["epoch"] = iso(r["time"])
                    recs.append(r)
                except (ValueError, KeyError):
                    pass
    except OSError:
        pass
    inrun = [r for r in recs if t0 <= r["epoch"] <= t1 + 5]
    mig_ok = {}
    for r in inrun:
        if r["type"] == "migration" and r.get("phase") == "Succeeded":
            mig_ok[r["name"]] = r
    migs_all = {r["name"] for r in inrun if r["type"] == "migration"}
    per_vmi = {}
    for r in mig_ok.values():
        per_vmi[r["vmi"]] = per_vmi.get(r["vmi"], 0) + 1
    evictions = [r for r in inrun if r["type"] == "eviction"]
    # phases: the scenario's demand changes split the run
    changes = sorted({round(r["epoch"]) for r in recs if r["type"] == "demand" and t0 <= r["epoch"] <= t1})
    bounds = [t0] + changes + [t1]
    # the maximum node pressure over time per resource, rate over 1m (the OpenShift query), percent
    per_res = {}
    for res, f in (("cpu", "pressure.json"), ("memory", "pressure-memory.json")):
        series = {}
        for r in load(f"{d}/{f}", {}).get("data", {}).get("result", []):
            # the previous scenario on the same bed still has samples inside the first [1m]
            if r["metric"].get("sim_scenario", run["scenario"]) != run["scenario"]:
                continue
            for t, v in r["values"]:
                series.setdefault(float(t), []).append(float(v))
        per_res[res] = {t: max(vs) for t, vs in series.items()}
    # balanced: below the taint threshold on every resource
    times = sorted(set().union(*(set(x) for x in per_res.values())))
    mx = [(t, max(x.get(t, 0) for x in per_res.values())) for t in times]
    balance = []
    for i in range(len(bounds) - 1):
        a_, b_ = bounds[i], bounds[i + 1]
        pts = [(t, v) for t, v in mx if a_ <= t < b_]
        if not pts:
            balance.append(None)
            continue
        # balanced from the first point after which every point of the phase stays below the taint threshold
        when = None
        for j in range(len(pts)):
            if all(v < TAINT_ABOVE for _, v in pts[j:]):
                when = pts[j][0] - a_
                break
        balance.append(round(when, 1) if when is not None else None)
    vals = [v for _, v in mx]
    by_res = {}
    for res, x in per_res.items():
        v = [x[t] for t in sorted(x)]
        by_res[res] = {"max_pct": round(max(v), 1) if v else None, "final_max_pct": round(v[-1], 1) if v else None}
    return {
        "contender": run["contender"], "scenario": run["scenario"], "minutes": round((t1 - t0) / 60, 1),
        "optimum_migrations": run.get("optimum"),
        "migrations_succeeded": len(mig_ok), "migrations_started": len(migs_all),
        "eviction_requests": len(evictions),
        "repeated_moves": sum(c - 1 for c in per_vmi.values() if c > 1),
        "vmis_moved_more_than_once": sorted(v for v, c in per_vmi.items() if c > 1),
        "time_to_balance_s_by_phase": balance,
        "max_pressure_pct": round(max(vals), 1) if vals else None,
        "mean_of_max_pressure_pct": round(statistics.mean(vals), 1) if vals else None,
        "seconds_above_taint": round(5 * sum(1 for v in vals if v >= TAINT_ABOVE), 0),
        "final_max_pressure_pct": round(vals[-1], 1) if vals else None,
        "pressure_by_resource": by_res,
        "prediction_error": prediction_error(d),
    }


def prediction_error(d):
    """psi-rebalancer's own check of its predictions (/metrics at the end): mean |observed -
    predicted| of sources and destinations, percentage points, over the moves checked."""
    m = parse_metrics(f"{d}/operator.metrics") if os.path.exists(f"{d}/operator.metrics") else None
    if not m:
        return None
    n = msum(m, "psi_rebalancer_predictions_checked_total")
    if not n:
        return {"checked": 0}
    out = {"checked": int(n)}
    for role in ("source", "destination"):
        out[f"{role}_mean_points"] = round(msum(m, "psi_rebalancer_prediction_error_percent_total", role=role) / n, 1)
    return out


NAMES = {"psi": "psi-rebalancer", "psi-defaults": "psi-rebalancer, CRD defaults", "req": "descheduler LNU requests",
         "prom": "descheduler LNU Prometheus PSI", "cm": "descheduler KubeVirtRelieveAndMigrate CPU+memory"}


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return ",".join(fmt(x) for x in v)
    return str(v)


def table(doc):
    lines = []
    sc = doc.get("scale", [])
    if sc:
        lines.append("Scale (operator; each cell: steady / storm)")
        hdr = ["nodes", "RSS MiB", "RSS anon+file", "heap+stacks max, peak", "CPU s/min", "rec p50 ms", "rec p99 ms", "of which query p50", "req/min by verb", "LIST after start",
               "status w/cycle", "PromQL/cycle"]
        lines.append(" | ".join(hdr))
        for s in sc:
            st, sm = s.get("steady") or {}, s.get("storm") or {}
            def two(k):
                return f'{fmt(st.get(k))} / {fmt(sm.get(k))}'
            verbs = lambda w: " ".join(f"{k}={v:g}" for k, v in (w.get("api_requests_per_min_by_verb") or {}).items()) or "-"
            split = lambda w: f'{fmt(w.get("rss_anon_mib_at_max"))}+{fmt(w.get("rss_file_mib_at_max"))}'
            hs = lambda w: f'{fmt(w.get("heap_stacks_mib_max"))}, {fmt(w.get("heap_stacks_hwm_mib"))}'
            lines.append(" | ".join([str(s["nodes"]), two("rss_mib_max"), f"{split(st)} / {split(sm)}", f"{hs(st)} / {hs(sm)}",
                                     two("cpu_s_per_min"), two("reconcile_ms_p50"),
                                     two("reconcile_ms_p99"), two("sample_ms_p50"), f"{verbs(st)} / {verbs(sm)}",
                                     fmt(s.get("list_calls_after_startup")), two("status_writes_per_cycle"),
                                     two("promql_queries_per_cycle")]))
        lines.append("")
        lines.append("Status size after the window (bytes of .status, entries in status.nodes): steady / storm")
        for s in sc:
            z = s.get("status_size") or {}
            cell = lambda w: f'{fmt((z.get(w) or {}).get("bytes"))} B, {fmt((z.get(w) or {}).get("node_entries"))}'
            lines.append(f'{s["nodes"]} nodes: {cell("steady")} / {cell("storm")}')
        lines.append("")
        lines.append("Reaction (taint time - crossing in Prometheus - sustain), seconds")
        for s in sc:
            r = s.get("reaction")
            if r:
                lines.append(f'{s["nodes"]} nodes: {r["measured"]}/{r["crossings"]} crossings, p50 {fmt(r["beyond_sustain_s_p50"])}'
                             f' p99 {fmt(r["beyond_sustain_s_p99"])} max {fmt(r["beyond_sustain_s_max"])} (target <= {r["target_s"]})')
        for s in sc:
            d = s.get("descheduler_lnu_requests")
            if d:
                st = s.get("steady") or {}
                lines.append("")
                lines.append(f'At {s["nodes"]} nodes: psi-rebalancer RSS {fmt(st.get("rss_mib_max"))} MiB, CPU {fmt(st.get("cpu_s_per_min"))} s/min;'
                             f' descheduler RSS {fmt(d["rss_mib_max"])} MiB, CPU {fmt(d["cpu_s_per_min"])} s/min (every 5 s)')
        for f in doc.get("scale_failures", []):
            lines.append(f"size {f['nodes']}: {f['error']}")
    sd = doc.get("sides", [])
    if sd:
        lines.append("")
        lines.append("Side by side (sim scenarios)")
        lines.append("scenario | contender | migrations (optimum) | repeated | time to balance s (per phase) | final max cpu / memory % | "
                     "max cpu / memory % | s above 25 % | prediction error src / dst points")
        for s in sd:
            if "error" in s:
                lines.append(f'{s.get("scenario", "?")} | {s.get("contender", "?")} | error: {s["error"]}')
                continue
            r = s.get("pressure_by_resource") or {}
            two = lambda k: f'{fmt((r.get("cpu") or {}).get(k))} / {fmt((r.get("memory") or {}).get(k))}'
            pe = s.get("prediction_error") or {}
            pred = f'{fmt(pe.get("source_mean_points"))} / {fmt(pe.get("destination_mean_points"))} ({pe["checked"]} moves)' if pe.get("checked") else "-"
            lines.append(" | ".join([s["scenario"], NAMES.get(s["contender"], s["contender"]),
                                     f'{s["migrations_succeeded"]} ({fmt(s.get("optimum_migrations"))})',
                                     str(s["repeated_moves"]), fmt(s["time_to_balance_s_by_phase"]),
                                     two("final_max_pct"), two("max_pct"), fmt(s["seconds_above_taint"]), pred]))
    return "\n".join(lines)


def report(a):
    doc = {"meta": dict(kv.split("=", 1) for kv in a.meta or []), "scale": [], "sides": []}
    doc["meta"]["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    for d in sorted(glob.glob(f"{a.dir}/scale-*"), key=lambda p: int(p.rsplit("-", 1)[1])):
        r = load(f"{d}/result.json")
        if r:
            doc["scale"].append(r)
        else:
            doc.setdefault("scale_failures", []).append({"nodes": int(d.rsplit("-", 1)[1]), "error": "no result (see the run log)"})
    for d in sorted(glob.glob(f"{a.dir}/side-*")):
        doc["sides"].append(side(d))
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(table(doc))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scale")
    s.add_argument("--dir", required=True)
    s.add_argument("--nodes", type=int, required=True)
    s.add_argument("--audit", required=True)
    s.add_argument("--interval", type=float, default=5)
    s.add_argument("--sustain", type=float, default=10)
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--meta", nargs="*")
    t = sub.add_parser("table")
    t.add_argument("file")
    t.add_argument("--side-dir", nargs="*")
    a = p.parse_args()
    if a.cmd == "scale":
        scale(a)
    elif a.cmd == "report":
        report(a)
    else:
        print(table(load(a.file)))


if __name__ == "__main__":
    main()
