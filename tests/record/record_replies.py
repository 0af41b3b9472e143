#!/usr/bin/env python3
"""Record the real API server's replies to the requests the operator's edges make.

Brings up a test bed (hack/cluster/up, in a directory of its own), sets up the objects the
requests need (a namespace, pods on the kwok nodes, a PodDisruptionBudget, a
VirtualMachineInstance, a PsiRebalance), then sends each request of REQUESTS in order and
stores what the server answered, one JSON file per request under tests/testdata/replies/:

    {"request": {"method", "path", "content_type", "body"},
     "reply": {"status", "headers": {the ones that matter}, "body": "<the body's text>"}}

The unit tests in tests/unit/edges/ answer the client's requests from these files through
the transport seam (kube/transport.h). Nothing in that directory is written by hand: run
this script again to refresh it (after a Kubernetes upgrade of the bed, or a new request).

    tests/record/record_replies.py [--out DIR] [--bed DIR] [--keep]

--bed: the test bed's directory (default: build/record-bed); --keep leaves it running.
The bed is torn down (hack/cluster/down --purge) otherwise, whatever happened.
"""

import argparse
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NS = "psi-record"
NODE = "worker-0"
LEASE = "psi-record-lease"
PSIR = "record"
# the headers a client may act on; the rest (Date, Audit-Id, priority-and-fairness ids) vary
# from run to run and mean nothing to the operator
KEPT_HEADERS = ("content-type", "retry-after", "warning")

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
JSON = "application/json"


def die(msg):
    sys.exit("record_replies: " + msg)


class Server:
    """The bed's API server, as its admin kubeconfig names it."""

    def __init__(self, kubeconfig):
        text = open(kubeconfig).read()

        def field(name):
            m = re.search(r"^\s*%s:\s*(\S+)\s*$" % re.escape(name), text, re.M)
            if not m:
                die("%s has no %s" % (kubeconfig, name))
            return m.group(1)

        self.url = field("server")
        self.ctx = ssl.create_default_context(cafile=field("certificate-authority"))
        self.ctx.load_cert_chain(field("client-certificate"), field("client-key"))

    def send(self, method, path, content_type=None, body=None, headers=None):
        """(status, headers, body text) of one request; error replies included."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Accept", JSON)
        if content_type:
            req.add_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def json(self, method, path, content_type=None, body=None):
        status, _, text = self.send(method, path, content_type, body)
        if status >= 300:
            die("%s %s: HTTP %d: %s" % (method, path, status, text[:300]))
        return json.loads(text)


def kubectl(env, *args, stdin=None):
    r = subprocess.run(["kubectl", *args], input=stdin, env=env, text=True, capture_output=True)
    if r.returncode:
        die("kubectl %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def bed_env(bed):
    env = dict(os.environ)
    for line in open(os.path.join(bed, "env")):
        m = re.match(r"export (\w+)='([^']*)'", line.strip())
        if m:  # PATH='<kube bin>':"$PATH": the bed's binaries first
            env[m.group(1)] = m.group(2) + (":" + os.environ["PATH"] if m.group(1) == "PATH" else "")
    return env


def set_up(env):
    """The objects the requests act on."""
    kubectl(env, "apply", "--server-side", "-f", os.path.join(REPO, "crds"))
    kubectl(env, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    kubectl(env, "apply", "-f", "-", stdin="apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n" % NS)
    # pods are admitted once the namespace's default service account exists
    for _ in range(60):
        if subprocess.run(["kubectl", "get", "-n", NS, "serviceaccount/default"], env=env,
                          capture_output=True).returncode == 0:
            break
        time.sleep(1)
    else:
        die("no service account default in namespace %s after 60 s" % NS)
    pods = ""
    for name, app in (("guarded", "guarded"), ("free", "free")):
        pods += """apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, labels: {app: %s, kubevirt.io: virt-launcher}}
spec:
  nodeName: %s
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: registry.invalid/none}]
---
""" % (name, NS, app, NODE)
    pods += """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: %s}
