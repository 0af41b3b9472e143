#!/usr/bin/env python3
"""Docs and code kept together, mechanically.

The code side: the condition reasons, Event reasons and metric names the operator can emit,
found in controller/, kube/ and api/reasons.h (a reason #define, a string literal or a reason
constant passed as the reason of conditions_set, notify_event, act_event, the MachineConfig
event, cycle_verdict_set or a failed cycle; a "psi_rebalancer_..." string literal for a
metric; the condition reasons of api/reasons.h count whole, its Event reasons where they are
recorded).

The docs side: docs/status.md, the reference (tables whose first column is a backticked name
under the headings "Condition reasons", "Event reasons" and "Metrics"), plus every reason the
README's tables and the CRD's descriptions name ("reason X") and every psi_rebalancer_ metric
that README.md, docs/, crds/ and config/prometheus mention.

Checks: every reason and metric the docs name exists in the code, and every one the code
emits is in docs/status.md. And meanings, where they are mechanical:
- the labels the shipped rules and dashboard use on a psi_rebalancer_ metric (in a selector
  {label=...}, or in by/without of an aggregation over it) are labels the code registers for
  it (psi_metrics_gauge/counter/histogram's label list; le for a histogram's buckets), or
  the scrape's own (job, instance);
- every spec./status. field path README.md and docs/runbooks/ name in backticks is a field of
  the CRD's schema;
- the namespace the runbooks start from (NS=), when they name one rather than find it with a
  command (whose result the docs run, tests/e2e/docs, checks on the test bed), is the one the
  CSV suggests.
Prints what differs; exits 1 when anything does.

    docs_vs_code.py SOURCE_DIR
"""
import json
import pathlib
import re
import sys

import yaml

CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def c_files(root):
    files = sorted(p for d in ("controller", "kube") for p in (root / d).rglob("*") if p.suffix in (".c", ".h"))
    return files + [root / "api" / "reasons.h"]  # the list of reasons the code names by constant


def constants(paths):
    """Every string #define of the files, aliases (#define A B) resolved: name -> value."""
    strings, aliases = {}, {}
    for path in paths:
        text = strip_comments(path.read_text())
        strings.update(re.findall(r'#define\s+(\w+)\s+"([A-Za-z0-9]+)"', text))
        aliases.update(re.findall(r"#define\s+(\w+)\s+([A-Z][A-Z0-9_]+)\s*$", text, re.M))
    for _ in range(4):
        for name, target in aliases.items():
            if target in strings:
                strings.setdefault(name, strings[target])
    return strings


