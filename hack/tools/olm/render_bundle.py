#!/usr/bin/env python3
"""Render the OLM bundle and the file-based catalog of psi-rebalancer (called by hack/bundle.sh).

  render_bundle.py bundle  --root ROOT --manifests RENDERED.yaml --version V --image IMG
                           [--created-at T] --out BUNDLE_DIR
  render_bundle.py catalog --root ROOT --bundle-fbc OPM_RENDER.yaml --version V
                           --out CATALOG_DIR

`bundle` turns the kustomize render of config/openshift (RENDERED.yaml, image already set)
into BUNDLE_DIR/manifests (the ClusterServiceVersion, the CRD, and the objects OLM installs
as they are), BUNDLE_DIR/metadata/annotations.yaml and BUNDLE_DIR/bundle.Dockerfile:
- the Deployment becomes the CSV's install strategy;
- Roles bound to the operator's ServiceAccount become `permissions`, ClusterRoles bound to it
  `clusterPermissions` (a binding to a ClusterRole that the render does not define takes its
  rules from config/manifests/<name>.yaml, or fails); the same for the pressure-reading
  ServiceAccount, in entries of its own (OLM creates every ServiceAccount the CSV's
  permissions name);
- the Namespace, those ServiceAccounts and those bindings are dropped (OLM makes them);
- no ClusterRole or ClusterRoleBinding is shipped as a manifest: OLM labels such objects
  with their CSV's name only and never deletes them on uninstall, so the bundle's
  cluster-scoped RBAC is all clusterPermissions, which OLM removes with the CSV. A ClusterRole
  bound to nobody is an error (config/openshift leaves the /metrics reader out);
- the CSV's hand-written part comes from config/manifests/bases, alm-examples from
  config/samples, the icon from config/manifests/icon.svg, descriptor descriptions from the
  CRD's schema. An object of a kind not handled here is an error: it must be decided on.

`catalog` writes CATALOG_DIR/psi-rebalancer/catalog.yaml (olm.package, olm.channel stable,
and the olm.bundle that `opm render` made of the bundle directory) and
CATALOG_DIR/catalog.Dockerfile.

Output is deterministic: the same inputs give byte-identical files.
"""
import argparse
import base64
import copy
import json
import os
import re
import sys

import yaml

PACKAGE = "psi-rebalancer"
CHANNEL = "stable"
OPERATOR_SA = "psi-rebalancer"
READER_SA = "psi-rebalancer-pressure-reader"  # whose tokens go to Prometheus
SERVICE_ACCOUNTS = [OPERATOR_SA, READER_SA]
OPENSHIFT_VERSIONS = "v4.17"  # the oldest OpenShift the bundle is for (4.17 and later)
# Kinds copied into the bundle as they are (registry+v1 allows them; OLM creates them in the
# install namespace).
PASSTHROUGH = {"Service", "ServiceMonitor", "PrometheusRule"}
# Kinds of the render the bundle leaves out. OLM v0's catalog operator creates a bundle object
# of a kind it has no case for only when the kind is in supportedKinds
# (pkg/controller/operators/catalog/supportedresources.go); any other kind ends its InstallPlan
# step UnsupportedResource and fails the install ("the InstallPlan contains invalid data"),
# by kind alone. NetworkPolicy is in that list from OLM v0.32.0 (OpenShift 4.17.39, 4.18.23,
# 4.19.10, 4.20), not in v0.28 (the test bed's): README has users apply config/network-policy
# once the operator is installed. ValidatingAdmissionPolicy and its binding are in no
# release's list: README has users apply config/admission, and the operator refuses
# machineConfig mode until they have (controller/reconcile/mcsync.h).
LEFT_OUT = {"NetworkPolicy", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}


class RenderError(Exception):
    pass