spec: {minAvailable: 1, selector: {matchLabels: {app: guarded}}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vm-a, namespace: %s}
spec: {domain: {devices: {}}}
---
apiVersion: rebalance.psi.dev/v1alpha1
kind: PsiRebalance
metadata: {name: %s}
spec: {}
""" % (NS, NS, PSIR)
    kubectl(env, "apply", "-f", "-", stdin=pods)
    kubectl(env, "wait", "--for=condition=Ready", "-n", NS, "pod/guarded", "pod/free", "--timeout=60s")
    # the disruption controller must have counted the guarded pod before an eviction is refused
    kubectl(env, "wait", "--for=jsonpath={.status.currentHealthy}=1", "-n", NS, "pdb/guarded", "--timeout=60s")


def forget_history(srv, bed):
    """Make revision 1 gone, as on a long-running cluster: compact the bed's etcd at its
    current revision, and restart the API server so that its watch cache starts from now
    (a fresh bed's cache holds every event since revision 1). hack/cluster/ctl does both."""
    ctl = os.path.join(REPO, "hack", "cluster", "ctl")

    def run(*args):
        r = subprocess.run([ctl, "--dir", bed, *args], text=True, capture_output=True)
        if r.returncode:
            die("ctl %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    rev = json.loads(run("etcdctl", "endpoint", "status", "-w", "json"))[0]["Status"]["header"]["revision"]
    run("etcdctl", "compact", str(rev))
    run("stop", "apiserver")
    run("start", "apiserver")
    for _ in range(60):
        try:
            if srv.send("GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(1)
    die("the API server was not ready 60 s after its restart")


def node_path(name=NODE):
    return "/api/v1/nodes/" + name


def pod_path(name, sub=""):
    return "/api/v1/namespaces/%s/pods/%s%s" % (NS, name, sub)


def eviction(name, dry=False):
    ev = {"apiVersion": "policy/v1", "kind": "Eviction",
          "metadata": {"name": name, "namespace": NS, "annotations": {"requested-by": "psi-rebalancer"}}}
    if dry:
        ev["deleteOptions"] = {"dryRun": ["All"]}
    return ev


VMIM = "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstancemigrations" % NS
LEASES = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS
PSIR_PATH = "/apis/rebalance.psi.dev/v1alpha1/psirebalances/" + PSIR
TAINT = {"key": "rebalance.psi.dev/pressure", "value": PSIR, "effect": "PreferNoSchedule"}


def requests(srv, bed):
    """The requests, in the order they are sent: (file name, method, path, content type, body,
    extra headers). A generator, so that a request can be built from what the server holds
    at the time (resourceVersions)."""
    node = srv.json("GET", node_path())
    stale_rv = node["metadata"]["resourceVersion"]
    # a node write in between makes the first resourceVersion stale, as a heartbeat would
    srv.json("PATCH", node_path(), MERGE_PATCH, {"metadata": {"labels": {"psi-record/touched": "yes"}}})
    yield "node_list", "GET", "/api/v1/nodes?labelSelector=type%3Dkwok&limit=500", None, None, None
    yield ("node_patch_stale", "PATCH", node_path(), JSON_PATCH,
           [{"op": "test", "path": "/metadata/resourceVersion", "value": stale_rv},
            {"op": "add", "path": "/spec/taints", "value": [TAINT]}], None)
    yield "node_get", "GET", node_path(), None, None, None
    fresh_rv = srv.json("GET", node_path())["metadata"]["resourceVersion"]
    yield ("node_patch_taint", "PATCH", node_path(), JSON_PATCH,
           [{"op": "test", "path": "/metadata/resourceVersion", "value": fresh_rv},
            {"op": "add", "path": "/spec/taints", "value": [TAINT]}], None)
    yield ("node_patch_invalid", "PATCH", node_path(), JSON_PATCH,
           [{"op": "add", "path": "/spec/taints/-", "value": dict(TAINT, effect="Sometimes")}], None)
    yield ("node_patch_forbidden", "PATCH", node_path(), JSON_PATCH,
           [{"op": "remove", "path": "/spec/taints/0"}], {"Impersonate-User": "system:serviceaccount:%s:default" % NS})
    yield "node_get_missing", "GET", node_path("worker-gone"), None, None, None
    yield ("node_patch_missing", "PATCH", node_path("worker-gone"), JSON_PATCH,
           [{"op": "add", "path": "/spec/taints", "value": [TAINT]}], None)
    # a watch from a resourceVersion the server no longer has: 200, then an ERROR event (410).
    forget_history(srv, bed)
    yield "node_watch_gone", "GET", "/api/v1/nodes?watch=1&resourceVersion=1&timeoutSeconds=1", None, None, None

    yield "pod_list", "GET", "/api/v1/namespaces/%s/pods?labelSelector=kubevirt.io%%3Dvirt-launcher" % NS, None, None, None
    yield ("pod_evict_refused", "POST", pod_path("guarded", "/eviction"), JSON, eviction("guarded"), None)
    yield ("pod_evict_dry_run", "POST", pod_path("free", "/eviction") + "?dryRun=All", JSON,
           eviction("free", dry=True), None)
    yield ("pod_evict", "POST", pod_path("free", "/eviction"), JSON, eviction("free"), None)
    yield ("pod_evict_missing", "POST", pod_path("gone", "/eviction"), JSON, eviction("gone"), None)

    yield "vmi_list", "GET", "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances" % NS, None, None, None
    mig = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
           "metadata": {"name": "psi-vm-a", "namespace": NS, "labels": {"rebalance.psi.dev/owner": PSIR}},
           "spec": {"vmiName": "vm-a"}}
    yield "vmim_create", "POST", VMIM, JSON, mig, None
    yield "vmim_create_exists", "POST", VMIM, JSON, mig, None
    yield "vmim_list", "GET", VMIM + "?labelSelector=rebalance.psi.dev%2Fowner%3D" + PSIR, None, None, None
    yield "vmim_delete", "DELETE", VMIM + "/psi-vm-a", None, None, None
    yield "vmim_delete_missing", "DELETE", VMIM + "/psi-vm-a", None, None, None

    psir = srv.json("GET", PSIR_PATH)
    yield "psirebalance_get", "GET", PSIR_PATH, None, None, None
    status_body = {"apiVersion": psir["apiVersion"], "kind": psir["kind"], "metadata": psir["metadata"],
                   "status": {"observedGeneration": psir["metadata"]["generation"],
                              "summary": {"nodes": 2, "pressured": 0, "tainted": 0}}}
    yield "psirebalance_status_update", "PUT", PSIR_PATH + "/status", JSON, status_body, None
    # the same body again: its resourceVersion is now stale
    yield "psirebalance_status_conflict", "PUT", PSIR_PATH + "/status", JSON, status_body, None
    fresh = srv.json("GET", PSIR_PATH)
    bad = dict(status_body, metadata=fresh["metadata"], status={"conditions": [{"type": "Ready"}]})
    yield "psirebalance_status_invalid", "PUT", PSIR_PATH + "/status", JSON, bad, None
    yield ("psirebalance_finalizer_patch", "PATCH", PSIR_PATH, JSON_PATCH,
           [{"op": "add", "path": "/metadata/finalizers", "value": ["rebalance.psi.dev/taint-cleanup"]}], None)

    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": LEASE, "namespace": NS},
             "spec": {"holderIdentity": "psi-rebalancer-other", "leaseDurationSeconds": 15,
                      "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:00.000000Z",
                      "leaseTransitions": 0}}
    yield "lease_get_missing", "GET", LEASES + "/" + LEASE, None, None, None
    yield "lease_create", "POST", LEASES, JSON, lease, None
    yield "lease_create_exists", "POST", LEASES, JSON, lease, None
    yield "lease_get", "GET", LEASES + "/" + LEASE, None, None, None
    held = srv.json("GET", LEASES + "/" + LEASE)
    renewed = json.loads(json.dumps(held))
    renewed["spec"]["renewTime"] = "2026-01-01T00:00:05.000000Z"
    yield "lease_update", "PUT", LEASES + "/" + LEASE, JSON, renewed, None
    # held's resourceVersion is now stale
    yield "lease_update_conflict", "PUT", LEASES + "/" + LEASE, JSON, held, None


def record(srv, bed, out):
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        if old.endswith(".json"):
            os.remove(os.path.join(out, old))
    names = []
    for name, method, path, ctype, body, headers in requests(srv, bed):
        status, hdrs, text = srv.send(method, path, ctype, body, headers)
        kept = {h: hdrs[h] for h in KEPT_HEADERS if hdrs.get(h) is not None}
        rec = {"request": {"method": method, "path": path, "content_type": ctype,
                           "body": None if body is None else json.dumps(body)},
               "reply": {"status": status, "headers": kept, "body": text}}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
            f.write("\n")
        names.append(name)
        print("%-32s %s %s -> %d" % (name, method, path.split("?")[0], status))
    if len(set(names)) != len(names):
        die("two requests share a file name")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "testdata", "replies"))
    ap.add_argument("--bed", default=os.path.join(REPO, "build", "record-bed"))
    ap.add_argument("--keep", action="store_true", help="leave the test bed running")
    a = ap.parse_args()
    os.makedirs(a.bed, exist_ok=True)
    cluster = os.path.join(REPO, "hack", "cluster")
    try:
        subprocess.run([os.path.join(cluster, "up"), "--dir", a.bed, "--nodes", "2"], check=True)
        env = bed_env(a.bed)
        set_up(env)
        srv = Server(env["KUBECONFIG"])
        started = time.monotonic()
        record(srv, a.bed, a.out)
        print("recorded in %.1f s into %s" % (time.monotonic() - started, a.out))
    finally:
        if not a.keep:
            subprocess.run([os.path.join(cluster, "down"), "--dir", a.bed, "--purge"], check=False)


if __name__ == "__main__":
    main()