def reasons_in(arg, consts):
    """The reason strings an argument names: literals and constants."""
    found = set(re.findall(r'"([A-Za-z][A-Za-z0-9]*)"', arg))
    found.update(consts[n] for n in re.findall(r"\b([A-Z][A-Z0-9_]+)\b", arg) if n in consts)
    return found - {"Normal", "Warning"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def call_args(text, start):
    """The top-level arguments of the call whose '(' is at start, as source strings."""
    depth, args, cur, i, quote = 0, [], [], start, None
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\":
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    return args


# function name -> index of its reason argument
REASON_ARG = {
    "conditions_set": 3,
    "notify_event": 3,
    "act_event": 2,
    "event": 2,  # mcsync's static event(m, in, reason, ...)
    "cycle_verdict_set": 2,
    "fail": 1,  # reconciler's static fail(v, reason, ...)
}
EVENT_FUNCS = {"notify_event", "act_event", "event"}


def code_side(root):
    conditions, events, metrics, literals = set(), set(), set(), set()
    call = re.compile(r"\b(%s)\s*\(" % "|".join(REASON_ARG))
    consts = constants(c_files(root))
    for path in c_files(root):
        text = strip_comments(path.read_text())
        literals.update(re.findall(r'"([A-Za-z][A-Za-z0-9]*)"', text))
        metrics.update(re.findall(r'"(psi_rebalancer_[a-z0-9_]*[a-z0-9])"', text))
        reasons_header = path.name == "reasons.h"
        for name, value in re.findall(r'#define\s+(\w+)\s+"([A-Za-z0-9]+)"', text):
            if reasons_header and name.startswith("API_EVENT_"):
                continue  # Event reasons count where they are recorded
            if reasons_header or "REASON" in name or (path.name == "plan.h" and name.startswith("REBALANCE_")):
                conditions.add(value)
        for m in call.finditer(text):
            if re.search(r"\b(void|int|static)\s+$", text[max(0, m.start() - 20):m.start()]):
                continue  # a definition, not a call
            args = call_args(text, m.end() - 1)
            idx = REASON_ARG[m.group(1)]
            if len(args) <= idx:
                continue
            found = reasons_in(args[idx], consts)
            (events if m.group(1) in EVENT_FUNCS else conditions).update(found)
        for value in re.findall(r'\*fail_reason\s*=\s*("[A-Za-z0-9]+"|[A-Z][A-Z0-9_]+)', text):
            conditions.update(reasons_in(value, consts))
    return {r for r in conditions if CAMEL.match(r)}, {r for r in events if CAMEL.match(r)}, metrics, literals


def table_names(md, heading):
    """Backticked first-column names of the tables under '## heading' (to the next ##)."""
    m = re.search(r"^##+ %s\s*$(.*?)(?=^## |\Z)" % re.escape(heading), md, flags=re.M | re.S)
    if not m:
        return None
    return set(re.findall(r"^\|\s*`([A-Za-z0-9_]+)`", m.group(1), flags=re.M))


def docs_side(root):
    ref = (root / "docs" / "status.md").read_text()
    conditions = table_names(ref, "Condition reasons")
    events = table_names(ref, "Event reasons")
    metrics = table_names(ref, "Metrics")
    named = set()  # reasons named elsewhere in the docs
    readme = (root / "README.md").read_text()
    named.update(re.findall(r"^\|[^|\n]*\|\s*`([A-Z][A-Za-z0-9]+)`\s*\|", readme, flags=re.M))
    crd_text = "\n".join(p.read_text() for p in sorted((root / "crds").glob("*.yaml")))
    named.update(re.findall(r"\breasons? ([A-Z][A-Za-z0-9]+)", crd_text))
    named.update(re.findall(r"\bor ([A-Z][A-Za-z0-9]+) naming\b", crd_text))
    named.update(re.findall(r"\bfails with ([A-Z][A-Za-z0-9]+)", crd_text))
    mentioned = set()
    places = [root / "README.md", *sorted((root / "docs").rglob("*.md")), *sorted((root / "crds").glob("*.yaml")),
              *sorted((root / "config" / "prometheus").glob("*.yaml"))]
    for p in places:
        for name in re.findall(r"\b(psi_rebalancer_[a-z0-9_]*[a-z0-9])\b", p.read_text()):
            mentioned.add((name, str(p.relative_to(root))))
    return conditions, events, metrics, named, mentioned


def metric_labels(root):
    """metric name -> the labels the code registers it with (psi_metrics_* calls)."""
    out = {}
    call = re.compile(r"\bpsi_metrics_(gauge|counter|histogram)\s*\(")
    for path in c_files(root):
        text = strip_comments(path.read_text())
        arrays = {name: re.findall(r'"([a-z_]+)"', body)
                  for name, body in re.findall(r"const\s+char\s*\*\s*const\s+(\w+)\[\]\s*=\s*\{([^}]*)\}", text)}
        for m in call.finditer(text):
            args = call_args(text, m.end() - 1)
            if len(args) < 4 or not re.fullmatch(r'"psi_rebalancer_[a-z0-9_]+"', args[1]):
                continue
            labels = set() if args[-1] == "NULL" else set(arrays.get(args[-1], ["?" + args[-1]]))
            if m.group(1) == "histogram":
                labels.add("le")
            out[args[1].strip('"')] = labels
    return out


SCRAPE_LABELS = {"job", "instance"}


def rule_label_problems(root, labels):
    """Labels the rules and the dashboard use on psi_rebalancer_ metrics that no code gives them."""
    exprs = []
    rules = yaml.safe_load((root / "config" / "prometheus" / "rules.yaml").read_text())
    for g in rules["spec"]["groups"]:
        exprs += [("config/prometheus/rules.yaml", r["expr"]) for r in g["rules"]]
    dash = json.loads((root / "config" / "dashboards" / "psi-rebalancer.json").read_text())
    exprs += [("config/dashboards/psi-rebalancer.json", t["expr"])
              for panel in dash.get("panels", []) for t in panel.get("targets", []) if "expr" in t]
    problems = []
    for where, expr in exprs:
        for name, sel in re.findall(r"\b(psi_rebalancer_[a-z0-9_]+)\{([^}]*)\}", expr):
            base = re.sub(r"_(bucket|sum|count)$", "", name) if name not in labels else name
            for lab in re.findall(r"([a-z_]+)\s*(?:=~|!~|!=|=)", sel):
                if base in labels and lab not in labels[base] | SCRAPE_LABELS:
                    problems.append("%s selects %s{%s} but the code gives it no label %s" % (where, name, lab, lab))
        # by/without (labels) (inner): each label must come from a raw metric of inner.
        for m in re.finditer(r"\b(by|without)\s*\(([^)]*)\)\s*\(", expr):
            inner = call_args(expr, m.end() - 1)
            raw = {re.sub(r"_(bucket|sum|count)$", "", n) if n not in labels else n
                   for n in re.findall(r"\b(psi_rebalancer_[a-z0-9_]+)\b", " ".join(inner))}
            raw &= set(labels)
            if not raw:
                continue
            have = set().union(*(labels[n] for n in raw)) | SCRAPE_LABELS
            for lab in re.findall(r"[a-z_]+", m.group(2)):
                if lab not in have:
                    problems.append("%s aggregates %s (%s) over %s, which carry no label %s"
                                    % (where, m.group(1), m.group(2).strip(), ", ".join(sorted(raw)), lab))
    return problems


def crd_has(schema, path):
    """Whether the dotted path (spec.a.b, status.nodes[].c) is a field of the CRD schema."""
    node = schema
    for part in path.split("."):
        if node.get("type") == "array":  # status.nodes.name as status.nodes[].name
            node = node.get("items", {})
        node = (node.get("properties") or {}).get(part[:-2] if part.endswith("[]") else part)
        if node is None:
            return False
        if part.endswith("[]"):
            node = node.get("items", {})
    return True


def field_problems(root):
    crd = yaml.safe_load((root / "crds" / "rebalance.psi.dev_psirebalances.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    problems, n = [], 0
    for p in [root / "README.md", *sorted((root / "docs" / "runbooks").glob("*.md"))]:
        for code in re.findall(r"`([^`\n]+)`", p.read_text()):
            for path in re.findall(r"(?<![\w/.$-])((?:spec|status)(?:\.[A-Za-z]+(?:\[\])?)+)", code):
                n += 1
                if not crd_has(schema, path):
                    problems.append("%s names %s, which is no field of the CRD" % (p.relative_to(root), path))
    print("docs-vs-code: %d field paths of README.md and the runbooks checked against the CRD" % n)
    return problems


def namespace_problems(root):
    csv = yaml.safe_load((root / "config" / "manifests" / "bases" / "psi-rebalancer.clusterserviceversion.yaml").read_text())
    suggested = csv["metadata"]["annotations"]["operatorframework.io/suggested-namespace"]
    problems = []
    for p in sorted((root / "docs" / "runbooks").glob("*.md")):
        for ns in re.findall(r"^NS=(\S+)", p.read_text(), flags=re.M):
            if ns != suggested and not ns.startswith("$("):
                problems.append("%s starts from NS=%s, not the namespace the CSV suggests (%s)"
                                % (p.relative_to(root), ns, suggested))
    return problems


def metric_known(name, code_metrics):
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return name in code_metrics or base in code_metrics


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    c_cond, c_events, c_metrics, literals = code_side(root)
    d_cond, d_events, d_metrics, named, mentioned = docs_side(root)
    problems = []
    for heading, got in (("Condition reasons", d_cond), ("Event reasons", d_events), ("Metrics", d_metrics)):
        if not got:
            problems.append("docs/status.md has no table under '## %s'" % heading)
    d_cond, d_events, d_metrics = d_cond or set(), d_events or set(), d_metrics or set()
    for r in sorted(c_cond - d_cond):
        problems.append("condition reason %s is set by the code but not in docs/status.md" % r)
    for r in sorted(c_events - d_events):
        problems.append("Event reason %s is recorded by the code but not in docs/status.md" % r)
    for m in sorted(c_metrics - d_metrics):
        problems.append("metric %s is exported by the code but not in docs/status.md" % m)
    for r in sorted((d_cond | d_events | named) - literals):
        problems.append("reason %s is documented but appears nowhere in controller/ or kube/" % r)
    for r in sorted(d_cond - c_cond):
        problems.append("condition reason %s is in docs/status.md but the code never sets it" % r)
    for r in sorted(d_events - c_events):
        problems.append("Event reason %s is in docs/status.md but the code never records it" % r)
    for m in sorted(d_metrics - c_metrics):
        problems.append("metric %s is in docs/status.md but the code exports no such metric" % m)
    for name, where in sorted(mentioned):
        if not metric_known(name, c_metrics):
            problems.append("metric %s (in %s) is exported by no code" % (name, where))
    labels = metric_labels(root)
    for m in sorted(c_metrics - set(labels)):
        problems.append("metric %s: its registration (psi_metrics_*) was not found to read its labels" % m)
    problems += rule_label_problems(root, labels)
    problems += field_problems(root)
    problems += namespace_problems(root)
    for p in problems:
        print("docs-vs-code: " + p)
    print("docs-vs-code: %d condition reasons, %d Event reasons, %d metrics checked; %d problems"
          % (len(c_cond), len(c_events), len(c_metrics), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
