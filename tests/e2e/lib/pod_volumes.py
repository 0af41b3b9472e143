#!/usr/bin/env python3
"""The kubelet's part for one pod of a StatefulSet that the test bed runs as host processes.

    pod_volumes.py STATEFULSET_JSON ROOT CONTAINER...

Fills ROOT/volumes/<volume> from the pod template's volumes as the kubelet's volume plugins
do (pkg/volume/secret, configmap, projected, emptydir; a key becomes a file, `items` choose
and rename), reading each Secret and ConfigMap with kubectl in the StatefulSet's namespace;
a file is replaced by a rename, so a reader never sees half of it, and a key gone is removed.
Run again, it brings the files up to date, as the kubelet's periodic sync does. Prints the
mounts of the CONTAINERs, one "SOURCE<TAB>MOUNT_PATH" a line (a subPath mounts one file).
A volume of a kind not listed, or a Secret or ConfigMap missing that is not optional, is an
error that names it.
"""
import base64
import json
import os
import subprocess
import sys


def read(kind, name, namespace):
    r = subprocess.run(["kubectl", "get", kind, name, "-n", namespace, "-o", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


def source_files(src, namespace):
    """The files of one secret or configMap source: {path: bytes}."""
    if "secret" in src:
        ref, kind = src["secret"], "secret"
        obj = read(kind, ref.get("secretName") or ref["name"], namespace)
        data = {k: base64.b64decode(v) for k, v in ((obj or {}).get("data") or {}).items()}
    elif "configMap" in src:
        ref, kind = src["configMap"], "configmap"
        obj = read(kind, ref["name"], namespace)
        data = {k: v.encode() for k, v in ((obj or {}).get("data") or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in ((obj or {}).get("binaryData") or {}).items()})
    else:
        raise SystemExit(f"pod_volumes: a projected source of {sorted(src)} is not played here")
    if obj is None and not ref.get("optional"):
        raise SystemExit(f"pod_volumes: {kind} {ref.get('secretName') or ref['name']} in {namespace} is missing")
    if "items" in ref:
        return {i["path"]: data[i["key"]] for i in ref["items"] if i["key"] in data}
    return data


def volume_files(vol, namespace):
    if "secret" in vol or "configMap" in vol:
        return source_files(vol, namespace)
    if "projected" in vol:
        files = {}
        for src in vol["projected"]["sources"]:
            files.update(source_files(src, namespace))
        return files
    if "emptyDir" in vol:
        return None
    raise SystemExit(f"pod_volumes: volume {vol['name']} is of a kind not played here: {sorted(vol)}")


def sync(directory, files):
    os.makedirs(directory, exist_ok=True)
    if files is None:  # an emptyDir: the pod's own
        return
    for path, content in files.items():
        target = os.path.join(directory, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        current = open(target, "rb").read() if os.path.isfile(target) else None
        if current != content:
            with open(target + ".new", "wb") as f:
                f.write(content)
            os.replace(target + ".new", target)
    for base, _, names in os.walk(directory):
        for n in names:
            rel = os.path.relpath(os.path.join(base, n), directory)
            if rel not in files:
                os.remove(os.path.join(base, n))


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    sts = json.load(open(sys.argv[1]))
    root, containers = sys.argv[2], sys.argv[3:]
    namespace = sts["metadata"]["namespace"]
    spec = sts["spec"]["template"]["spec"]
    for vol in spec.get("volumes", []):
        sync(os.path.join(root, "volumes", vol["name"]), volume_files(vol, namespace))
    by_name = {c["name"]: c for c in spec.get("initContainers", []) + spec["containers"]}
    for name in containers:
        if name not in by_name:
            raise SystemExit(f"pod_volumes: the pod has no container {name}")
        for m in by_name[name].get("volumeMounts", []):
            src = os.path.join(root, "volumes", m["name"], m.get("subPath", ""))
            print(f"{src.rstrip('/')}\t{m['mountPath']}")


main()