def die(msg):
    print(f"render_bundle: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# YAML output: block style, keys in the order given, long strings unwrapped, multi-line
# strings as literal blocks.
class Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


Dumper.add_representer(str, _str_representer)


def dump(obj):
    return yaml.dump(obj, Dumper=Dumper, sort_keys=False, default_flow_style=False,
                     width=100000, allow_unicode=True)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def load_one(path):
    docs = load_all(path)
    if len(docs) != 1:
        raise RenderError(f"{path}: expected one YAML document, found {len(docs)}")
    return docs[0]


# ---------------------------------------------------------------------------------------------
# The CRD schema: descriptor descriptions and paths.
def schema_node(crd, version, root, path):
    """The schema node of root ("spec" or "status") at dotted path, or None."""
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            node = v["schema"]["openAPIV3Schema"]["properties"].get(root)
            break
    else:
        return None
    for part in path.split("."):
        if node is None:
            return None
        if node.get("type") == "array":
            node = node.get("items", {})
        node = (node.get("properties") or {}).get(part)
    return node


def first_sentence(text):
    text = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m.group(1) if m else text


def fill_descriptors(owned, crd):
    for kind in ("specDescriptors", "statusDescriptors"):
        root = "spec" if kind == "specDescriptors" else "status"
        for d in owned.get(kind, []):
            node = schema_node(crd, owned["version"], root, d["path"])
            if node is None:
                raise RenderError(f"{kind} path {root}.{d['path']} is not in the CRD "
                                  f"{crd['metadata']['name']} {owned['version']}")
            if "description" not in d:
                desc = node.get("description")
                if not desc:
                    raise RenderError(f"CRD field {root}.{d['path']} has no description")
                d["description"] = first_sentence(desc)
            # Keys in a stable, conventional order.
            ordered = {k: d[k] for k in ("path", "displayName", "description", "x-descriptors") if k in d}
            d.clear()
            d.update(ordered)
    if "description" not in owned:
        root = None
        for v in crd["spec"]["versions"]:
            if v["name"] == owned["version"]:
                root = v["schema"]["openAPIV3Schema"].get("description")
        if not root:
            raise RenderError(f"CRD {crd['metadata']['name']} has no top-level description")
        owned["description"] = first_sentence(root)


# ---------------------------------------------------------------------------------------------
def bound_sa(binding):
    """The one ServiceAccount of SERVICE_ACCOUNTS the binding binds, or None."""
    names = {s.get("name") for s in binding.get("subjects") or [] if s.get("kind") == "ServiceAccount"}
    ours = [sa for sa in SERVICE_ACCOUNTS if sa in names]
    if len(ours) > 1:
        raise RenderError(f"binding {binding['metadata']['name']} binds more than one of {SERVICE_ACCOUNTS}")
    return ours[0] if ours else None


def strip_metadata(obj):
    obj = copy.deepcopy(obj)
    md = obj.get("metadata", {})
    for k in ("namespace", "creationTimestamp", "resourceVersion", "uid"):
        md.pop(k, None)
    return obj


def manifest_filename(obj):
    api = obj["apiVersion"]
    group, _, version = api.rpartition("/")
    parts = [obj["metadata"]["name"]]
    if group:
        parts.append(group)
    parts += [version, obj["kind"].lower()]
    return "_".join(parts) + ".yaml"


def render_bundle(args):
    root = args.root
    objs = load_all(args.manifests)
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)

    csv = load_one(os.path.join(root, "config/manifests/bases", f"{PACKAGE}.clusterserviceversion.yaml"))
    crds = by_kind.pop("CustomResourceDefinition", [])
    if not crds:
        raise RenderError("the render has no CustomResourceDefinition")
    deployments = by_kind.pop("Deployment", [])
    if len(deployments) != 1:
        raise RenderError(f"expected one Deployment in the render, found {len(deployments)}")
    dep = deployments[0]
    pod = dep["spec"]["template"]["spec"]
    if pod.get("serviceAccountName") != OPERATOR_SA:
        raise RenderError(f"the Deployment runs as {pod.get('serviceAccountName')!r}, not {OPERATOR_SA!r}")

    by_kind.pop("Namespace", None)
    for kind in LEFT_OUT:
        by_kind.pop(kind, None)
    sas = by_kind.pop("ServiceAccount", [])
    if sorted(s["metadata"]["name"] for s in sas) != sorted(SERVICE_ACCOUNTS):
        raise RenderError(f"expected the ServiceAccounts {SERVICE_ACCOUNTS}, found {[s['metadata']['name'] for s in sas]}")

    roles = {r["metadata"]["name"]: r for r in by_kind.pop("Role", [])}
    cluster_roles = {r["metadata"]["name"]: r for r in by_kind.pop("ClusterRole", [])}
    permissions = {sa: [] for sa in SERVICE_ACCOUNTS}
    cluster_permissions = {sa: [] for sa in SERVICE_ACCOUNTS}
    extra = []

    for rb in by_kind.pop("RoleBinding", []):
        ref = rb["roleRef"]
        sa = bound_sa(rb)
        if sa:
            if ref["kind"] != "Role" or ref["name"] not in roles:
                raise RenderError(f"RoleBinding {rb['metadata']['name']}: the role {ref['name']} of {sa} is not in the render")
            permissions[sa].extend(roles.pop(ref["name"])["rules"])
        else:
            # Bound to someone else (e.g. the platform Prometheus): installed as it is, with its role.
            if ref["kind"] == "Role" and ref["name"] in roles:
                extra.append(roles.pop(ref["name"]))
            extra.append(rb)

    # The operator's own roles first, then those of the platform (config/manifests/<name>.yaml).
    crbs = sorted(by_kind.pop("ClusterRoleBinding", []),
                  key=lambda b: (b["roleRef"]["name"] not in cluster_roles, b["metadata"]["name"]))
    for crb in crbs:
        sa = bound_sa(crb)
        if not sa:
            raise RenderError(f"ClusterRoleBinding {crb['metadata']['name']} binds someone other than {SERVICE_ACCOUNTS}: "
                              "a bundle cannot carry it")
        name = crb["roleRef"]["name"]
        if name in cluster_roles:
            cluster_permissions[sa].extend(cluster_roles.pop(name)["rules"])
            continue
        external = os.path.join(root, "config/manifests", f"{name}.yaml")
        if not os.path.exists(external):
            raise RenderError(f"ClusterRoleBinding {crb['metadata']['name']} refers to ClusterRole {name}, which the "
                              f"render does not define and config/manifests/{name}.yaml does not describe")
        cluster_permissions[sa].extend(load_one(external)["rules"])

    if roles or cluster_roles:
        raise RenderError(f"roles bound to nobody: {sorted(roles) + sorted(cluster_roles)}")
    for kind in list(by_kind):
        if kind in PASSTHROUGH:
            extra.extend(by_kind.pop(kind))
    if by_kind:
        raise RenderError(f"kinds the bundle does not handle: {sorted(by_kind)}")

    # --- the ClusterServiceVersion ------------------------------------------------------------
    md = csv["metadata"]
    md["name"] = f"{PACKAGE}.v{args.version}"
    md.pop("namespace", None)
    ann = md.setdefault("annotations", {})
    samples_dir = os.path.join(root, "config/samples")
    samples = []
    for f in sorted(os.listdir(samples_dir)):
        if f.endswith((".yaml", ".yml")):
            samples.extend(load_all(os.path.join(samples_dir, f)))
    ann["alm-examples"] = json.dumps(samples, indent=2) + "\n"
    ann["containerImage"] = args.image
    if args.created_at:
        ann["createdAt"] = args.created_at
    ann["olm.skipRange"] = f"<{args.version}"
    md["annotations"] = dict(sorted(ann.items()))
    # The ServiceMonitor's serverName must name the metrics Service in the namespace it is
    # installed into, since the service CA's certificate names only <service>.<namespace>.svc
    # (and .cluster.local), and neither OLM nor the Prometheus Operator templates it: the
    # bundle names the namespace it suggests, and the operator points it at another namespace
    # it is installed into (controller/servicemonitor.c).
    suggested = ann.get("operatorframework.io/suggested-namespace")
    for obj in extra:
        if obj["kind"] != "ServiceMonitor":
            continue
        for ep in obj["spec"].get("endpoints", []):
            tls = ep.get("tlsConfig") or {}
            if "serverName" not in tls:
                continue
            parts = tls["serverName"].split(".")
            if len(parts) != 3 or parts[2] != "svc" or not suggested:
                raise RenderError(f"ServiceMonitor serverName {tls['serverName']!r} is not <service>.<namespace>.svc, "
                                  "or the CSV suggests no namespace")
            tls["serverName"] = f"{parts[0]}.{suggested}.svc"

    spec = csv["spec"]
    with open(os.path.join(root, "config/manifests/icon.svg"), "rb") as f:
        spec["icon"] = [{"base64data": base64.b64encode(f.read()).decode(), "mediatype": "image/svg+xml"}]
    for owned in spec["customresourcedefinitions"]["owned"]:
        crd = next((c for c in crds if c["metadata"]["name"] == owned["name"]), None)
        if crd is None:
            raise RenderError(f"owned CRD {owned['name']} is not in the render")
        fill_descriptors(owned, crd)
    if len(crds) != len(spec["customresourcedefinitions"]["owned"]):
        raise RenderError("every CRD in the render must be listed as owned in the base CSV")

    dep_spec = copy.deepcopy(dep["spec"])
    spec["install"] = {
        "strategy": "deployment",
        "spec": {
            "clusterPermissions": [{"serviceAccountName": sa, "rules": cluster_permissions[sa]}
                                   for sa in SERVICE_ACCOUNTS if cluster_permissions[sa]],
            "permissions": [{"serviceAccountName": sa, "rules": permissions[sa]}
                            for sa in SERVICE_ACCOUNTS if permissions[sa]],
            "deployments": [{"name": dep["metadata"]["name"], "label": dep["metadata"].get("labels", {}),
                             "spec": dep_spec}],
        },
    }
    images = sorted({c["image"] for c in pod.get("containers", []) + pod.get("initContainers", [])})
    if args.image not in images:
        raise RenderError(f"the Deployment does not run {args.image} (it runs {images})")
    spec["relatedImages"] = [{"name": PACKAGE if img == args.image else img.split("/")[-1].split("@")[0].split(":")[0],
                              "image": img} for img in images]
    spec["version"] = args.version

    # --- files --------------------------------------------------------------------------------
    out = args.out
    manifests = os.path.join(out, "manifests")
    write(os.path.join(manifests, f"{PACKAGE}.clusterserviceversion.yaml"), dump(csv))
    for crd in crds:
        write(os.path.join(manifests, f"{crd['spec']['group']}_{crd['spec']['names']['plural']}.yaml"),
              dump(strip_metadata(crd)))
    for o in extra:
        write(os.path.join(manifests, manifest_filename(o)), dump(strip_metadata(o)))

    annotations = {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": PACKAGE,
        "operators.operatorframework.io.bundle.channels.v1": CHANNEL,
        "operators.operatorframework.io.bundle.channel.default.v1": CHANNEL,
        "com.redhat.openshift.versions": OPENSHIFT_VERSIONS,
    }
    write(os.path.join(out, "metadata/annotations.yaml"), dump({"annotations": annotations}))
    labels = "".join(f"LABEL {k}={v}\n" for k, v in annotations.items())
    write(os.path.join(out, "bundle.Dockerfile"),
          "# The operator bundle image (generated by hack/bundle.sh; do not edit).\n"
          "#   podman build -f bundle/bundle.Dockerfile -t BUNDLE_IMAGE bundle/\n"
          "FROM scratch\n"
          f"{labels}"
          f"LABEL org.opencontainers.image.title={PACKAGE}-bundle\n"
          f"LABEL org.opencontainers.image.version={args.version}\n"
          "COPY manifests /manifests/\n"
          "COPY metadata /metadata/\n")


