#!/usr/bin/env bash
# The monitoring assets, checked with the real tools (no test bed needed):
# - config/prometheus/rules.yaml (a PrometheusRule): its spec passes `promtool check rules`
#   and the unit tests of rules_test.yaml (`promtool test rules`: each alert fires under some
#   input series and stays silent under others);
# - every alert has a summary, a description and a runbook_url naming docs/runbooks/<alert>.md,
#   which exists and says what to check and what to do;
# - every query of the dashboard (config/dashboards/psi-rebalancer.json) parses as PromQL
#   (`promtool check rules` on them as recording rules, its variables replaced by a regex).
set -euo pipefail
src=${PSI_SOURCE_DIR:?}
here=$(cd "$(dirname "$0")" && pwd)
promtool=$(command -v promtool) || { echo "promtool not found (Debian's prometheus package: hack/deps.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$src" "$work" <<'PY'
import json, os, re, sys
import yaml
src, work = sys.argv[1], sys.argv[2]
bad = []
d = yaml.safe_load(open(os.path.join(src, "config/prometheus/rules.yaml")))
if d.get("kind") != "PrometheusRule":
    bad.append("config/prometheus/rules.yaml is not a PrometheusRule")
yaml.safe_dump(d["spec"], open(os.path.join(work, "rules.yaml"), "w"))
alerts = 0
for g in d["spec"]["groups"]:
    for r in g["rules"]:
        if "alert" not in r:
            continue
        alerts += 1
        name, ann = r["alert"], r.get("annotations") or {}
        for k in ("summary", "description", "runbook_url"):
            if not str(ann.get(k, "")).strip():
                bad.append(f"{name}: no {k}")
        want = f"docs/runbooks/{name}.md"
        if ann.get("runbook_url") != want:
            bad.append(f"{name}: runbook_url {ann.get('runbook_url')!r}, want {want!r}")
        path = os.path.join(src, want)
        if not os.path.isfile(path):
            bad.append(f"{name}: {want} does not exist")
            continue
        text = open(path).read()
        for section in ("## Meaning", "## What to check", "## What to do"):
            if section not in text:
                bad.append(f"{want}: no '{section}' section")
        if name not in text.splitlines()[0]:
            bad.append(f"{want}: its title does not name {name}")
if alerts < 7:
    bad.append(f"only {alerts} alerts")
# the dashboard's queries as recording rules, for promtool to parse
dash = json.load(open(os.path.join(src, "config/dashboards/psi-rebalancer.json")))
rules, n = [], 0
for p in dash.get("panels", []):
    if p.get("type") == "row":
        continue
    targets = p.get("targets") or []
    if not targets:
        bad.append(f"dashboard panel {p.get('title')!r} has no query")
    for t in targets:
        expr = re.sub(r"\$\{?\w+\}?", ".*", t.get("expr", ""))
        n += 1
        rules.append({"record": f"dashboard:query_{n}", "expr": expr})
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(os.path.join(work, "dashboard-queries.yaml"), "w"))
print(f"{alerts} alerts, {n} dashboard queries")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
PY
cp "$here/rules_test.yaml" "$work/"
"$promtool" check rules "$work/rules.yaml"
"$promtool" check rules "$work/dashboard-queries.yaml"
"$promtool" test rules "$work/rules_test.yaml"
