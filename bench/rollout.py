#!/usr/bin/env python3
"""rollout.py: the migrations of a rollout side by side, from the simulator's record.

usage: bench/rollout.py RAW_DIR [--out FILE]

RAW_DIR is a bench/run.sh --keep results directory; every side-SCENARIO-CONTENDER/record.jsonl
in it is read (from run.json's t0 to t1 + 5 s). A migration is the drain's when it is an
evacuation (the eviction API's, as a drain's and the descheduler's are) whose source node was
being drained (the "drain" record's started to drained) when the migration first appeared;
every other migration is the rebalancer's (psi: targeted, not evacuations; cm: evictions of
nodes not under drain). Counted per side: succeeded migrations (all, the drains', the
rebalancer's), VMs moved more than once (all moves; and those of them with a rebalancer move),
and the moves onto a node whose drain started after the move succeeded (the rebalancer's; and
the drains' own placements, which the scheduler makes)."""
import glob
import json
import os
import sys
from datetime import datetime, timezone


def epoch(ts):
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def side(d):
    run = json.load(open(os.path.join(d, "run.json")))
    t0, t1 = run["t0"], run["t1"]
    recs = []
    for line in open(os.path.join(d, "record.jsonl")):
        try:
            r = json.loads(line)
            r["epoch"] = epoch(r["time"])
        except (ValueError, KeyError):
            continue
        if t0 <= r["epoch"] <= t1 + 5:
            recs.append(r)
    drains = {}  # node -> [started, drained, done]
    for r in recs:
        if r["type"] == "drain":
            w = drains.setdefault(r["node"], [None, None, None])
            w[["started", "drained", "done"].index(r["phase"])] = r["epoch"]
    first, ok = {}, {}
    for r in recs:
        if r["type"] != "migration":
            continue
        first.setdefault(r["name"], r)
        if r.get("phase") == "Succeeded":
            ok[r["name"]] = r

    def under_drain(node, t):
        w = drains.get(node)
        return bool(w and w[0] is not None and w[0] - 1 <= t <= (w[1] or w[2] or t1 + 5) + 1)

    moves = []
    for name, r in ok.items():
        f = first[name]
        src = r.get("source") or f.get("source")
        by_drain = r.get("evacuation") == "true" and under_drain(src, f["epoch"])
        moves.append({"vmi": r["vmi"], "source": src, "target": r.get("target"), "started": f["epoch"] - t0,
                      "succeeded": r["epoch"] - t0, "by": "drain" if by_drain else "rebalancer"})
    moves.sort(key=lambda m: m["succeeded"])
    per_vmi = {}
    for m in moves:
        per_vmi.setdefault(m["vmi"], []).append(m)

    def onto_later_drain(m):
        w = drains.get(m["target"])
        return bool(w and w[0] is not None and w[0] - t0 > m["succeeded"])

    reb = [m for m in moves if m["by"] == "rebalancer"]
    return {
        "contender": run["contender"], "scenario": run["scenario"], "minutes": round((t1 - t0) / 60, 1),
        "drains": {n: [round(x - t0, 1) if x else None for x in w] for n, w in sorted(drains.items())},
        "migrations_succeeded": len(moves),
        "by_drain": len(moves) - len(reb),
        "by_rebalancer": len(reb),
        "vms_moved_more_than_once": sum(1 for v in per_vmi.values() if len(v) > 1),
        "vms_moved_more_than_once_with_a_rebalancer_move":
            sum(1 for v in per_vmi.values() if len(v) > 1 and any(m["by"] == "rebalancer" for m in v)),
        "rebalancer_moves_onto_a_node_drained_later": sum(1 for m in reb if onto_later_drain(m)),
        "drain_placements_onto_a_node_drained_later":
            sum(1 for m in moves if m["by"] == "drain" and onto_later_drain(m)),
        "moves": [{**m, "started": round(m["started"], 1), "succeeded": round(m["succeeded"], 1)} for m in moves],
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = None
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
    sides = []
    for d in sorted(glob.glob(os.path.join(sys.argv[1], "side-*"))):
        if os.path.exists(os.path.join(d, "run.json")) and os.path.exists(os.path.join(d, "record.jsonl")):
            sides.append(side(d))
    cols = ["migrations_succeeded", "by_drain", "by_rebalancer", "vms_moved_more_than_once",
            "vms_moved_more_than_once_with_a_rebalancer_move", "rebalancer_moves_onto_a_node_drained_later",
            "drain_placements_onto_a_node_drained_later"]
    for s in sides:
        print(s["scenario"], s["contender"], " ".join(f"{c}={s[c]}" for c in cols))
    if out:
        with open(out, "w") as f:
            json.dump({"sides": sides}, f, indent=1)


if __name__ == "__main__":
    main()