# ---------------------------------------------------------------------------------------------
def render_catalog(args):
    root = args.root
    docs = load_all(args.bundle_fbc)
    bundles = [d for d in docs if d.get("schema") == "olm.bundle"]
    if len(bundles) != 1:
        raise RenderError(f"opm render gave {len(bundles)} olm.bundle documents, expected 1")
    bundle = bundles[0]
    name = f"{PACKAGE}.v{args.version}"
    if bundle.get("name") != name or bundle.get("package") != PACKAGE:
        raise RenderError(f"opm render gave bundle {bundle.get('name')} of {bundle.get('package')}, expected {name}")
    csv = load_one(os.path.join(root, "config/manifests/bases", f"{PACKAGE}.clusterserviceversion.yaml"))
    with open(os.path.join(root, "config/manifests/icon.svg"), "rb") as f:
        icon = {"base64data": base64.b64encode(f.read()).decode(), "mediatype": "image/svg+xml"}
    package = {
        "schema": "olm.package",
        "name": PACKAGE,
        "defaultChannel": CHANNEL,
        "description": csv["metadata"]["annotations"]["description"],
        "icon": icon,
    }
    # Each release's catalog carries that release; skipRange lets OLM upgrade to it from any
    # earlier version, whether or not the catalog still lists it.
    channel = {
        "schema": "olm.channel",
        "package": PACKAGE,
        "name": CHANNEL,
        "entries": [{"name": name, "skipRange": f"<{args.version}"}],
    }
    text = "".join("---\n" + dump(d) for d in (package, channel, bundle))
    write(os.path.join(args.out, PACKAGE, "catalog.yaml"), text)
    # opm reads every file below the catalog root but those .indexignore names.
    write(os.path.join(args.out, ".indexignore"), "catalog.Dockerfile\n")
    write(os.path.join(args.out, "catalog.Dockerfile"),
          "# The file-based catalog as an image that a CatalogSource serves (generated by hack/bundle.sh;\n"
          "# do not edit). OPM_IMAGE is the opm that serves it; on OpenShift the operator-registry\n"
          "# image of the cluster's version may be used instead:\n"
          "#   podman build -f catalog/catalog.Dockerfile -t CATALOG_IMAGE catalog/\n"
          "#   podman build --build-arg OPM_IMAGE=registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.17 ...\n"
          "ARG OPM_IMAGE=quay.io/operator-framework/opm:v1.60.0\n"
          "FROM ${OPM_IMAGE}\n"
          "ENTRYPOINT [\"/bin/opm\"]\n"
          "CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n"
          f"COPY {PACKAGE} /configs/{PACKAGE}\n"
          "RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n"
          "LABEL operators.operatorframework.io.index.configs.v1=/configs\n"
          f"LABEL org.opencontainers.image.title={PACKAGE}-catalog\n"
          f"LABEL org.opencontainers.image.version={args.version}\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bundle")
    b.add_argument("--root", required=True)
    b.add_argument("--manifests", required=True)
    b.add_argument("--version", required=True)
    b.add_argument("--image", required=True)
    b.add_argument("--created-at", default="")
    b.add_argument("--out", required=True)
    c = sub.add_parser("catalog")
    c.add_argument("--root", required=True)
    c.add_argument("--bundle-fbc", required=True)
    c.add_argument("--version", required=True)
    c.add_argument("--out", required=True)
    args = p.parse_args()
    try:
        (render_bundle if args.cmd == "bundle" else render_catalog)(args)
    except (RenderError, OSError, KeyError, yaml.YAMLError) as e:
        die(f"{args.cmd}: {type(e).__name__ + ': ' if isinstance(e, KeyError) else ''}{e}")


if __name__ == "__main__":
    main()
