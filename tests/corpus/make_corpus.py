#!/usr/bin/env python3
"""The recorded corpus of verify-pods: inputs, and an independent model of the rules.

    python3 tests/corpus/make_corpus.py write   # (re)write pods.json, events.json, README of every case
    python3 tests/corpus/make_corpus.py check   # inputs match this script; goldens match the model

The committed JSON files are the corpus; this script only made them (deterministically,
byte for byte) and keeps them reproducible. It never writes goldens: `make bless` does,
from the real checker. `check` then compares every golden with what THIS script's own
model of the rules (written from the rules in issue 2 and the README, not from the jq
programs) predicts, so a golden is never accepted just because the checker printed it.

Documents look like kubectl's: `kubectl get pods -A -o json` is a `List` with sorted
keys, 4-space indent, Go's HTML-safe escaping (`<` is \\u003c) and a final newline; the
`kind-podlist` case is what the API server itself returns (compact `PodList`, items
without kind/apiVersion, fields in Go struct order). A snapshot may also be the raw pages
of one paged list (`kubectl get --raw '/api/v1/pods?limit=N'`, then `&continue=TOKEN`),
written one after the other as `--save-dir` saves them: the `paged-*` cases, and the
refused ones this script writes under bad/ (BAD_PAGES).
"""

import base64
import hashlib
import json
import math
import random
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BASE_TIME = datetime(2026, 5, 28, 10, 0, 0, tzinfo=timezone.utc)
NODES = ["kwok-node-0", "kwok-node-1", "kwok-node-2", "kwok-node-3"]

UNSCHEDULABLE_GPU = (
    "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are "
    "available: 4 No preemption victims found for incoming pod."
)
UNSCHEDULABLE_TAINT = (
    "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: "
    "4 Preemption is not helpful for scheduling."
)


# ---------------------------------------------------------------- small helpers


def ts(seconds):
    """An RFC 3339 timestamp, `seconds` after the base time (as metav1.Time prints)."""
    return (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_micro(seconds, micros):
    """A metav1.MicroTime (eventTime), with six fractional digits."""
    t = BASE_TIME + timedelta(seconds=seconds, microseconds=micros)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def digest(*parts):
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def uid(*parts):
    """A deterministic UUID (v4 layout) for an object."""
    h = digest("uid", *parts)
    return f"{h[0:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def suffix(n, *parts):
    """A pod-name suffix like the ones controllers generate (bcdfghjklmnpqrstvwxz2456789)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(digest("suffix", *parts), 16)
    out = ""
    for _ in range(n):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


def rs_hash(app):
    """A ReplicaSet's pod-template-hash (10 characters of the same alphabet)."""
    return suffix(10, "rs", app)


def go_json(doc, sort_keys=True, indent=4):
    """JSON as Go's encoding/json prints it (kubectl -o json): HTML-safe escapes."""
    if indent is None:
        text = json.dumps(doc, ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"))
    else:
        text = json.dumps(doc, ensure_ascii=False, sort_keys=sort_keys, indent=indent)
    # These characters only ever occur inside strings in JSON text.
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text + "\n"


def kubectl_list(items):
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# ---------------------------------------------------------------- pods


def owner(kind, name, api_version=None, controller=True):
    api = api_version or {
        "ReplicaSet": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
        "Job": "batch/v1", "CronJob": "batch/v1", "PyTorchJob": "kubeflow.org/v1",
        "MPIJob": "kubeflow.org/v2beta1", "JobSet": "jobset.x-k8s.io/v1alpha2",
        "Node": "v1", "Workflow": "argoproj.io/v1alpha1",
    }.get(kind, "example.com/v1")
    ref = {"apiVersion": api, "kind": kind, "name": name, "uid": uid("owner", kind, name)}
    if controller:
        ref["controller"] = True
        ref["blockOwnerDeletion"] = True
    return ref


def condition(kind, status, at, reason=None, message=None):
    c = {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": ts(at)}
    if reason:
        c["reason"] = reason
    if message is not None:
        c["message"] = message
    return c


def container_spec(name, image):
    return {
        "name": name,
        "image": image,
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                      "requests": {"cpu": "100m", "memory": "128Mi"}},
        "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def container_status(name, image, state, ready, restarts=0):
    status = {
        "name": name,
        "state": state,
        "lastState": {},
        "ready": ready,
        "restartCount": restarts,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{digest('image', image)}",
        "containerID": f"containerd://{digest('container', name, str(state))}",
        "started": "running" in state,
    }
    if "waiting" in state:  # no container yet: Go omits the empty fields
        del status["containerID"], status["imageID"]
    return status


def terminated(reason, exit_code, message=None, at=120):
    t = {"exitCode": exit_code, "reason": reason, "startedAt": ts(at - 60), "finishedAt": ts(at),
         "containerID": f"containerd://{digest('terminated', reason, str(at))}"}
    if message is not None:
        t["message"] = message
    return {"terminated": t}


class Pod:
    """Build one realistic pod; fields are in Go struct order (the API server's order)."""

    def __init__(self, ns, name, owners=None, labels=None, created=0, image="registry.k8s.io/pause:3.9"):
        self.ns, self.name, self.created, self.image = ns, name, created, image
        self.owners = owners
        self.labels = labels or {"app.kubernetes.io/name": name.rsplit("-", 1)[0]}

    def metadata(self):
        m = {"name": self.name}
        if self.owners and self.owners[0]["kind"] in ("ReplicaSet", "DaemonSet", "Job"):
            m["generateName"] = self.name.rsplit("-", 1)[0] + "-"
        m.update({"namespace": self.ns, "uid": uid("pod", self.ns, self.name),
                  "resourceVersion": str(1000 + int(digest("rv", self.ns, self.name)[:4], 16)),
                  "creationTimestamp": ts(self.created), "labels": self.labels})
        if self.owners is not None:
            m["ownerReferences"] = self.owners
        return m

    def spec(self, node):
        s = {
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
            "containers": [container_spec("main", self.image)],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
        }
        if node is not None:
            s["nodeName"] = node
        s.update({
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300},
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        })
        return s

    def doc(self, node, status):
        d = {"kind": "Pod", "apiVersion": "v1", "metadata": self.metadata(), "spec": self.spec(node)}
        if status is not None:
            d["status"] = status
        return d

    def ips(self, node):
        n = NODES.index(node) if node in NODES else int(digest("node", str(node))[:2], 16) % 200
        h = int(digest("ip", self.ns, self.name)[:4], 16)
        return f"10.0.0.{10 + n}", f"10.244.{n}.{h % 250 + 2}"

    # -- phases

    def running(self, node, restarts=0):
        host_ip, pod_ip = self.ips(node)
        start = self.created + 1
        state = {"running": {"startedAt": ts(start + 2)}}
        return self.doc(node, {
            "phase": "Running",
            "conditions": [condition(t, "True", start) for t in
                           ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": ts(start),
            "containerStatuses": [container_status("main", self.image, state, True, restarts)],
            "qosClass": "Burstable",
        })

    def unschedulable(self, message=UNSCHEDULABLE_GPU, node=None):
        return self.doc(node, {
            "phase": "Pending",
            "conditions": [condition("PodScheduled", "False", self.created + 1, "Unschedulable", message)],
            "qosClass": "Burstable",
        })

    def pending_bound(self, node, waiting_reason="ContainerCreating"):
        host_ip, _ = self.ips(node)
        start = self.created + 1
        return self.doc(node, {
            "phase": "Pending",
            "conditions": [
                condition("Initialized", "True", start),
                condition("Ready", "False", start, "ContainersNotReady", "containers with unready status: [main]"),
                condition("ContainersReady", "False", start, "ContainersNotReady",
                          "containers with unready status: [main]"),
                condition("PodScheduled", "True", start),
            ],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "startTime": ts(start),
            "containerStatuses": [container_status("main", self.image, {"waiting": {"reason": waiting_reason}}, False)],
            "qosClass": "Burstable",
        })

    def succeeded(self, node):
        host_ip, pod_ip = self.ips(node)
        start = self.created + 1
        return self.doc(node, {
            "phase": "Succeeded",
            "conditions": [
                condition("Initialized", "True", start, "PodCompleted"),
                condition("Ready", "False", start + 30, "PodCompleted"),
                condition("ContainersReady", "False", start + 30, "PodCompleted"),
                condition("PodScheduled", "True", start),
            ],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": ts(start),
            "containerStatuses": [container_status("main", self.image, terminated("Completed", 0, at=start + 30), False)],
            "qosClass": "BestEffort",
        })

    def failed(self, node, state=None, reason=None, message=None):
        """Failed: `state` is the container state (e.g. terminated(...)), or None for no containerStatuses."""
        host_ip, pod_ip = self.ips(node)
        start = self.created + 1
        status = {"phase": "Failed", "conditions": [
            condition("Initialized", "True", start),
            condition("Ready", "False", start + 60, "PodFailed"),
            condition("ContainersReady", "False", start + 60, "PodFailed"),
            condition("PodScheduled", "True", start),
        ]}
        if message is not None:
            status["message"] = message
        if reason is not None:
            status["reason"] = reason
        status.update({"hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                       "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": ts(start)})
        if state is not None:
            status["containerStatuses"] = [container_status("main", self.image, state, False)]
        status["qosClass"] = "Burstable"
        return self.doc(node, status)

    def unknown(self, node):
        host_ip, pod_ip = self.ips(node)
        return self.doc(node, {
            "phase": "Unknown",
            "conditions": [condition("Ready", "Unknown", self.created + 90, "NodeStatusUnknown")],
            "hostIP": host_ip, "podIP": pod_ip, "startTime": ts(self.created + 1),
            "qosClass": "Burstable",
        })


def deployment(ns, app, n, **kw):
    rs = f"{app}-{rs_hash(ns + app)}"
    return [Pod(ns, f"{rs}-{suffix(5, ns, app, str(i))}", [owner("ReplicaSet", rs)],
                {"app.kubernetes.io/name": app, "pod-template-hash": rs.rsplit('-', 1)[1]}, **kw)
            for i in range(n)]


def daemonset(ns, app, **kw):
    return [Pod(ns, f"{app}-{suffix(5, ns, app, node)}", [owner("DaemonSet", app)],
                {"app.kubernetes.io/name": app}, **kw) for node in NODES]


def statefulset(ns, app, n, **kw):
    return [Pod(ns, f"{app}-{i}", [owner("StatefulSet", app)], {"app.kubernetes.io/name": app}, **kw)
            for i in range(n)]


def owned(ns, name, kind, owner_name=None, **kw):
    return Pod(ns, name, [owner(kind, owner_name or name.rsplit("-", 2)[0])],
               {"training.kubeflow.org/job-name": owner_name or name.rsplit("-", 2)[0]}, **kw)


def spread(pods, offset=0):
    """Running pods, round-robin over the nodes."""
    return [p.running(NODES[(i + offset) % len(NODES)]) for i, p in enumerate(pods)]


# ---------------------------------------------------------------- workloads (issue 30)


def workload(kind, ns, name, replicas=1, owners=None, generation=1, observed=1, desired=None,
             revision=None, paused=False, max_surge=None):
    """One apps/v1 workload as `kubectl get rs,sts,ds,deploy -A -o json` prints it: its uid is
    the one its pods' ownerReferences name (owner()). `replicas` None leaves spec.replicas out
    (the API server's default is 1); `observed` None leaves status.observedGeneration out (the
    controller has not seen it yet); a DaemonSet wants `desired` (status.desiredNumberScheduled).
    A ReplicaSet's `revision`: its Deployment's rollout number, in the annotation the
    deployment controller writes; a Deployment `paused` (spec.paused) or with a rolling
    update's `max_surge`."""
    meta = {"name": name, "namespace": ns, "uid": uid("owner", kind, name),
            "resourceVersion": str(2000 + int(digest("rv", kind, ns, name)[:4], 16)),
            "generation": generation, "creationTimestamp": ts(0)}
    if revision is not None:
        meta["annotations"] = {"deployment.kubernetes.io/revision": revision}
    if owners:
        meta["ownerReferences"] = owners
    spec = {"selector": {"matchLabels": {"app.kubernetes.io/name": name}}}
    if replicas is not None and kind != "DaemonSet":
        spec["replicas"] = replicas
    if paused:
        spec["paused"] = True
    if max_surge is not None:
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": 0}}
    status = {}
    if observed is not None:
        status["observedGeneration"] = observed
    if kind == "DaemonSet":
        status["desiredNumberScheduled"] = len(NODES) if desired is None else desired
    elif replicas:
        status["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec, "status": status}


def deployment_workloads(ns, app, n, **kw):
    """A Deployment and the ReplicaSet of deployment(ns, app, n)'s pods."""
    rs = f"{app}-{rs_hash(ns + app)}"
    return [workload("Deployment", ns, app, n, **kw),
            workload("ReplicaSet", ns, rs, n, owners=[owner("Deployment", app)])]


def platform_workloads():
    """The workloads of platform_pods() and system_pods(), every pod created."""
    out = []
    for ns, app, n in (("kube-system", "coredns", 2), ("local-path-storage", "local-path-provisioner", 1),
                       ("kwok-system", "kwok-controller", 1), ("argocd", "argocd-repo-server", 1),
                       ("flux-system", "source-controller", 1), ("gpu-operator", "gpu-operator", 1),
                       ("cert-manager", "cert-manager", 1), ("cert-manager", "cert-manager-cainjector", 1),
                       ("cert-manager", "cert-manager-webhook", 1), ("monitoring", "kube-prometheus-stack-grafana", 1),
                       ("monitoring", "kube-state-metrics", 1), ("kai-scheduler", "kai-scheduler", 2),
                       ("network-operator", "network-operator", 1), ("kubeflow", "training-operator", 1),
                       ("nvidia-dra-driver", "nvidia-dra-driver-controller", 1)):
        out += deployment_workloads(ns, app, n)
    out += [workload("DaemonSet", ns, app) for ns, app in (
        ("kube-system", "kube-proxy"), ("gpu-operator", "nvidia-device-plugin-daemonset"),
        ("gpu-operator", "nvidia-dcgm-exporter"))]
    out += [workload("StatefulSet", ns, app) for ns, app in (
        ("argocd", "argocd-application-controller"), ("aicr-registry", "registry"),
        ("monitoring", "prometheus-kube-prometheus-stack-prometheus"))]
    return out


def terminating(pod_doc):
    """The pod with a deletionTimestamp: it is going away, its controller will replace it."""
    pod_doc["metadata"]["deletionTimestamp"] = ts(200)
    pod_doc["metadata"]["deletionGracePeriodSeconds"] = 30
    return pod_doc


def workload_pages(workloads, version, kinds=None):
    """The raw pages the checker saves: the four apps/v1 lists at one resourceVersion (or
    those of `kinds`: the others could not be listed), in the order it reads them, each one
    page (the API server's XList, items without kind)."""
    pages = Pages()
    for kind in (WORKLOAD_KINDS if kinds is None else [k for k in WORKLOAD_KINDS if k in kinds]):
        items = [{k: v for k, v in w.items() if k not in ("kind", "apiVersion")}
                 for w in workloads if w["kind"] == kind]
        pages.append({"kind": kind + "List", "apiVersion": "apps/v1",
                      "metadata": {"resourceVersion": version}, "items": items})
    return pages


def system_pods():
    """What kwokctl clusters and the AICR platform run in excluded namespaces."""
    pods = [p.running("kwok-node-0") for p in deployment("kube-system", "coredns", 2)]
    pods += [p.running(NODES[i]) for i, p in enumerate(daemonset("kube-system", "kube-proxy"))]
    pods += [p.running("kwok-node-1") for p in deployment("local-path-storage", "local-path-provisioner", 1)]
    pods += [p.running("kwok-node-2") for p in deployment("kwok-system", "kwok-controller", 1)]
    pods += [p.running("kwok-node-3") for p in statefulset("argocd", "argocd-application-controller", 1)]
    pods += [p.running("kwok-node-3") for p in deployment("argocd", "argocd-repo-server", 1)]
    pods += [p.running("kwok-node-1") for p in deployment("flux-system", "source-controller", 1)]
    pods += [p.running("kwok-node-2") for p in statefulset("aicr-registry", "registry", 1)]
    return pods


def platform_pods():
    """Twenty running pods of a typical AICR bundle, outside the excluded namespaces."""
    pods = deployment("gpu-operator", "gpu-operator", 1)
    pods += daemonset("gpu-operator", "nvidia-device-plugin-daemonset")
    pods += daemonset("gpu-operator", "nvidia-dcgm-exporter")
    pods += deployment("cert-manager", "cert-manager", 1)
    pods += deployment("cert-manager", "cert-manager-cainjector", 1)
    pods += deployment("cert-manager", "cert-manager-webhook", 1)
    pods += statefulset("monitoring", "prometheus-kube-prometheus-stack-prometheus", 1)
    pods += deployment("monitoring", "kube-prometheus-stack-grafana", 1)
    pods += deployment("monitoring", "kube-state-metrics", 1)
    pods += deployment("kai-scheduler", "kai-scheduler", 2)
    pods += deployment("network-operator", "network-operator", 1)
    pods += deployment("kubeflow", "training-operator", 1)
    pods += deployment("nvidia-dra-driver", "nvidia-dra-driver-controller", 1)
    assert len(pods) == 20
    return spread(pods)


# ---------------------------------------------------------------- events


def event(pod, message, last=None, first=None, count=1, event_time=None, reason="FailedScheduling",
          kind="Pod", pod_uid="same", series=None, ev_type="Warning", uid_key=""):
    """A core/v1 Event about a pod document (or a (ns, name, uid) tuple)."""
    if isinstance(pod, dict):
        ns, name, p_uid = pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"].get("uid")
    else:
        ns, name, p_uid = pod
    if pod_uid != "same":
        p_uid = pod_uid
    involved = {"apiVersion": "v1", "kind": kind, "name": name, "namespace": ns,
                "resourceVersion": str(1000 + int(digest("ev-rv", ns, name)[:3], 16))}
    if kind is None:
        del involved["kind"]
    if p_uid is not None:
        involved["uid"] = p_uid
    key = (ns, name, message, str(last), str(event_time), uid_key)
    ev_name = f"{name}.{digest('event', *key)[:16]}"
    created = last if last is not None else (first if first is not None else 0)
    ev = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": ev_name, "namespace": ns, "uid": uid("event", *key),
                     "resourceVersion": str(5000 + int(digest("ev", *key)[:4], 16)),
                     "creationTimestamp": ts(created if isinstance(created, int) else 0)},
        "involvedObject": involved, "reason": reason, "message": message, "type": ev_type,
    }
    if event_time is None:
        ev.update({"source": {"component": "default-scheduler"},
                   "firstTimestamp": ts(first if first is not None else last),
                   "lastTimestamp": ts(last), "count": count,
                   "reportingComponent": "default-scheduler", "reportingInstance": ""})
    else:
        ev.update({"source": {}, "firstTimestamp": None, "lastTimestamp": None,
                   "eventTime": event_time, "action": "Scheduling",
                   "reportingComponent": "default-scheduler",
                   "reportingInstance": "default-scheduler-kwok-kwok-control-plane"})
        if series is not None:
            ev["series"] = series
    return ev


def event_v1(pod, note, event_time, series=None, deprecated=None, reason="FailedScheduling"):
    """An events.k8s.io/v1 Event, as `kubectl get events.events.k8s.io -A -o json` prints it:
    `regarding` and `note` instead of `involvedObject` and `message`; `deprecated*` carry what a
    core/v1 recorder wrote (count, first and last timestamp)."""
    ns, name, p_uid = pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"].get("uid")
    key = (ns, name, note, str(event_time), "v1")
    ev = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": f"{name}.{digest('event', *key)[:16]}", "namespace": ns, "uid": uid("event", *key),
                     "resourceVersion": str(5000 + int(digest("ev", *key)[:4], 16)),
                     "creationTimestamp": ts(0)},
        "eventTime": event_time,
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-kwok-kwok-control-plane",
        "action": "Scheduling", "reason": reason,
        "regarding": {"kind": "Pod", "namespace": ns, "name": name, "uid": p_uid, "apiVersion": "v1",
                      "resourceVersion": str(1000 + int(digest("ev-rv", ns, name)[:3], 16))},
        "note": note, "type": "Warning",
    }
    if series is not None:
        ev["series"] = series
    for k, v in (deprecated or {}).items():
        ev["deprecated" + k[0].upper() + k[1:]] = v
    return ev


def kube_system_noise():
    """FailedScheduling events of excluded namespaces: they must never be shown."""
    metrics = deployment("kube-system", "metrics-server", 1)[0].unschedulable(
        "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules.")
    return metrics, [
        event(metrics, metrics["status"]["conditions"][0]["message"], last=95, first=30, count=12),
        event(("kwok-system", "kwok-controller-0", None),
              "0/4 nodes are available: 4 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
              last=80, count=4),
    ]


# ---------------------------------------------------------------- cases

CASES = {}
# Cases checked with another list limit than the default: name -> limit,
# written to the case's `list-limit` file, which the tests read.
LIMITS = {}
LIMIT_FILE = "list-limit"
# Cases checked with another list of excluded owner kinds than the default:
# name -> the list (comma-separated), written to the case's
# `exclude-owner-kinds` file, which the tests read.
OWNER_KINDS = {}
OWNER_KINDS_FILE = "exclude-owner-kinds"
# Cases checked within a selection (issue 32, `-n`, `-l`): name -> the
# namespaces (comma-separated) / the label selector, written to the case's
# `namespaces` / `selector` file, which the tests read.
NAMESPACES = {}
NAMESPACES_FILE = "namespaces"
SELECTORS = {}
SELECTOR_FILE = "selector"
# Cases checked with --exclude-ns / KWOK_VERIFY_PODS_EXCLUDE_NS: name -> its
# value (`+NS` adds to the default list), in the case's `exclude-ns` file.
EXCLUDE_NS = {}
EXCLUDE_NS_FILE = "exclude-ns"
# The list that reproduces upstream's rule (`map(.kind) | contains(["Job"])`:
# a substring test, case-sensitive) for the owner kinds that exist: batch/v1
# Job (and Volcano's Job), the Kubeflow training operator's kinds, and the
# kinds that own Jobs rather than pods (CronJob, JobSet, TrainJob, RayJob:
# harmless, listed so the list reads like the rule). The README gives it.
UPSTREAM_EQUIVALENT_KINDS = "Job,CronJob,JobSet,TrainJob,PyTorchJob,TFJob,MPIJob,XGBoostJob,PaddleJob,JAXJob,MXJob,RayJob"


def case(readme, list_limit=None, owner_kinds=None, namespaces=None, selector=None, exclude_ns=None):
    def register(fn):
        name = fn.__name__.replace("_", "-")
        CASES[name] = (readme, fn)
        if exclude_ns is not None:
            EXCLUDE_NS[name] = exclude_ns
        if namespaces is not None:
            NAMESPACES[name] = namespaces
        if selector is not None:
            SELECTORS[name] = selector
        if list_limit is not None:
            LIMITS[name] = list_limit
        if owner_kinds is not None:
            OWNER_KINDS[name] = owner_kinds
        return fn
    return register


@case("Every pod outside the excluded namespaces runs: pass, with a per-node distribution.")
def all_running():
    return system_pods() + platform_pods(), []


@case("The upstream seed: 20 running pods and 1 truly unscheduled (PodScheduled=False, Unschedulable), with its event.")
def seed_one_unscheduled():
    stuck = deployment("skyhook", "skyhook-operator-controller-manager", 1)[0].unschedulable(UNSCHEDULABLE_TAINT)
    pods = system_pods() + platform_pods() + [stuck]
    metrics, noise = kube_system_noise()
    events = [event(stuck, UNSCHEDULABLE_TAINT, last=75, first=15, count=5)] + noise
    return pods + [metrics], events


@case("A bound pod still in ContainerCreating (nodeName set, phase Pending) is pending but not unscheduled: pass.")
def pending_bound_container_creating():
    pods = platform_pods()
    pods += [p.pending_bound("kwok-node-2") for p in deployment("inference", "triton-server", 1)]
    pods += [p.pending_bound("kwok-node-3", "ImagePullBackOff") for p in statefulset("inference", "model-cache", 1)]
    return pods, []


@case("A Job-owned hook pod pending without a node is pending, not unscheduled (owner kind exactly Job): pass.")
def job_hook_pending():
    hook = Pod("model-registry", "model-registry-db-migrate-" + suffix(5, "hook"),
               [owner("Job", "model-registry-db-migrate")],
               {"batch.kubernetes.io/job-name": "model-registry-db-migrate",
                "argocd.argoproj.io/hook": "PreSync"})
    pods = platform_pods() + [hook.unschedulable(UNSCHEDULABLE_GPU)]
    return pods, [event(pods[-1], UNSCHEDULABLE_GPU, last=40)]


@case("A pending PyTorchJob worker without a node, default owner kinds (exactly Job): unscheduled, fail (upstream's substring rule passes it).")
def owner_kinds_pytorchjob():
    stuck = owned("training", "llama-ft-worker-0", "PyTorchJob", "llama-ft").unschedulable(UNSCHEDULABLE_GPU)
    return platform_pods() + [stuck], [event(stuck, UNSCHEDULABLE_GPU, last=50, first=10, count=4)]


@case("The same PyTorchJob worker with the upstream-equivalent owner kinds: not unscheduled, pass, as upstream.",
      owner_kinds=UPSTREAM_EQUIVALENT_KINDS)
def owner_kinds_pytorchjob_upstream_list():
    return owner_kinds_pytorchjob()


@case("The training owners with the upstream-equivalent owner kinds: only the lowercase 'job' kind counts, as upstream's substring rule says.",
      owner_kinds=UPSTREAM_EQUIVALENT_KINDS)
def owner_kinds_training_upstream_list():
    return training_owners()


@case("Pods owned by PyTorchJob, MPIJob, CronJob, JobSet, a lowercase 'job' kind and Workflow+Job are told apart: only the exact Job owner escapes.")
def training_owners():
    pods = platform_pods()
    stuck = [
        owned("training", "llama-ft-worker-0", "PyTorchJob", "llama-ft"),
        owned("training", "nccl-allreduce-launcher-0", "MPIJob", "nccl-allreduce"),
        owned("training", "nightly-eval-29012345-0", "CronJob", "nightly-eval"),
        owned("training", "sweep-trainer-0-0", "JobSet", "sweep"),
        owned("training", "custom-job-runner-0", "job", "custom"),
    ]
    docs = [p.unschedulable(UNSCHEDULABLE_GPU) for p in stuck]
    both = Pod("training", "pipeline-step-" + suffix(5, "wf"),
               [owner("Workflow", "pipeline", controller=False), owner("Job", "pipeline-step")])
    docs.append(both.unschedulable(UNSCHEDULABLE_GPU))  # has an exact Job owner: excluded
    job = Pod("training", "data-prep-" + suffix(5, "prep"), [owner("Job", "data-prep")])
    docs.append(job.unschedulable(UNSCHEDULABLE_GPU))  # Job-owned: excluded
    events = [event(d, UNSCHEDULABLE_GPU, last=60 + i, first=10, count=3 + i) for i, d in enumerate(docs)]
    return pods + docs, events


@case("Failed pods with container termination reasons: OOMKilled, and Error with a multi-line message.")
def failed_container_reasons():
    pods = platform_pods()
    oom = deployment("inference", "vllm-server", 1)[0].failed(
        "kwok-node-1", terminated("OOMKilled", 137))
    err = statefulset("training", "checkpoint-uploader", 1)[0].failed(
        "kwok-node-2", terminated("Error", 1, "Traceback (most recent call last):\n  File \"upload.py\", line 12\n\tRuntimeError: bucket <ckpt> not found & no retry"))
    # The first terminated container wins; a waiting sidecar before it is skipped.
    multi = deployment("inference", "reranker", 1)[0].failed("kwok-node-3", terminated("Error", 2, "exit status 2"))
    multi["status"]["containerStatuses"].insert(0, container_status(
        "istio-proxy", "docker.io/istio/proxyv2:1.22.0", {"waiting": {"reason": "PodInitializing"}}, False))
    multi["status"]["containerStatuses"].append(container_status(
        "logger", "docker.io/fluent/fluent-bit:3.0", terminated("Completed", 0), False))
    return pods + [oom, err, multi], []


@case("Evicted pods: pod-level reason Evicted with its message; a terminated container state takes precedence over it.")
def failed_evicted():
    pods = platform_pods()
    evicted = deployment("monitoring", "loki-ingester", 2)
    plain = evicted[0].failed("kwok-node-0", None, "Evicted",
                              "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. "
                              "Container main was using 1843200Ki, request is 128Mi, has larger consumption of memory.")
    with_container = evicted[1].failed(
        "kwok-node-1", terminated("ContainerStatusUnknown", 137,
                                  "The container could not be located when the pod was terminated"),
        "Evicted", "The node had condition: [DiskPressure].")
    return pods + [plain, with_container], []


@case("A Failed pod without any reason or message (no terminated container, no status.reason) is reported as Unknown.")
def failed_no_reason():
    pods = platform_pods()
    bare = deployment("batch", "report-generator", 1)[0].failed("kwok-node-2", {"waiting": {"reason": "ContainerCreating"}})
    no_statuses = statefulset("batch", "spooler", 1)[0].failed("kwok-node-3")
    return pods + [bare, no_statuses], []


@case("Pods that failed before they were ever scheduled (activeDeadlineSeconds ran out while Pending, no nodeName) are failed, not unscheduled.")
def failed_before_scheduling():
    pods = platform_pods()
    smoke = Pod("ci", "gpu-smoke-test", None, {"app.kubernetes.io/name": "gpu-smoke-test"})
    batch = Pod("batch", "shard-merge-" + suffix(5, "merge"), [owner("Job", "shard-merge")])
    failed = []
    for p in (smoke, batch):
        doc = p.unschedulable(UNSCHEDULABLE_GPU)
        doc["spec"]["activeDeadlineSeconds"] = 300
        doc["status"].update({"phase": "Failed", "reason": "DeadlineExceeded",
                              "message": "Pod was active on the node longer than the specified deadline"})
        failed.append(doc)
    return pods + failed, [event(d, UNSCHEDULABLE_GPU, last=290, first=5, count=30) for d in failed]


@case("Succeeded and Unknown phases count in the total only (not running, pending or failed): pass.")
def succeeded_and_unknown():
    pods = platform_pods()
    done = [Pod("batch", f"nightly-report-2901{i}-{suffix(5, 'done', str(i))}", [owner("Job", f"nightly-report-2901{i}")])
            for i in range(3)]
    pods += [p.succeeded(NODES[i]) for i, p in enumerate(done)]
    pods += [p.unknown("kwok-node-3") for p in deployment("inference", "embedder", 2)]
    return pods, []


@case("An empty pod list: verdict empty, exit 0.")
def empty_list():
    return [], []


@case("Pods only in excluded namespaces (some unscheduled or failed there): verdict empty, exit 0.")
def only_excluded_namespaces():
    pods = system_pods()
    metrics, noise = kube_system_noise()
    crashed = deployment("flux-system", "helm-controller", 1)[0].failed("kwok-node-1", terminated("Error", 1, "leader election lost"))
    return pods + [metrics, crashed], noise


@case("A Pending pod with nodeName \"\" is unscheduled and counted under <none>.")
def nodename_empty_string():
    pods = platform_pods()
    stuck = deployment("inference", "triton-server", 1)[0].unschedulable(UNSCHEDULABLE_GPU, node="")
    return pods + [stuck], [event(stuck, UNSCHEDULABLE_GPU, last=50, first=20, count=2)]


@case("Pods without status, with status {} and with status.phase missing count in the total only.")
def missing_status():
    pods = platform_pods()
    a, b, c = deployment("inference", "warmup", 3)
    no_status = a.doc(None, None)
    empty_status = b.doc(None, {})
    no_phase = c.running("kwok-node-1")
    del no_phase["status"]["phase"]
    return pods + [no_status, empty_status, no_phase], []


@case("ownerReferences null, [] and absent on unscheduled pods: all three are counted as unscheduled.")
def owner_references_null_and_empty():
    pods = platform_pods()
    stuck = []
    for i, refs in enumerate([None, [], "absent"]):
        p = Pod("research", f"notebook-{i}", [], {"app.kubernetes.io/name": "notebook"}).unschedulable(UNSCHEDULABLE_GPU)
        if refs == "absent":
            del p["metadata"]["ownerReferences"]
        else:
            p["metadata"]["ownerReferences"] = refs
        stuck.append(p)
    return pods + stuck, [event(p, UNSCHEDULABLE_GPU, last=30 + i) for i, p in enumerate(stuck)]


@case("Namespaces that merely resemble excluded ones (argocd-apps, kube-system-extra, kube-systems, flux-system2) are counted.")
def near_miss_namespaces():
    pods = platform_pods()
    pods += [p.running("kwok-node-0") for p in deployment("argocd-apps", "guestbook-ui", 1)]
    pods += [deployment("kube-system-extra", "descheduler", 1)[0].unschedulable(UNSCHEDULABLE_TAINT)]
    pods += [statefulset("kube-systems", "etcd-backup", 1)[0].failed("kwok-node-2", terminated("Error", 1, "snapshot failed"))]
    pods += [p.running("kwok-node-1") for p in deployment("flux-system2", "notification-controller", 1)]
    pods += [p.running("kwok-node-3") for p in deployment("kube", "dashboard", 1)]
    pods += system_pods()
    return pods, [event(pods[21], UNSCHEDULABLE_TAINT, last=44, first=4, count=7)]


def podlist_vs_list_pods():
    pods = platform_pods()[:8]
    stuck = owned("training", "bert-pretrain-worker-3", "PyTorchJob", "bert-pretrain").unschedulable(UNSCHEDULABLE_GPU)
    return pods + [stuck], [event(stuck, UNSCHEDULABLE_GPU, last=66, first=6, count=9)]


@case("kind: PodList as the API server returns it (compact, items without kind/apiVersion); same pods as kind-list.")
def kind_podlist():
    pods, events = podlist_vs_list_pods()
    for p in pods:
        del p["kind"], p["apiVersion"]
    doc = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "48213"}, "items": pods}
    return doc, events


@case("kind: List as kubectl prints it; same pods as kind-podlist, same goldens but the resourceVersion (a List from kubectl has none).")
def kind_list():
    return podlist_vs_list_pods()


class Pages(list):
    """The raw pages of one paged list, in order, as the API server returns them."""


def continue_token(version, last_item):
    """A continue token like the API server's: base64 of the list's version and the key
    after the page's last item (base64, so it may hold `+`, `/` and `=`)."""
    meta = last_item["metadata"]
    start = f"/{meta['namespace']}/{meta['name']}\u0000"
    body = json.dumps({"v": "meta.k8s.io/v1", "rv": int(version), "start": start}, separators=(",", ":"))
    return base64.b64encode(body.encode()).decode()


def paged(pods, sizes, versions):
    """`pods` in the API server's order (namespace, then name), cut into PodList pages of
    `sizes` items, page i at resourceVersion `versions[i]`; every page but the last carries
    a continue token and the count of the items after it."""
    pods = sorted(pods, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    assert sum(sizes) == len(pods) and len(versions) == len(sizes)
    pages, at = Pages(), 0
    for size, version in zip(sizes, versions):
        items = [{k: v for k, v in p.items() if k not in ("kind", "apiVersion")} for p in pods[at:at + size]]
        at += size
        meta = {"resourceVersion": version}
        if at < len(pods):
            meta["continue"] = continue_token(version, items[-1])
            meta["remainingItemCount"] = len(pods) - at
        pages.append({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})
    return pages


def paged_cluster():
    """A cluster listed in pages: excluded and platform pods, a failed pod and an unscheduled
    one; in the API server's order the stuck pods (namespace `training`) are on the last page."""
    stuck = owned("training", "llama-finetune-worker-1", "PyTorchJob", "llama-finetune").unschedulable(UNSCHEDULABLE_GPU)
    oom = Pod("inference", "embedder-" + suffix(5, "paged"), [owner("Job", "embedder")])
    pods = system_pods() + platform_pods() + [oom.failed("kwok-node-1", terminated("OOMKilled", 137))] + [stuck]
    events = [event(stuck, UNSCHEDULABLE_GPU, last=52, first=12, count=4)]
    return pods, events


def paged_sizes(pods):
    """Three pages: two of a third of the pods, the rest on the last."""
    third = len(pods) // 3
    return [third, third, len(pods) - 2 * third]


@case("Three raw pages of one list at one resourceVersion (compact PodLists with continue tokens), pods spread across them, the unscheduled pod on the last.")
def paged_three_pages():
    pods, events = paged_cluster()
    return paged(pods, paged_sizes(pods), ["48213"] * 3), events


# Pages that are not one list, written under bad/ (refused with exit 2): the file name,
# the pages, and what the model's refusal says.
def pages_mixed_versions():
    pods, _ = paged_cluster()
    return paged(pods, paged_sizes(pods), ["48213", "48213", "48290"])


def pages_trailing_continue():
    pods, _ = paged_cluster()
    return Pages(paged(pods, paged_sizes(pods), ["48213"] * 3)[:2])


# Lists of something else (issue 29): never counted as pods or events.
def events_as_pods():
    """`kubectl get events -A -o json` handed over as the pods: a List of Events."""
    _, events = seed_one_unscheduled()
    return go_json(kubectl_list(events))


def nodelist():
    """`kubectl get --raw /api/v1/nodes`: a NodeList, its items without kind."""
    nodes = [{"metadata": {"name": n, "uid": uid("node", n)}, "spec": {}, "status": {"phase": "Running"}} for n in NODES]
    return go_json({"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "48213"}, "items": nodes},
                   sort_keys=False, indent=None)


def pods_as_events():
    """`kubectl get pods -A -o json` handed over as the events: a List of Pods."""
    pods, _ = seed_one_unscheduled()
    return go_json(kubectl_list(pods))


def podlist_holding_a_node():
    """A PodList (the API server's form) whose items are Nodes: its items are Pods only."""
    nodes = [{"kind": "Node", "metadata": {"name": n, "uid": uid("node", n)}, "spec": {}, "status": {"phase": "Running"}}
             for n in NODES]
    return go_json({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "48213"}, "items": nodes},
                   sort_keys=False, indent=None)


def resource_version_number():
    """The PodList of kind-podlist with its resourceVersion a number (the API server writes
    a string; live, such a page is refused, so it is offline too)."""
    doc, _ = kind_podlist()
    doc["metadata"]["resourceVersion"] = 48213
    return go_json(doc, sort_keys=False, indent=None)


# Each pod once: the same pod twice in one state is refused, however it came.
def pods_twice():
    """`kubectl get pods -A -o json >> pods.json` run twice: two Lists of one cluster, one
    after the other (both of resourceVersion "", so one list by the pages' rule)."""
    pods, _ = seed_one_unscheduled()
    return go_json(kubectl_list(pods)) * 2


def pod_merged_twice():
    """A hand-merged List in which one pod stands twice (a ReplicaSet wanting 2 with 1 pod
    would pass)."""
    pods, _ = seed_one_unscheduled()
    return go_json(kubectl_list(pods[:14] + [pods[12]] + pods[14:]))


def pod_null():
    """A List with a null item (once counted as a pod null/null)."""
    pods, _ = seed_one_unscheduled()
    return go_json(kubectl_list(pods[:2] + [None] + pods[2:]))


# The API's types (what numbers-where-strings-belong once printed): a number, a
# boolean or NaN where the verdict reads a string is refused, never counted.
def with_field(part, key, value, text=None, at=12):
    """The seed case's pods, its 13th pod's (gpu-operator/gpu-operator-…; AT from 0)
    PART.KEY set to VALUE (or, as text, to TEXT, which JSON cannot hold: jq 1.6 reads
    NaN). A name is read only of a pod listed: the 33rd, unscheduled."""
    def make():
        pods, _ = seed_one_unscheduled()
        pods[at].setdefault(part, {})[key] = "@@VALUE@@" if text else value
        return go_json(kubectl_list(pods)).replace('"@@VALUE@@"', text or "")
    return make


def item_kind_nan():
    """The seed case's pods, its 13th pod's kind NaN (JSON has no NaN; jq 1.6 reads it):
    named as every engine prints such a number, null."""
    pods, _ = seed_one_unscheduled()
    pods[12]["kind"] = "@@VALUE@@"
    return go_json(kubectl_list(pods)).replace('"@@VALUE@@"', "NaN")


def excluded_and_counted_pods_bad():
    """The seed case's pods, a pod of an excluded namespace (the 3rd, kube-system) with a
    number for its node, and the 13th (counted) with a number for its phase. The counted
    pods are checked first; only what reads every pod (the workloads' owners) reads the
    excluded one's node: the counted pod is named, whether or not the workloads are read."""
    pods, _ = seed_one_unscheduled()
    pods[2]["spec"]["nodeName"] = 3.0
    pods[12]["status"]["phase"] = 1.0
    return go_json(kubectl_list(pods))


def status_string():
    """The seed case's pods, its 13th pod's status a string: no field of it can be read."""
    pods, _ = seed_one_unscheduled()
    pods[12]["status"] = "Running"
    return go_json(kubectl_list(pods))


def top_level_null():
    """`null`: JSON, but no list (jq reads it; no kubectl prints it)."""
    return "null\n"


def top_level_array():
    """A bare JSON array: JSON, but no list."""
    return "[]\n"


BAD_PAGES = {
    "null.json": (top_level_null, "not an object"),
    "top-level-array.json": (top_level_array, "not an object"),
    # `kubectl get deploy NAME -o json`: a single object, named by its kind.
    "workloads-one-deployment.json": (lambda: workloads_one_deployment(), "a Deployment"),
    "pages-mixed-versions.json": (pages_mixed_versions, "mixes pages of resourceVersion"),
    "pages-trailing-continue.json": (pages_trailing_continue, "incomplete"),
    "events-as-pods.json": (events_as_pods, "a list holding an Event"),
    "nodelist.json": (nodelist, "a NodeList"),
    "podlist-holding-a-node.json": (podlist_holding_a_node, "a list holding a Node"),
    "resource-version-number.json": (resource_version_number, "resourceVersion not a string"),
    "pods-twice.json": (pods_twice, "pods 1 and 35: one uid"),
    "pod-merged-twice.json": (pod_merged_twice, "pods 13 and 15: one uid"),
    "pod-null.json": (pod_null, "pod 3: not an object"),
    "nodename-number.json": (with_field("spec", "nodeName", 3.0), "pod 13: spec.nodeName of another type"),
    "nodename-nan.json": (with_field("spec", "nodeName", None, "NaN"), "pod 13: spec.nodeName of another type"),
    "nodename-false.json": (with_field("spec", "nodeName", False), "pod 13: spec.nodeName of another type"),
    "phase-nan.json": (with_field("status", "phase", None, "NaN"), "pod 13: status.phase of another type"),
    "uid-minus-nan.json": (with_field("metadata", "uid", None, "-NaN"), "pod 13: metadata.uid of another type"),
    "namespace-number.json": (with_field("metadata", "namespace", 1e20), "pod 13: metadata.namespace of another type"),
    "name-number.json": (with_field("metadata", "name", 12345678901234567890, at=32), "pod 33: metadata.name of another type"),
    "uid-number.json": (with_field("metadata", "uid", -0.0), "pod 13: metadata.uid of another type"),
    "phase-number.json": (with_field("status", "phase", 1.0), "pod 13: status.phase of another type"),
    "status-string.json": (status_string, "pod 13: status not an object"),
    "excluded-and-counted-pods-bad.json": (excluded_and_counted_pods_bad,
                                           "pod 13: status.phase of another type"),
    "item-kind-nan.json": (item_kind_nan, "a list holding a kind null"),
}
# Read as the events (kind Event).
BAD_EVENTS = {
    "pods-as-events.json": (pods_as_events, "a list holding a Pod"),
    "null.json": (top_level_null, "not an object"),
}


# Workloads files (`--workloads`) of other kinds than the four apps/v1 ones.
def pods_as_workloads():
    """`kubectl get pods -A -o json` handed over as the workloads: a List of Pods."""
    pods, _ = seed_one_unscheduled()
    return go_json(kubectl_list(pods))


def workloads_with_a_job():
    """`kubectl get rs,sts,ds,deploy,jobs -A -o json`: the workloads of workloads-all-created
    and one Job, whose pods no rule of issue 30 says how many to want."""
    job = workload("Deployment", "batch", "nightly-report")
    job.update(apiVersion="batch/v1", kind="Job", spec={"completions": 1, "parallelism": 1})
    return go_json(kubectl_list(platform_workloads() + [job]))


def workloads_without_kinds():
    """The workloads of workloads-all-created as a `List` whose items carry no kind (put
    together by hand: kubectl sets each item's), so nothing says what they are."""
    items = [{k: v for k, v in w.items() if k != "kind"} for w in platform_workloads()]
    return go_json(kubectl_list(items))


def workloads_empty_nodelist():
    """`kubectl get --raw /api/v1/nodes` of a cluster without nodes, as the workloads: an
    empty list, but of another kind (asked for by mistake)."""
    return go_json({"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": ""}, "items": []},
                   sort_keys=False, indent=None)


def workloads_one_deployment():
    """`kubectl get deploy coredns -n kube-system -o json`: one Deployment, no list."""
    return go_json(platform_workloads()[0])


def workloads_twice():
    """`kubectl get rs,sts,ds,deploy -A -o json >> workloads.json` run twice."""
    return go_json(kubectl_list(platform_workloads())) * 2


def workloads_null_item():
    """The workloads of workloads-all-created with a null item."""
    items = platform_workloads()
    return go_json(kubectl_list(items[:2] + [None] + items[2:]))


def workload_field(at, part, key, value, text=None):
    """The workloads of workloads-all-created, item AT's PART.KEY set to VALUE (or, as
    text, to TEXT: jq 1.6 reads NaN)."""
    def make():
        items = platform_workloads()
        items[at].setdefault(part, {})[key] = "@@VALUE@@" if text else value
        return go_json(kubectl_list(items)).replace('"@@VALUE@@"', text or "")
    return make


# Read as the workloads, beside the pods of BAD_WORKLOADS_PODS.
BAD_WORKLOADS = {
    "pods-as-workloads.json": (pods_as_workloads, "workloads: a Pod"),
    "workloads-with-a-job.json": (workloads_with_a_job, "workloads: a Job"),
    "workloads-without-kinds.json": (workloads_without_kinds, 'workloads: a kind ""'),
    "workloads-empty-nodelist.json": (workloads_empty_nodelist, "workloads: a NodeList"),
    "workloads-one-deployment.json": (workloads_one_deployment, "workloads: a Deployment"),
    "workloads-twice.json": (workloads_twice, "workloads: items 1 and 37: one uid"),
    "workloads-null-item.json": (workloads_null_item, "workloads: item 3: not an object"),
    # The StatefulSet aicr-registry/registry (1 pod): a replicas of "3" was read as 1.
    "workloads-replicas-string.json": (workload_field(34, "spec", "replicas", "3"),
                                       "workloads: item 35: spec.replicas of another type"),
    "workloads-replicas-too-big.json": (workload_field(34, "spec", "replicas", 99999999999999999),
                                        "workloads: item 35: spec.replicas of another type"),
    "workloads-replicas-nan.json": (workload_field(34, "spec", "replicas", None, "NaN"),
                                    "workloads: item 35: spec.replicas of another type"),
    "workloads-replicas-infinity.json": (workload_field(34, "spec", "replicas", None, "Infinity"),
                                         "workloads: item 35: spec.replicas of another type"),
    "workloads-replicas-minus-infinity.json": (workload_field(34, "spec", "replicas", None, "-Infinity"),
                                               "workloads: item 35: spec.replicas of another type"),
    "workloads-generation-fraction.json": (workload_field(31, "metadata", "generation", 2.5),
                                           "workloads: item 32: metadata.generation of another type"),
}
BAD_WORKLOADS_PODS = "workloads-all-created"


@case("Non-ASCII text in messages and events: accents, CJK, emoji, RTL Arabic/Hebrew, a bidi override, U+2028.")
def unicode_messages():
    pods = platform_pods()
    stuck = deployment("forschung", "uebersetzer", 1)[0].unschedulable("0/4 Knoten verfügbar: 4 Insufficient nvidia.com/gpu.")
    failed_doc = statefulset("research", "inference", 1)[0].failed("kwok-node-1", terminated("Error", 1, "モデルの読み込みに失敗しました 🚫 — Größe überschritten"))
    evicted = deployment("research", "arabic-nlp", 1)[0].failed(
        "kwok-node-2", None, "Evicted", "تم إخلاء الحاوية بسبب نقص الذاكرة ‏שגיאה‏ \u202eevil\u202c end\u2028next")
    events = [
        event(stuck, "0/4 Knoten verfügbar: 4 Insufficient nvidia.com/gpu. ⏳ Vorrang: keine Opfer gefunden.", last=70, count=2),
        event(stuck, "节点资源不足 🧠🔥 — 0/4 nodes are available", last=71),
    ]
    return pods + [stuck, failed_doc, evicted], events


@case("Control characters in messages (newline, tab, CR, ESC colour sequences, BEL, DEL) are flattened to spaces in text output.")
def control_characters():
    pods = platform_pods()
    stuck = deployment("ci", "runner", 1)[0].unschedulable("line one\nline two")
    crashed = deployment("ci", "builder", 1)[0].failed(
        "kwok-node-0", terminated("Error", 2, "\u001b[31mFAILED\u001b[0m\ttests\r\nbell:\u0007 del:\u007f end"))
    events = [
        event(stuck, "0/4 nodes are available:\n\t4 Insufficient cpu.\u001b]0;pwned\u0007 \u001b[2J", last=33, count=2),
    ]
    return pods + [stuck, crashed], events


@case("Classic events with lastTimestamp/firstTimestamp and count, several per pod, shown newest first.")
def events_last_timestamp():
    pods = platform_pods()
    stuck = [owned("training", f"gpt-small-worker-{i}", "PyTorchJob", "gpt-small").unschedulable(UNSCHEDULABLE_GPU)
             for i in range(3)]
    events = [
        event(stuck[0], UNSCHEDULABLE_GPU, last=120, first=10, count=14),
        event(stuck[1], "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", last=45, first=10, count=4),
        event(stuck[2], UNSCHEDULABLE_GPU, last=121, first=11, count=13),
        event(stuck[0], "0/4 nodes are available: 2 Insufficient memory, 2 Insufficient nvidia.com/gpu.", last=9, first=9),
    ]
    return pods + stuck, events


@case("events.k8s.io-style events with only eventTime (microseconds, no lastTimestamp, no count), mixed with classic ones.")
def events_event_time_only():
    pods = platform_pods()
    stuck = [owned("training", f"mixtral-worker-{i}", "MPIJob", "mixtral").unschedulable(UNSCHEDULABLE_GPU)
             for i in range(2)]
    events = [
        event(stuck[0], UNSCHEDULABLE_GPU, event_time=ts_micro(102, 512345)),
        event(stuck[1], UNSCHEDULABLE_GPU, event_time=ts_micro(102, 9),
              series={"count": 5, "lastObservedTime": ts_micro(160, 1)}),
        event(stuck[0], "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", last=102, count=2),
        event(stuck[1], "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", last=101, count=3),
    ]
    return pods + stuck, events


@case("New-style events with `series` (kubectl's rules): a repeating series is shown with its count and last observed time, a singleton as x1; `series` wins over a `count` key; a count of 0 is x1.")
def events_series():
    pods = platform_pods()
    stuck = [owned("training", f"deepseek-worker-{i}", "PyTorchJob", "deepseek").unschedulable(UNSCHEDULABLE_GPU)
             for i in range(4)]
    real = event(stuck[0], UNSCHEDULABLE_GPU, event_time="2026-05-26T15:05:11.885417Z",
                 series={"count": 1782, "lastObservedTime": "2026-05-28T10:04:12.569224Z"})
    singleton = event(stuck[1], UNSCHEDULABLE_TAINT, event_time=ts_micro(200, 42))
    both = event(stuck[2], UNSCHEDULABLE_GPU, event_time=ts_micro(100, 0),
                 series={"count": 2, "lastObservedTime": ts_micro(190, 7)})
    both["count"] = 9
    zero = event(stuck[3], "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", last=180, first=20, count=0)
    no_count = event(stuck[3], UNSCHEDULABLE_GPU, last=181, first=181)
    del no_count["count"]
    return pods + stuck, [zero, real, singleton, no_count, both]


@case("Event times compared as instants: `:42.512345Z` is newer than `:42Z`, `.5Z` than `.499999Z`, `+02:00` offsets count, an unreadable time is oldest.")
def events_subsecond_order():
    pods = platform_pods()
    stuck = deployment("inference", "llm-router", 2)
    a, b = (p.unschedulable(UNSCHEDULABLE_GPU) for p in stuck)
    events = [
        event(a, "whole second", last=102, count=2),
        event(a, "microseconds after it", event_time=ts_micro(102, 512345)),
        event(a, "half a second after it", event_time="2026-05-28T10:01:42.5Z"),
        event(a, "just before the half", event_time="2026-05-28T10:01:42.499999Z"),
        event(b, "a nanosecond before the whole second", event_time="2026-05-28T10:01:41.999999999Z"),
        event(b, "two hours east: 10:01:43Z", event_time="2026-05-28T12:01:43+02:00"),
        event(b, "eleven hours west, the day before: 10:01:43.1Z, the newest", event_time="2026-05-27T23:01:43.1-11:00"),
        event(b, "unreadable time, oldest", event_time="yesterday at noon"),
    ]
    return pods + [a, b], events


@case("Event times that look like times but name no instant (Feb 29 of 2026, Apr 31, month 13, hour 24, second 60, year 0) are unreadable and oldest; Feb 29 of 2024 and an offset across New Year are real.")
def events_impossible_times():
    pods = platform_pods()
    stuck = deployment("inference", "calendar-sync", 2)
    a, b = (p.unschedulable(UNSCHEDULABLE_GPU) for p in stuck)
    events = [
        event(a, "February 29 of a leap year", event_time="2024-02-29T10:00:00Z"),
        event(a, "February 29 of 2026", event_time="2026-02-29T10:00:00Z"),
        event(a, "April 31", event_time="2026-04-31T10:00:00Z"),
        event(a, "month 13", event_time="2026-13-01T10:00:00Z"),
        event(b, "hour 24", event_time="2026-05-28T24:00:00Z"),
        event(b, "second 60", event_time="2026-05-28T10:00:60Z"),
        event(b, "year 0", event_time="0000-05-28T10:00:00Z"),
        event(b, "December 31 at 23:30, one hour west: New Year, the newest", event_time="2026-12-31T23:30:00.25-01:00"),
        event(b, "December 31, the 31st is real", event_time="2026-12-31T10:00:00Z"),
    ]
    return pods + [a, b], events


@case("A `kubectl get events.events.k8s.io -A -o json` file (regarding, note, deprecatedCount/deprecated*Timestamp, series), with two core/v1 events mixed in.")
def events_k8s_io_shape():
    pods = platform_pods()
    metrics, _ = kube_system_noise()
    stuck = [statefulset("vector-db", "milvus-querynode", 3)[i].unschedulable(UNSCHEDULABLE_TAINT) for i in range(3)]
    events = [
        event_v1(stuck[0], UNSCHEDULABLE_TAINT, ts_micro(60, 120000),
                 series={"count": 14, "lastObservedTime": ts_micro(170, 9000)}),
        event_v1(stuck[1], "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.", None,
                 deprecated={"count": 6, "firstTimestamp": ts(40), "lastTimestamp": ts(165)}),
        event_v1(stuck[2], UNSCHEDULABLE_TAINT, ts_micro(150, 1)),
        event_v1(metrics, metrics["status"]["conditions"][0]["message"], ts_micro(171, 0),
                 series={"count": 40, "lastObservedTime": ts_micro(172, 0)}),
        event_v1(stuck[2], "Successfully assigned", ts_micro(175, 0), reason="Scheduled"),
        event(stuck[2], "core/v1 in the same list", last=168, first=30, count=3),
        event(stuck[0], "core/v1 new-style in the same list", event_time=ts_micro(166, 5)),
    ]
    return pods + stuck + [metrics], events


@case("The scheduler's PodScheduled condition of each unscheduled pod, from the snapshot itself: Unschedulable, SchedulingGated, and a pod without one; no events were recorded.")
def pod_scheduled_conditions():
    pods = platform_pods()
    gpu, gated, fresh, bare = deployment("inference", "vllm-server", 4)
    gated_doc = gated.unschedulable("Scheduling is blocked due to non-empty scheduling gates")
    gated_doc["status"]["conditions"][0]["reason"] = "SchedulingGated"
    gated_doc["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    fresh_doc = fresh.doc(None, {"phase": "Pending", "qosClass": "Burstable"})
    bare_doc = bare.unschedulable(UNSCHEDULABLE_GPU)
    bare_doc["status"]["conditions"][0].pop("message")
    return pods + [gpu.unschedulable(UNSCHEDULABLE_GPU), gated_doc, fresh_doc, bare_doc], []


@case("Every phase in one snapshot (Running, Pending, Failed, Succeeded, Unknown, none, and one Kubernetes does not define): the status line adds up to the total.")
def phases_all():
    pods = platform_pods()[:6]
    a, b, c, d, e, f = deployment("batch", "nightly", 6)
    no_phase = e.running("kwok-node-1")
    del no_phase["status"]["phase"]
    odd = f.running("kwok-node-2")
    odd["status"]["phase"] = "Terminating"
    pods += [a.unschedulable(UNSCHEDULABLE_GPU), b.failed("kwok-node-0", terminated("Error", 1)),
             c.succeeded("kwok-node-3"), d.unknown("kwok-node-3"), no_phase, odd]
    return pods, []


@case("Messages that end with whitespace (kubelet's eviction message ends with '. '), and a reason of blanks: no text line, annotation or summary cell ends with whitespace.")
def trailing_spaces():
    pods = platform_pods()
    stuck = deployment("ci", "runner", 1)[0].unschedulable(UNSCHEDULABLE_GPU + " ")
    evicted = deployment("ci", "cache", 1)[0].failed(
        "kwok-node-1", None, "Evicted", "The node was low on resource: ephemeral-storage. ")
    blank = deployment("ci", "blank", 1)[0].failed("kwok-node-2", terminated("   ", 1, "exit 1\n"))
    events = [event(stuck, "0/4 nodes are available: 4 Insufficient cpu.\t ", last=30, count=2)]
    return pods + [stuck, evicted, blank], events


@case("Numbers in the reasons and messages the outputs print, where Kubernetes writes strings or an int32 count (1.0, -0.0, 1e20, 137.0, a 20-digit integer): printed alike by jq 1.6, jq 1.8 and jaq. (A number in a field the verdict reads is refused: bad/nodename-number.json and its kin.)")
def numbers_where_strings_belong():
    pods = platform_pods()[:4]
    stuck, gpu, crashed, odd_node = deployment("numbers", "odd", 4)
    stuck_doc = stuck.unschedulable(UNSCHEDULABLE_GPU)
    gpu_doc = gpu.unschedulable(UNSCHEDULABLE_GPU)
    gpu_doc["status"]["conditions"][0]["message"] = 12345678901234567890
    gpu_doc["status"]["conditions"][0]["reason"] = 7.0
    crashed_doc = crashed.failed("kwok-node-0", terminated("Error", 137))
    crashed_doc["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] = 137.0
    crashed_doc["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = 1e20
    node_doc = odd_node.running("kwok-node-1")
    events = []
    for i, count in enumerate([5.0, 1e20, -0.0, 2.5, 4294967296]):
        ev = event(stuck_doc, f"count {count!r}", last=40 + i, count=2)
        ev["count"] = count
        events.append(ev)
    numeric = event(stuck_doc, "a message that is a number", last=50)
    numeric["message"] = 1.0
    events.append(numeric)
    return pods + [stuck_doc, gpu_doc, crashed_doc, node_doc], events


@case("NaN and the infinities (which Python's json, JavaScript and jq write, JSON has no digits for) where no rule reads a type: in fields no rule reads, and in the reasons, messages and counts the outputs print, as null. (Where a rule reads a type they are refused: bad/nodename-nan.json and its kin.)")
def non_finite_numbers():
    nan, inf = float("nan"), float("inf")
    pods = platform_pods()[:4]
    pods[0]["spec"]["priority"] = nan
    pods[1]["status"]["containerStatuses"][0]["restartCount"] = inf
    pods[2]["metadata"]["labels"] = {"odd": -inf}
    stuck, crashed = deployment("numbers", "non-finite", 2)
    stuck_doc = stuck.unschedulable(UNSCHEDULABLE_GPU)
    stuck_doc["status"]["conditions"][0]["message"] = nan
    crashed_doc = crashed.failed("kwok-node-0", terminated("Error", 137))
    crashed_doc["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] = inf
    crashed_doc["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = -inf
    counted = event(stuck_doc, "a count of NaN", last=40, count=2)
    counted["count"] = nan
    numeric = event(stuck_doc, "a message that is infinite", last=41)
    numeric["message"] = inf
    return pods + [stuck_doc, crashed_doc], [counted, numeric]


@case("Old FailedScheduling events of pods that have since been bound and run must not be shown.")
def events_stale_bound():
    running = platform_pods()
    stuck = owned("training", "resnet-worker-1", "PyTorchJob", "resnet").unschedulable(UNSCHEDULABLE_GPU)
    now_bound = owned("training", "resnet-worker-0", "PyTorchJob", "resnet").running("kwok-node-1")
    events = [event(p, UNSCHEDULABLE_GPU, last=20 + i, first=5, count=3) for i, p in enumerate(running[:3])]
    events += [event(now_bound, UNSCHEDULABLE_GPU, last=58, first=3, count=11),
               event(stuck, UNSCHEDULABLE_GPU, last=59, first=3, count=11)]
    return running + [now_bound, stuck], events


@case("Events for a pod with the same namespace/name but another uid (an earlier incarnation) are not shown; events without a uid are.")
def events_uid_mismatch():
    pods = platform_pods()
    stuck = statefulset("databases", "postgres", 1)[0].unschedulable(UNSCHEDULABLE_TAINT)
    events = [
        event(stuck, "0/4 nodes are available: 4 node(s) had volume node affinity conflict.", last=12,
              pod_uid=uid("pod", "databases", "postgres-0", "previous"), uid_key="old"),
        event(stuck, UNSCHEDULABLE_TAINT, last=48, count=6),
        event(stuck, "0/4 nodes are available: 4 node(s) didn't find available persistent volumes to bind.",
              last=47, pod_uid=None, uid_key="none"),
        event(("databases-2", "postgres-0", None), "same name, other namespace", last=49, uid_key="ns"),
    ]
    return pods + [stuck], events


@case("An unfiltered events dump: kube-system/kwok-system noise, other reasons, a non-Pod involvedObject and Normal events are ignored.")
def events_kube_system_noise():
    pods = platform_pods()
    stuck = deployment("inference", "embedder", 1)[0].unschedulable(UNSCHEDULABLE_GPU)
    metrics, noise = kube_system_noise()
    events = noise + [
        event(stuck, UNSCHEDULABLE_GPU, last=91, first=31, count=4),
        event(stuck, "Successfully assigned inference/embedder to kwok-node-0", last=92, reason="Scheduled", ev_type="Normal"),
        event(stuck, "MountVolume.SetUp failed for volume \"model\" : configmap \"model\" not found", last=93, reason="FailedMount"),
        event((stuck["metadata"]["namespace"], stuck["metadata"]["name"], None),
              "pod group is not ready", last=94, kind="PodGroup", uid_key="podgroup"),
        event(stuck, "involvedObject without kind counts as a Pod", last=90, kind=None, uid_key="nokind"),
    ]
    return pods + [metrics, stuck], events


@case("55 unscheduled gang pods with 60 matching events: only the newest 50 are shown, newest first.")
def events_over_50():
    pods = platform_pods()
    gang = [owned("training", f"llama-70b-worker-{i}", "PyTorchJob", "llama-70b").unschedulable(UNSCHEDULABLE_GPU)
            for i in range(55)]
    rng = random.Random(50)
    order = list(range(60))
    rng.shuffle(order)
    events = [event(gang[i % 55], UNSCHEDULABLE_GPU, last=200 + t, first=100, count=1 + i % 7, uid_key=str(i))
              for i, t in enumerate(order)]
    return pods + gang, events


@case("Three groups of unscheduled pods; the largest has 60 events, all newer than the small groups' own: each group still shows its own newest (issue 29).")
def events_per_group():
    pods = platform_pods()
    gpu = [owned("training", f"llama-70b-worker-{i}", "PyTorchJob", "llama-70b").unschedulable(UNSCHEDULABLE_GPU)
           for i in range(60)]
    taint = [deployment("infra", "ingress", 4)[i].unschedulable(UNSCHEDULABLE_TAINT) for i in range(4)]
    gated = [deployment("batch", "gated", 2)[i].unschedulable("0/4 nodes: scheduling gates not removed")
             for i in range(2)]
    events = [event(p, UNSCHEDULABLE_GPU, last=500 + i, first=100) for i, p in enumerate(gpu)]
    events += [event(p, UNSCHEDULABLE_TAINT, last=100 + i, first=50, count=2) for i, p in enumerate(taint)]
    events += [event(gated[0], "0/4 nodes: scheduling gates not removed", last=90, first=40, count=5)]
    return pods + gpu + taint + gated, events


@case("Pods without a node that are not Pending: Running without a node, Unknown without a node, no phase: none is scheduled (issue 29): fail.")
def nodeless_not_pending():
    pods = platform_pods()
    running = deployment("web", "frontend", 1)[0].running(None)
    unknown = deployment("web", "cache", 1)[0].unknown(None)
    no_phase = deployment("web", "api", 1)[0].running(None)
    del no_phase["status"]["phase"]
    done = owned("batch", "report-1", "Job", "report").succeeded(None)
    return pods + [running, unknown, no_phase, done], []


@case("Two pods without a node excused by their owners' kinds (Job, and a Workflow with --exclude-owner-kinds Job,Workflow): counted in `excused`, said in one line; pass.", owner_kinds="Job,Workflow")
def excused_owner_kinds():
    pods = platform_pods()
    hook = owned("registry", "db-migrate-" + suffix(5, "x1"), "Job", "db-migrate").unschedulable(UNSCHEDULABLE_GPU)
    step = owned("argo", "pipeline-step-" + suffix(5, "x2"), "Workflow", "pipeline").unschedulable(UNSCHEDULABLE_TAINT)
    return pods + [hook, step], []


@case("An unscheduled pod whose events file has no FailedScheduling event for it: 'none for the unscheduled pods'.")
def events_none_matching():
    pods = platform_pods()
    stuck = deployment("inference", "vllm-server", 1)[0].unschedulable(UNSCHEDULABLE_GPU)
    _, noise = kube_system_noise()
    return pods + [stuck], noise


@case("Hand-edited shapes: spec missing, spec.nodeName null, status null, containerStatuses null, state {}, terminated without reason, an event without any timestamp.")
def odd_shapes():
    pods = platform_pods()
    a, b, c, d, e = deployment("sandbox", "odd", 5)
    no_spec = a.unschedulable(UNSCHEDULABLE_GPU)
    del no_spec["spec"]
    null_node = b.unschedulable(UNSCHEDULABLE_GPU)
    null_node["spec"]["nodeName"] = None
    null_status = c.doc("kwok-node-0", None)
    null_status["status"] = None
    null_statuses = d.failed("kwok-node-1", None, None, "pod failed before its containers were reported")
    null_statuses["status"]["containerStatuses"] = None
    no_reason = e.failed("kwok-node-2", terminated("Error", 3, "exit 3"))
    del no_reason["status"]["containerStatuses"][0]["state"]["terminated"]["reason"]
    no_reason["status"]["containerStatuses"].insert(0, container_status("init", e.image, {}, False))
    no_reason["status"]["reason"] = "DeadlineExceeded"
    ev = event(no_spec, "event without timestamps", last=0)
    for k in ("firstTimestamp", "lastTimestamp", "count"):
        ev[k] = None
    return pods + [no_spec, null_node, null_status, null_statuses, no_reason], [
        ev, event(null_node, UNSCHEDULABLE_GPU, last=15)]


@case("A bit of everything in one snapshot: every phase, owners, near-miss namespaces, evictions, stale and foreign events.")
def mixed_everything():
    pods = system_pods() + platform_pods()
    metrics, noise = kube_system_noise()
    pods.append(metrics)
    pytorch = owned("training", "llama-ft-worker-4", "PyTorchJob", "llama-ft").unschedulable(UNSCHEDULABLE_GPU)
    cron = owned("reports", "weekly-digest-29012345-0", "CronJob", "weekly-digest").unschedulable(UNSCHEDULABLE_TAINT, node="")
    hook = Pod("model-registry", "schema-upgrade-" + suffix(5, "mix"), [owner("Job", "schema-upgrade")]).unschedulable()
    bound = deployment("inference", "triton-server", 1)[0].pending_bound("kwok-node-1")
    was_stuck = owned("training", "llama-ft-worker-3", "PyTorchJob", "llama-ft").running("kwok-node-2")
    oom = deployment("argocd-apps", "guestbook-api", 1)[0].failed("kwok-node-3", terminated("OOMKilled", 137))
    evicted = deployment("kube-system-extra", "node-problem-detector", 1)[0].failed(
        "kwok-node-0", None, "Evicted", "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi.")
    done = Pod("batch", "etl-" + suffix(5, "etl"), [owner("Job", "etl")]).succeeded("kwok-node-0")
    lost = statefulset("databases", "redis", 1)[0].unknown("kwok-node-3")
    pods += [pytorch, cron, hook, bound, was_stuck, oom, evicted, done, lost]
    events = noise + [
        event(pytorch, UNSCHEDULABLE_GPU, event_time=ts_micro(150, 250000)),
        event(pytorch, UNSCHEDULABLE_GPU, last=150, first=10, count=21),
        event(cron, UNSCHEDULABLE_TAINT, last=149, count=2),
        event(hook, UNSCHEDULABLE_GPU, last=151),
        event(was_stuck, UNSCHEDULABLE_GPU, last=40, first=5, count=6),
        event(pytorch, "earlier incarnation", last=5, pod_uid=uid("previous"), uid_key="prev"),
    ]
    return pods, events


@case("-n training (issue 32): only that namespace's pods count; live, the lists are "
      "/api/v1/namespaces/training/pods and its events.", namespaces="training")
def selection_one_namespace():
    return mixed_everything()


@case("-n reports,training -l 'training.kubeflow.org/job-name,training.kubeflow.org/job-name!=llama-ft' "
      "(issue 32): two namespaces (the cluster list, selected), a label that must exist and one "
      "that must differ: only the stuck report pod counts.",
      namespaces="reports,training",
      selector="training.kubeflow.org/job-name,training.kubeflow.org/job-name!=llama-ft")
def selection_namespaces_and_selector():
    return mixed_everything()


@case("--exclude-ns +training (issue 32): the + adds training to the default excluded "
      "namespaces, so kube-system's pods still do not count.", exclude_ns="+training")
def selection_exclude_added():
    return mixed_everything()


@case("-n nosuchns: a namespace that holds no pod selects nothing: fail, in one line naming it "
      "(as `kubectl wait` fails on no matching resources), never a pass.", namespaces="nosuchns")
def selection_no_such_namespace():
    return mixed_everything()


@case("-l app=typo: a selector that matches no pod selects nothing: fail, in one line naming it.",
      selector="app=typo")
def selection_selector_matches_nothing():
    return mixed_everything()


@case("-n kube-system: a namespace of the default excluded list, named, is checked (the name "
      "given wins over the default list): its Pending pod is unscheduled, fail.",
      namespaces="kube-system")
def selection_excluded_namespace_named():
    return only_excluded_namespaces()


@case("KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS set but empty is the default (Job), as every empty "
      "setting is: the Job's hook pod is excused, pass.", owner_kinds="")
def selection_owner_kinds_empty():
    return job_hook_pending()


@case("KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS=none excuses no owner kind: the Job's hook pod "
      "without a node is unscheduled, fail.", owner_kinds="none")
def selection_owner_kinds_none():
    return job_hook_pending()


@case("A larger cluster, generated with a fixed seed: 400 pods in 30 namespaces on 16 nodes, a few unscheduled and failed.")
def large_generated():
    rng = random.Random(20260528)
    nodes = [f"kwok-node-{i}" for i in range(16)]
    namespaces = [f"team-{i:02d}" for i in range(24)] + ["kube-system", "kwok-system", "argocd",
                                                         "kube-system-extra", "argocd-apps", "monitoring"]
    pods, stuck = [], []
    for i in range(400):
        ns = rng.choice(namespaces)
        app = f"svc-{rng.randrange(40):02d}"
        p = Pod(ns, f"{app}-{rs_hash(ns + app)}-{suffix(5, 'large', str(i))}", [owner("ReplicaSet", f"{app}-{rs_hash(ns + app)}")],
                created=rng.randrange(300))
        roll = rng.random()
        node = rng.choice(nodes)
        if roll < 0.90:
            pods.append(p.running(node, restarts=rng.randrange(3)))
        elif roll < 0.93:
            pods.append(p.pending_bound(node))
        elif roll < 0.955:
            if rng.random() < 0.3:
                p.owners = [owner(rng.choice(["Job", "PyTorchJob", "CronJob"]), f"job-{i}")]
            doc = p.unschedulable(rng.choice([UNSCHEDULABLE_GPU, UNSCHEDULABLE_TAINT]))
            pods.append(doc)
            stuck.append(doc)
        elif roll < 0.975:
            reason = rng.choice(["OOMKilled", "Error", "Evicted", None])
            if reason == "Evicted":
                pods.append(p.failed(node, None, "Evicted", "The node was low on resource: ephemeral-storage."))
            elif reason:
                pods.append(p.failed(node, terminated(reason, 137 if reason == "OOMKilled" else 1)))
            else:
                pods.append(p.failed(node))
        elif roll < 0.99:
            pods.append(p.succeeded(node))
        else:
            pods.append(p.unknown(node))
    events = [event(d, d["status"]["conditions"][0]["message"], last=300 + rng.randrange(60), first=100,
                    count=rng.randrange(1, 30)) for d in stuck]
    return pods, events


@case("The bundled `make demo` sample (samples/pods.json, samples/events.json), verbatim.")
def sample_demo():
    return "copy", (ROOT / "samples/pods.json", ROOT / "samples/events.json")


def digest_cluster():
    """40 unscheduled pods with three causes (two scheduler messages and no
    condition at all), failed pods with shared and per-pod messages, and
    more nodes than the default limit shows."""
    nodes = [f"kwok-node-{i}" for i in range(14)]
    pods = platform_pods()
    gpu = [owned("training", f"llama-405b-worker-{i}", "PyTorchJob", "llama-405b").unschedulable(UNSCHEDULABLE_GPU)
           for i in range(25)]
    taint = [p.unschedulable(UNSCHEDULABLE_TAINT) for p in deployment("inference", "triton", 12)]
    bare = []
    for p in deployment("sandbox", "gated", 3):
        d = p.unschedulable()
        d["status"]["conditions"] = []
        bare.append(d)
    web = [p.running(nodes[i % 14]) for i, p in enumerate(deployment("web", "frontend", 40))]
    oom = [p.failed(nodes[i], terminated("OOMKilled", 137)) for i, p in enumerate(deployment("batch", "etl", 3))]
    evicted = [p.failed(nodes[i], None, "Evicted", f"The node was low on resource: memory. Container main was using {100 + i}Mi.")
               for i, p in enumerate(deployment("monitoring", "loki", 2))]
    return pods + gpu + taint + bare + web + oom + evicted, [event(d, UNSCHEDULABLE_GPU, last=100 + i) for i, d in enumerate(gpu[:5])]


@case("Digest: 40 unscheduled pods with 2 scheduler messages and 3 pods without a PodScheduled condition, failed pods by reason, 14 nodes: groups by cause, at most 10 names each, a node summary.")
def digest_many_pods_few_messages():
    return digest_cluster()


@case("Digest at --list-limit 0: every pod and node listed, one line each.", list_limit=0)
def digest_limit_0():
    return digest_cluster()


@case("Digest at --list-limit 1: one group of each kind, one pod per group, the busiest node.", list_limit=1)
def digest_limit_1():
    return digest_cluster()


@case("Digest: 3 pods without a PodScheduled=False condition (gated before the scheduler saw them) form their own group.")
def digest_no_condition():
    pods = platform_pods()
    gated = []
    for p in deployment("sandbox", "gated", 3):
        d = p.unschedulable()
        d["status"]["conditions"] = []
        gated.append(d)
    return pods + gated, []


@case("Digest: 25 nodes (more than the limit) and pods on no node: a summary line and the 10 busiest nodes.")
def digest_many_nodes():
    pods = []
    for i, p in enumerate(deployment("web", "frontend", 120)):
        pods.append(p.running(f"kwok-node-{(i * i) % 25:02d}"))
    pods += [p.unschedulable(UNSCHEDULABLE_TAINT) for p in deployment("web", "pending", 2)]
    return pods, []


# ---------------------------------------------------------------- writing


# ---- Pods that do not exist yet (issue 30): each case has a workloads.json
# (`kubectl get rs,sts,ds,deploy -A -o json`, or the raw pages the checker
# saves) and shows one rule; without it, its verdict would differ.

WORKLOAD_KINDS = ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"]


@case("Every pod the workloads want exists and is scheduled (workloads.json: kubectl get rs,sts,ds,deploy -A -o json): pass.")
def workloads_all_created():
    return system_pods() + platform_pods(), [], platform_workloads()


@case("The same cluster with its workloads as the raw pages the checker saves (four apps/v1 lists at the pods' resourceVersion): pass.")
def workloads_raw_pages():
    pods, _ = system_pods() + platform_pods(), []
    return paged(pods, [len(pods)], ["48213"]), [], workload_pages(platform_workloads(), "48213")


@case("A StatefulSet (data/nats) wants 3 pods and only nats-0 exists, scheduled: 2 not yet created, fail.")
def workloads_statefulset_1_of_3():
    pods = platform_pods() + spread(statefulset("data", "nats", 1))
    return pods, [], platform_workloads() + [workload("StatefulSet", "data", "nats", 3)]


@case("A DaemonSet wants 4 pods (status.desiredNumberScheduled, observed) and 3 exist: 1 not yet created, fail.")
def workloads_daemonset_short():
    pods = platform_pods() + spread(daemonset("logging", "fluent-bit")[:3])
    return pods, [], platform_workloads() + [workload("DaemonSet", "logging", "fluent-bit")]


@case("A DaemonSet whose controller has not observed its generation yet (observedGeneration 1 < generation 2): wanted unknown, 1 not yet created, fail.")
def workloads_daemonset_not_reconciled():
    pods = platform_pods() + spread(daemonset("logging", "fluent-bit"))
    return pods, [], platform_workloads() + [workload("DaemonSet", "logging", "fluent-bit", generation=2, desired=4)]


@case("A Deployment (2 replicas) that has no ReplicaSet yet: 2 not yet created, fail.")
def workloads_deployment_without_replicaset():
    return platform_pods(), [], platform_workloads() + [workload("Deployment", "inference", "triton-server", 2)]


@case("A Deployment whose status.observedGeneration (absent) lags its generation, its old ReplicaSet's pods all there: not yet reconciled, fail.")
def workloads_deployment_not_reconciled():
    pods = platform_pods() + spread(deployment("inference", "triton-server", 2))
    wl = deployment_workloads("inference", "triton-server", 2, generation=2, observed=None)
    return pods, [], platform_workloads() + wl


@case("A rollout under way: a Deployment of 3, its old ReplicaSet (revision 1) at 2 of 2 pods, its new one (revision 2) at 1 pod: "
      "the Deployment is done when its newest ReplicaSet has its 3 pods, so 1 of 3 and 2 not yet created; the old one wants its own 2 and has them: fail.")
def workloads_rollout_two_replicasets():
    old = [p for p in deployment("inference", "triton-server", 2)]
    new_rs = "triton-server-" + rs_hash("new")
    new = [Pod("inference", f"{new_rs}-{suffix(5, 'new')}", [owner("ReplicaSet", new_rs)],
               {"app.kubernetes.io/name": "triton-server", "pod-template-hash": rs_hash("new")}, created=100)]
    pods = platform_pods() + spread(old + new)
    wl = deployment_workloads("inference", "triton-server", 3, generation=2, observed=2)
    wl[1]["spec"]["replicas"] = 2
    wl[1]["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    wl.append(workload("ReplicaSet", "inference", new_rs, 2, owners=[owner("Deployment", "triton-server")], revision="2"))
    return pods, [], platform_workloads() + wl


def rollout(old_replicas, old_pods, new_replicas, new_pods, revisions=("1", "2"), **deployment_kw):
    """A Deployment of 3 (inference/triton-server) in a rollout: its old ReplicaSet (revision
    revisions[0]) wants old_replicas and has old_pods running pods, its new one (revisions[1])
    wants new_replicas and has new_pods: (the old Pods, the new Pods, the workloads)."""
    app, ns = "triton-server", "inference"
    old = deployment(ns, app, 3)[:old_pods]
    new_rs = f"{app}-{rs_hash('new')}"
    new = [Pod(ns, f"{new_rs}-{suffix(5, 'new', str(i))}", [owner("ReplicaSet", new_rs)],
               {"app.kubernetes.io/name": app, "pod-template-hash": rs_hash("new")}, created=100) for i in range(3)]
    wl = deployment_workloads(ns, app, 3, generation=2, observed=2, **deployment_kw)
    wl[1]["spec"]["replicas"] = old_replicas
    wl[1]["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": revisions[0]}
    wl.append(workload("ReplicaSet", ns, new_rs, new_replicas, owners=[owner("Deployment", app)], revision=revisions[1]))
    return old, new[:new_pods], wl


@case("A rollout that has not begun to create: a Deployment of 3, its old ReplicaSet at 3 of 3 pods, its new one (the highest revision) "
      "wanting 3 and with no pod: the new pods are not yet created, 3 of them (the Deployment 0 of 3), fail.")
def workloads_rollout_new_replicaset_empty():
    old, new, wl = rollout(3, 3, 3, 0)
    return platform_pods() + spread(old + new), [], platform_workloads() + wl


@case("A rollout with maxSurge 1: the old ReplicaSet at 3 of 3, the new one scaled to 1 and with no pod: the Deployment wants its 3 "
      "pods in the newest ReplicaSet, has 0: 3 not yet created, fail.")
def workloads_rollout_max_surge():
    old, new, wl = rollout(3, 3, 1, 0, max_surge=1)
    return platform_pods() + spread(old + new), [], platform_workloads() + wl


@case("A finished rollout: the new ReplicaSet (revision \"10\") at 3 of 3, the old one (revision \"9\", lower as an integer, "
      "higher as text) scaled to 0 with no pod: pass.")
def workloads_rollout_finished():
    old, new, wl = rollout(0, 0, 3, 3, revisions=("9", "10"))
    return platform_pods() + spread(old + new), [], platform_workloads() + wl


@case("A rollout whose 3 new pods exist and are Pending without a node (the old ReplicaSet scaled to 0): "
      "created, so not missing; unscheduled, fail.")
def workloads_rollout_new_pods_pending():
    old, new, wl = rollout(0, 0, 3, 3)
    stuck = [p.unschedulable(UNSCHEDULABLE_GPU) for p in new]
    return platform_pods() + stuck, [], platform_workloads() + wl


@case("A paused rollout (spec.paused): the old ReplicaSet at 2 of 2, the new one at 1 of 1; the user stopped it, so the newest "
      "ReplicaSet wants its own 1, not the Deployment's 3: pass.")
def workloads_rollout_paused():
    old, new, wl = rollout(2, 2, 1, 1, paused=True)
    return platform_pods() + spread(old + new), [], platform_workloads() + wl


@case("A pod whose ownerReferences name its ReplicaSet (of 2) twice: counted once, 1 of 2, 1 not yet created, fail.")
def workloads_owner_uid_twice():
    rs = "api-" + rs_hash("api")
    pod = Pod("shop", f"{rs}-{suffix(5, 'api', '0')}", [owner("ReplicaSet", rs), owner("ReplicaSet", rs, controller=False)])
    return platform_pods() + spread([pod]), [], platform_workloads() + [workload("ReplicaSet", "shop", rs, 2)]


@case("The raw pages saved when the ReplicaSets could not be listed (403): a Deployment of 3 whose 3 pods run "
      "is not checked without its ReplicaSets (never a false 0 of 3); the StatefulSets and DaemonSets are: pass.")
def workloads_replicasets_not_listed():
    pods = platform_pods() + spread(deployment("inference", "triton-server", 3))
    wl = platform_workloads() + deployment_workloads("inference", "triton-server", 3)
    return paged(pods, [len(pods)], ["48213"]), [], workload_pages(wl, "48213", ["StatefulSet", "DaemonSet", "Deployment"])


@case("The raw pages saved when only the Deployments could be listed: nothing can be checked without the "
      "ReplicaSets, so nothing is (missing null, no pods not yet created claimed), pass.")
def workloads_only_deployments_listed():
    pods = platform_pods()
    wl = platform_workloads() + [workload("Deployment", "inference", "triton-server", 2)]
    return paged(pods, [len(pods)], ["48213"]), [], workload_pages(wl, "48213", ["Deployment"])


@case("A ReplicaSet of 2 (no Deployment) whose second pod is terminating (deletionTimestamp): not active, 1 not yet created, fail.")
def workloads_terminating_pod():
    rs = "web-" + rs_hash("web")
    pods = [Pod("shop", f"{rs}-{suffix(5, 'web', str(i))}", [owner("ReplicaSet", rs)]) for i in range(2)]
    docs = spread(pods)
    terminating(docs[1])
    return platform_pods() + docs, [], platform_workloads() + [workload("ReplicaSet", "shop", rs, 2)]


@case("A StatefulSet and a Deployment scaled to 0 replicas, no pods: they want nothing; a ReplicaSet without spec.replicas wants 1 and has it: pass.")
def workloads_zero_replicas():
    rs = "cache-" + rs_hash("cache")
    pod = Pod("shop", f"{rs}-{suffix(5, 'cache')}", [owner("ReplicaSet", rs)])
    return platform_pods() + spread([pod]), [], platform_workloads() + [
        workload("StatefulSet", "data", "nats", 0), workload("Deployment", "shop", "idle", 0),
        workload("ReplicaSet", "shop", rs, None)]


@case("A ReplicaSet of 2 with one Failed pod and one running: the Failed pod is not created, 1 not yet created besides 1 failed, fail.")
def workloads_failed_pod():
    rs = "api-" + rs_hash("api")
    pods = [Pod("shop", f"{rs}-{suffix(5, 'api', str(i))}", [owner("ReplicaSet", rs)]) for i in range(2)]
    docs = [pods[0].running("kwok-node-1"), pods[1].failed("kwok-node-2", terminated("OOMKilled", 137))]
    return platform_pods() + docs, [], platform_workloads() + [workload("ReplicaSet", "shop", rs, 2)]


@case("A StatefulSet of 3 in an excluded namespace (kube-system) with no pods: not counted, pass.")
def workloads_excluded_namespace():
    return platform_pods(), [], platform_workloads() + [workload("StatefulSet", "kube-system", "etcd-backup", 3)]


@case("A ReplicaSet owned by a Job (an excluded owner kind, default Job) wants 2 pods and has none: not counted, as its pods would not be, pass.")
def workloads_job_owned():
    wl = workload("ReplicaSet", "batch", "etl-runner", 2, owners=[owner("Job", "etl")])
    return platform_pods(), [], platform_workloads() + [wl]


@case("Two defects at once, at the list limit 0: 12 pods of a Deployment unscheduled (with their events) and a "
      "StatefulSet (data/nats) at 1 of 3, 2 not yet created: the text names the unscheduled pods, then the pods not "
      "yet created; the annotations stay within GitHub's 10 errors.", list_limit=0)
def workloads_missing_and_unscheduled():
    stuck = [p.unschedulable(UNSCHEDULABLE_GPU) for p in deployment("training", "llama-worker", 12)]
    events = [event(doc, UNSCHEDULABLE_GPU, last=60 + i, first=10, count=2 + i) for i, doc in enumerate(stuck[:3])]
    pods = platform_pods() + spread(statefulset("data", "nats", 1)) + stuck
    wl = deployment_workloads("training", "llama-worker", 12) + [workload("StatefulSet", "data", "nats", 3)]
    return pods, events, platform_workloads() + wl


def render(name):
    """(README, pods.json bytes, events.json bytes, workloads.json bytes or None) of one case."""
    readme, fn = CASES[name]
    pods, events, *workloads = fn()
    if pods == "copy":
        return readme, events[0].read_bytes(), events[1].read_bytes(), None
    if not workloads:
        workloads_text = None
    elif isinstance(workloads[0], Pages):
        workloads_text = pages_text(workloads[0]).encode()
    else:
        workloads_text = go_json(kubectl_list(workloads[0])).encode()
    if isinstance(pods, Pages):
        pods_text = pages_text(pods)
    elif isinstance(pods, dict):  # a PodList as the API server returns it
        pods_text = go_json(pods, sort_keys=False, indent=None)
    else:
        pods_text = go_json(kubectl_list(pods))
    return readme, pods_text.encode(), go_json(kubectl_list(events)).encode(), workloads_text


def pages_text(pages):
    """Raw pages one after the other, each as the API server writes it (compact, a newline)."""
    return "".join(go_json(page, sort_keys=False, indent=None) for page in pages)


def bad_text(fn):
    """A bad input as written: raw pages, or a document already as text."""
    doc = fn()
    return doc if isinstance(doc, str) else pages_text(doc)


def bad_input_problems(file, text, reason, read):
    """What is wrong with bad/FILE: not what make_corpus.py writes (`text`), read by the
    model (`read`), or refused for another reason than `reason`."""
    data = (HERE / "bad" / file).read_bytes() if (HERE / "bad" / file).is_file() else None
    if data != text:
        return [f"bad/{file}: differs from what make_corpus.py writes (run it with `write`)"]
    try:
        read(documents(data))
        return [f"bad/{file}: the model reads it; it must be refused ({reason})"]
    except Refused as e:
        return [] if str(e) == reason else [f"bad/{file}: the model refuses it as {e}, not {reason}"]


def write():
    for file, (fn, _) in {**BAD_PAGES, **BAD_EVENTS, **BAD_WORKLOADS}.items():
        (HERE / "bad" / file).write_text(bad_text(fn))
    for name in CASES:
        readme, pods, events, workloads = render(name)
        folder = HERE / name
        folder.mkdir(exist_ok=True)
        (folder / "README").write_text(readme + "\n")
        (folder / "pods.json").write_bytes(pods)
        (folder / "events.json").write_bytes(events)
        if workloads is not None:
            (folder / WORKLOADS_FILE).write_bytes(workloads)
        elif (folder / WORKLOADS_FILE).exists():
            (folder / WORKLOADS_FILE).unlink()
        for file, values in ((LIMIT_FILE, LIMITS), (OWNER_KINDS_FILE, OWNER_KINDS),
                             (NAMESPACES_FILE, NAMESPACES), (SELECTOR_FILE, SELECTORS),
                             (EXCLUDE_NS_FILE, EXCLUDE_NS)):
            path = folder / file
            if name in values:
                path.write_text(f"{values[name]}\n")
            elif path.exists():
                path.unlink()
    print(f"wrote {len(CASES)} cases under {HERE}")


# ---------------------------------------------------------------- the model


def excluded_namespaces(name=None):
    """The default list, read from the one file that defines it (never restated here); for
    a case with an exclude-ns file, its value: `+a,b` adds a and b, `a,b` replaces the list."""
    lines = (ROOT / "checker/programs/excluded-namespaces").read_text().splitlines()
    default = {line.split("#")[0].strip() for line in lines} - {""}
    path = HERE / name / EXCLUDE_NS_FILE if name else None
    setting = path.read_text().strip() if path and path.is_file() else ""
    listed = set((setting[1:] if setting.startswith("+") else setting).split(",")) - {""}
    excluded = default | listed if setting.startswith("+") or setting == "" else listed
    # A namespace the case selects by name (-n) is checked: the name given wins over
    # the default list. (Named by --exclude-ns too, the drivers refuse the settings.)
    return excluded - (selection(name)[0] if name else set())


def owner_kinds(name):
    """The owner kinds a case is checked with: its exclude-owner-kinds file, else the
    default list, read from the one file that defines it (never restated here). An empty
    setting is the default, as every empty setting is; `none` is no kind at all."""
    file = HERE / name / OWNER_KINDS_FILE
    setting = file.read_text().strip() if file.is_file() else ""
    if setting == "none":
        return set()
    if setting != "":
        return set(setting.split(",")) - {""}
    lines = (ROOT / "checker/programs/excluded-owner-kinds").read_text().splitlines()
    return {line.split("#")[0].strip() for line in lines} - {""}


def alt(*values):
    """jq's `a // b // c`: the first value that is neither null nor false."""
    return next((v for v in values if v is not None and v is not False), values[-1])


def get(obj, *path):
    """obj.path... with missing keys, nulls and wrong types read as None (like jq's `.a.b`)."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def canon(value):
    """A number where Kubernetes writes a string or a count: an integer below 10**17 is that
    integer (1.0 is 1, -0.0 is 0), any other number is None; jq 1.6, jq 1.8 and jaq print such
    numbers each their own way. Other values stay as they are."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(value) if -10**17 < value < 10**17 and value == math.floor(value) else None


class Refused(Exception):
    """Input that is not a snapshot: the drivers exit 2."""


# The numbers JSON has no digits for, as Python's json, JavaScript and jq write them:
# read as numbers (NaN, infinities) wherever a number may stand, for the type checks to
# refuse where a rule reads them. Python's json reads NaN, Infinity and -Infinity; -NaN
# is NaN too. Any other spelling (+1, .5, 01) is no number.
STRING_OR_MINUS_NAN = re.compile(r'"(?:[^"\\]|\\.)*"|-NaN')


def documents(data):
    """Every JSON document of a file, in order (whitespace between them; a BOM at the start)."""
    text = STRING_OR_MINUS_NAN.sub(lambda m: "NaN" if m.group(0) == "-NaN" else m.group(0),
                                   data.decode("utf-8-sig"))
    docs, at = [], 0
    decoder = json.JSONDecoder()
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at == len(text):
            return docs
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)


def a_kind(kind):
    # "" (a List's items without kind) is named as JSON too: "a " names nothing.
    if not isinstance(kind, str) or kind == "":
        return "a kind " + json.dumps(canon(kind))
    return ("an " if kind[:1] in ("A", "E", "I", "O", "U") else "a ") + kind


def joined(docs, kind="Pod"):
    """The items of a snapshot, from the rule of issue 14: a snapshot is one List or the pages
    of one paged list, joined in order. The pages are one list only when every page carries
    the first page's metadata.resourceVersion (the API server pins continue tokens to it)
    and the last page has no continue token left; otherwise nothing is counted.
    Issue 29: only lists of `kind` count: a document's kind, when set, is KINDList or List,
    and an item's kind, when set, is `kind` (a raw page's items carry none).
    A document is named for what it is before what it lacks: null or an array is no list,
    a single Deployment (no items) is a Deployment."""
    if not docs:
        raise Refused("empty")
    if any(not isinstance(d, dict) for d in docs):
        raise Refused("not an object")
    for d in docs:
        if d.get("kind") not in (None, kind + "List", "List"):
            raise Refused(a_kind(d["kind"]))
    if any(not isinstance(d.get("items"), list) for d in docs):
        raise Refused("no items array")
    for d in docs:
        for item in d["items"]:
            if isinstance(item, dict) and item.get("kind") not in (None, kind):
                raise Refused("a list holding " + a_kind(item["kind"]))
    version = lambda d: get(d, "metadata", "resourceVersion")
    # The API server writes the version as a string; a number is no version.
    if any(version(d) is not None and not isinstance(version(d), str) for d in docs):
        raise Refused("resourceVersion not a string")
    if any(version(d) != version(docs[0]) for d in docs):
        raise Refused("mixes pages of resourceVersion")
    if alt(get(docs[-1], "metadata", "continue"), "") != "":
        raise Refused("incomplete")
    return {"items": [item for d in docs for item in d["items"]], "resourceVersion": read_at(docs)}


# The fields the rules read, with the API's types: absent and null are unset (a
# pod just created has no status), anything else of another type is refused
# (a number where a name belongs, a replicas of "3", NaN). Each is checked
# where the rules read it: every pod's namespace and uid, the node and phase
# of every pod counted, the name of every pod listed.
POD_IDENTITY = [("metadata", "namespace", str), ("metadata", "uid", str)]
POD_STATE = [("spec", "nodeName", str), ("status", "phase", str)]
WORKLOAD_FIELDS = [("metadata", "namespace", str), ("metadata", "name", str), ("metadata", "uid", str),
                   ("metadata", "generation", "int32"), ("spec", "replicas", "int32"),
                   ("status", "observedGeneration", "int32"), ("status", "desiredNumberScheduled", "int32")]


def has_type(value, wanted):
    """Whether a set value has the API's type: a string, or an int32 count
    (an integer from 0 to 2**31 - 1; 3.0 is 3, NaN and 1e400 are none)."""
    if wanted is str:
        return isinstance(value, str)
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and not math.isnan(value) and 0 <= value <= 2**31 - 1 and value == math.floor(value))


def item_problem(item, fields, parts=("metadata", "spec", "status")):
    """What is wrong with one item of a list, or None: it is no object, or one of
    `parts` is set but no object, or a field of `fields` is set but of another type
    (the first such, in the order of `fields`)."""
    if not isinstance(item, dict):
        return "not an object"
    for part in parts:
        if item.get(part) is not None and not isinstance(item[part], dict):
            return f"{part} not an object"
    for part, key, wanted in fields:
        value = get(item, part, key)
        if value is not None and not has_type(value, wanted):
            return f"{part}.{key} of another type"
    return None


def each_once(items, fields, what, parts=("metadata", "spec", "status")):
    """A state holds each object once: the first item (in order) with a problem is
    refused; else the first whose uid an earlier one has (two lists joined, a
    hand-merged file, a server repeating an item: never counted twice)."""
    for at, item in enumerate(items):
        problem = item_problem(item, fields, parts)
        if problem:
            raise Refused(f"{what} {at + 1}: {problem}")
    seen = {}
    for at, item in enumerate(items):
        uid_ = get(item, "metadata", "uid")
        if uid_ is None:
            continue
        if uid_ in seen:
            raise Refused(f"{what}s {seen[uid_] + 1} and {at + 1}: one uid")
        seen[uid_] = at


def snapshot_of(docs, excluded=None, within=(set(), [])):
    """The pods of a snapshot: joined (above), each pod once, its namespace and uid
    of their types; then of the pods counted (outside the excluded namespaces, in
    the selection) the node and phase, and of those listed (without a node and
    not done, or Failed: unscheduled, excused or failed) the name."""
    pods_doc = joined(docs, "Pod")
    items = pods_doc["items"]
    each_once(items, POD_IDENTITY, "pod", parts=("metadata",))
    excluded = excluded_namespaces() if excluded is None else excluded
    only, terms = within
    counted = [(at, p) for at, p in enumerate(items) if get(p, "metadata", "namespace") not in excluded
               and (not only or get(p, "metadata", "namespace") in only) and selected(p, terms)]
    for at, p in counted:
        problem = item_problem(p, POD_STATE, parts=("spec", "status"))
        if problem:
            raise Refused(f"pod {at + 1}: {problem}")
    node = lambda p: get(p, "spec", "nodeName") or ""
    phase = lambda p: get(p, "status", "phase")
    listed = ([(at, p) for at, p in counted if node(p) == "" and phase(p) not in ("Succeeded", "Failed")]
              + [(at, p) for at, p in counted if phase(p) == "Failed"])
    for at, p in listed:
        if get(p, "metadata", "name") is not None and not isinstance(get(p, "metadata", "name"), str):
            raise Refused(f"pod {at + 1}: metadata.name of another type")
    return pods_doc


def read_at(docs):
    """The resourceVersion the snapshot was read at, which the result names (issue 15):
    the first document's metadata.resourceVersion (every page carries the same one) when it
    is a non-empty string, else None, "unknown". The API server gives every list its version
    (a PodList, raw pages); `kubectl get -o json` prints a List it assembled itself, whose
    resourceVersion is "", so a List's snapshot has no known version (nor has a document
    whose version is not a string: Kubernetes writes strings)."""
    version = get(docs[0], "metadata", "resourceVersion")
    return version if isinstance(version, str) and version != "" else None


def selection(name):
    """The case's selection (issue 32): its namespaces (a set; empty = every one) and its
    label selector's terms, [(key, op, value)], from the case's files, parsed here
    independently of report.jq: `key`, `!key`, `key=value`, `key==value`, `key!=value`."""
    def read(file):
        path = HERE / name / file
        return path.read_text().strip() if path.is_file() else ""
    namespaces = set(read(NAMESPACES_FILE).split(",")) - {""}
    terms = []
    for term in filter(None, read(SELECTOR_FILE).split(",")):
        if term.startswith("!"):
            terms.append((term[1:], "absent", None))
        elif "!=" in term:
            key, value = term.split("!=", 1)
            terms.append((key, "not", value))
        elif "=" in term:
            key, value = term.replace("==", "=", 1).split("=", 1)
            terms.append((key, "is", value))
        else:
            terms.append((term, "present", None))
    return namespaces, terms


def selected(pod, terms):
    labels = get(pod, "metadata", "labels")
    labels = labels if isinstance(labels, dict) else {}
    for key, op, value in terms:
        have = labels.get(key)
        if (op == "present" and have is None) or (op == "absent" and have is not None) \
                or (op == "is" and have != value) or (op == "not" and have == value):
            return False
    return True


def model(pods_doc, events_doc, kinds, substring=False, within=(set(), []), excluded=None):
    """What `verify-pods check --snapshot --events --format json` must say, from the rules of
    issues 2 and 11: a pending pod without a node is unscheduled unless an owner's kind is one
    of `kinds` (exact match, issue 24). With `substring`, upstream's rule instead: an owner
    kind that contains "Job"."""
    excluded = excluded_namespaces() if excluded is None else excluded
    pods = [p for p in pods_doc["items"] if get(p, "metadata", "namespace") not in excluded]
    only, terms = within
    pods = [p for p in pods if (not only or get(p, "metadata", "namespace") in only) and selected(p, terms)]
    phase = lambda p: get(p, "status", "phase")
    node = lambda p: alt(get(p, "spec", "nodeName"), "")
    owner_kinds = lambda p: [get(o, "kind") for o in (get(p, "metadata", "ownerReferences") or [])]

    def excused_by(p):
        if substring:
            return [k for k in owner_kinds(p) if isinstance(k, str) and "Job" in k]
        return [k for k in owner_kinds(p) if k in kinds]

    def nodeless(p):
        # Issue 29: no node, and not done (Succeeded, Failed): Pending, and also
        # Running, Unknown or no phase at all without a node, is not scheduled.
        return node(p) in ("", False) and phase(p) not in ("Succeeded", "Failed")

    def is_unscheduled(p):
        return nodeless(p) and not excused_by(p)

    def failure(p):
        states = [get(c, "state", "terminated") for c in (get(p, "status", "containerStatuses") or [])]
        term = next((t for t in states if isinstance(t, dict)), {})
        reason = alt(term.get("reason"), get(p, "status", "reason"), "Unknown")
        message = alt(term.get("message"), get(p, "status", "message"), "")
        return {"namespace": canon(get(p, "metadata", "namespace")), "name": canon(get(p, "metadata", "name")),
                "reason": canon(reason), "message": canon(message)}

    def unscheduled_pod(p):
        # The scheduler's own verdict, from the same snapshot: the PodScheduled
        # condition with status "False" (null reason and message without one).
        scheduled = get(p, "status", "conditions")
        scheduled = scheduled if isinstance(scheduled, list) else []
        cond = next((c for c in scheduled if isinstance(c, dict)
                     and c.get("type") == "PodScheduled" and c.get("status") == "False"), {})
        return {"namespace": canon(get(p, "metadata", "namespace")), "name": canon(get(p, "metadata", "name")),
                "uid": canon(get(p, "metadata", "uid")),
                "reason": canon(cond.get("reason")), "message": canon(cond.get("message"))}

    unscheduled = [unscheduled_pod(p) for p in pods if is_unscheduled(p)]
    # Issue 29: the pods without a node that an owner kind excused, said.
    excused = [p for p in pods if nodeless(p) and excused_by(p)]
    failed = [failure(p) for p in pods if phase(p) == "Failed"]
    matched = model_events(events_doc, unscheduled) if unscheduled else None
    per_node = {}
    for p in pods:
        key = "<none>" if node(p) == "" else node(p)
        per_node[key] = per_node.get(key, 0) + 1
    # jq's order: numbers before strings, strings by code point.
    order_key = lambda k: (0, k, b"") if isinstance(k, (int, float)) else (1, 0, k.encode())
    counts = {name: sum(phase(p) == name.capitalize() for p in pods) for name in ("running", "pending", "succeeded")}
    result = {
        "total": len(pods),
        "running": counts["running"],
        "pending": counts["pending"],
        "failed": len(failed),
        "succeeded": counts["succeeded"],
        # Unknown, no phase at all, or a phase Kubernetes does not define.
        "other": sum(phase(p) not in ("Running", "Pending", "Failed", "Succeeded") for p in pods),
        "unscheduled": len(unscheduled),
        "unscheduled_pods": unscheduled,
        "failed_pods": failed,
        "excused": len(excused),
        "excused_pods": [unscheduled_pod(p) for p in excused],
        "excused_kinds": sorted({k for p in excused for k in excused_by(p)}, key=jq_order),
        "distribution": [{"node": canon(n), "pods": per_node[n]} for n in sorted(per_node, key=order_key)],
        # Issue 32: the namespaces of the counted pods (the CTRF and JUnit
        # tests), in jq's order of the raw values, with how many pods each has.
        "namespaces": [{"namespace": canon(v), "pods": n}
                       for v, n in sorted(count_raw(get(p, "metadata", "namespace") for p in pods),
                                          key=lambda vn: jq_order(vn[0]))],
        # A selection (-n, -l) that selects no pod fails, as `kubectl wait` does; only
        # the whole cluster may be empty (upstream's warning).
        "verdict": "fail" if unscheduled or failed or (not pods and (only or terms))
                   else ("empty" if not pods else "pass"),
        "resource_version": pods_doc["resourceVersion"],
        "attempts": 1,
        "waited_seconds": 0,
        # Every matched event, newest first (issue 29: the outputs pick each
        # group's newest; before, the newest 50 of all crowded small groups out).
        "events": matched,
        "events_matched": None if matched is None else len(matched),
        # Issue 23: the pods by cause, largest group first (ties in jq's
        # order of reason, then message).
        "unscheduled_groups": by_count([
            {"reason": reason, "message": message, "count": n}
            for (reason, message), n in count_by(unscheduled, lambda p: (p["reason"], p["message"]))]),
        "failed_groups": by_count([
            {"reason": reason, "count": n,
             "message": shared(p["message"] for p in failed if p["reason"] == reason)}
            for (reason,), n in count_by(failed, lambda p: (p["reason"],))]),
    }
    return result


# ---- Pods not yet created (issue 30), from the rules of the issue, not from workloads.jq.

WORKLOADS_FILE = "workloads.json"


def workloads_joined(docs, pods_version):
    """The workloads of a workloads file: one List (`kubectl get rs,sts,ds,deploy -A -o json`,
    items with their kind) or the raw pages of the four apps/v1 lists, one after the other
    (items without kind: the list's kind without `List`). Like a snapshot, they are one
    state: every document at the first one's resourceVersion, and a page with a continue
    token is followed by the next page of the same list, the last page by none; and when
    both the pods' and the workloads' versions are known, they are the same one."""
    if not docs:
        raise Refused("workloads empty")
    if any(not isinstance(d, dict) for d in docs):
        raise Refused("workloads: a document is no object")
    # Only lists of the four kinds (or a List of them): a single Deployment, or
    # an empty NodeList, is a wrong file too.
    for d in docs:
        if d.get("kind") not in [None, "List"] + [k + "List" for k in WORKLOAD_KINDS]:
            raise Refused("workloads: " + a_kind(d["kind"]))
    if any(not isinstance(d.get("items"), list) for d in docs):
        raise Refused("workloads: no items array")
    version = lambda d: get(d, "metadata", "resourceVersion")
    if any(version(d) is not None and not isinstance(version(d), str) for d in docs):
        raise Refused("workloads: resourceVersion not a string")
    if any(version(d) != version(docs[0]) for d in docs):
        raise Refused("workloads mix resourceVersions")
    for d, after in zip(docs, docs[1:] + [None]):
        if alt(get(d, "metadata", "continue"), "") != "" and (after is None or after.get("kind") != d.get("kind")):
            raise Refused("workloads: a list is incomplete")
    at = read_at(docs)
    if at is not None and pods_version is not None and at != pods_version:
        raise Refused("workloads at another resourceVersion than the pods")
    items = []
    for d in docs:
        list_kind = d.get("kind") if isinstance(d.get("kind"), str) else ""
        for item in d["items"]:
            kind = alt(get(item, "kind"), list_kind[:-4] if list_kind.endswith("List") else None)
            items.append((kind, item))
    # Only the four kinds whose pods the rules count: a Pod or a Job among
    # them is a wrong file, not a workload to skip.
    for kind, item in items:
        if isinstance(item, dict) and kind not in WORKLOAD_KINDS:
            raise Refused("workloads: " + a_kind(kind))
    # Each an object with the API's types, each uid once.
    each_once([item for _, item in items], WORKLOAD_FIELDS, "workloads: item")
    return items


def workload_kinds_read(docs):
    """The kinds whose lists a workloads file holds: the raw pages of the apps/v1 lists
    (`ReplicaSetList`, ...) name theirs, and a kind that cannot be listed (403, 404) has no
    page; any other document (`kubectl get rs,sts,ds,deploy -A -o json`'s `List`) was asked
    for all four."""
    read = set()
    for d in docs:
        kind = d.get("kind") if isinstance(d, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and kind[:-4] in WORKLOAD_KINDS:
            read.add(kind[:-4])
        else:
            return set(WORKLOAD_KINDS)
    return read


def revision(rs):
    """A ReplicaSet's rollout number: the deployment controller writes it as a decimal string
    in the annotation deployment.kubernetes.io/revision; compared as the integer it is. None,
    or anything but digits: -1, older than every revision."""
    value = get(rs, "metadata", "annotations", "deployment.kubernetes.io/revision")
    if isinstance(value, str) and value != "" and all(c in "0123456789" for c in value):
        return int(value)
    return -1


def model_workloads(pods_doc, workloads, kinds, within=(set(), []), excluded=None, read=None):
    """`missing` and `missing_workloads`: None when no workloads were checked. Each workload
    outside the excluded namespaces, whose own owners are of no excluded kind, wants:
    a StatefulSet spec.replicas (default 1); a DaemonSet status.desiredNumberScheduled once
    status.observedGeneration >= metadata.generation, else unknown; a ReplicaSet of no
    listed Deployment, and one that is not the newest of its Deployment (an old one being
    scaled down), its own spec.replicas (default 1).
    A Deployment (the first listed Deployment among a ReplicaSet's owners is its Deployment)
    is done when its newest ReplicaSets (the highest revision annotation, as an integer;
    several when they share it, all when none has one) have its spec.replicas pods: it has
    created theirs, and they are not counted on their own. Its spec.replicas is unknown
    while observedGeneration < generation; a paused Deployment (spec.paused true: the user
    stopped the rollout) wants what its newest ReplicaSets want (spec.replicas each,
    none: 0), the rollout not going on.
    It has created its active pods: owned by its uid (a pod naming it twice once), no
    deletionTimestamp, not Succeeded nor Failed.
    Missing = wanted - created, never below 0; an unknown wanted counts 1 (at least one pod
    the controller has not yet made known). Listed: every workload missing pods, by
    namespace, name, kind. `read`: the kinds whose lists were read (all by default); a
    kind not read is not checked, nor are Deployments without the ReplicaSets; nothing to
    check is None. With -n, only the workloads of those namespaces; with -l, none are
    checked (None): which pods a workload will create is not known from its labels."""
    only, terms = within
    checked = set(WORKLOAD_KINDS) if read is None else set(read)
    if "ReplicaSet" not in checked:
        checked.discard("Deployment")
    if workloads is None or terms or not checked:
        return {"missing": None, "missing_workloads": None}
    excluded = excluded_namespaces() if excluded is None else excluded
    pods = pods_doc["items"]
    active = {}
    for p in pods:
        if get(p, "metadata", "deletionTimestamp") is not None:
            continue
        if get(p, "status", "phase") in ("Succeeded", "Failed"):
            continue
        refs = get(p, "metadata", "ownerReferences")
        # A pod counts once for each owner it names, however many times it names it.
        for ref in {get(r, "uid") for r in (refs if isinstance(refs, list) else []) if isinstance(get(r, "uid"), str)}:
            active[ref] = active.get(ref, 0) + 1
    def owners_of(w):
        refs = get(w, "metadata", "ownerReferences")
        return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    # The listed Deployments, when checked (without them, their ReplicaSets count on their own).
    deployments = {get(w, "metadata", "uid") for k, w in workloads if k == "Deployment" and k in checked}
    deployments = {d for d in deployments if isinstance(d, str)}

    def deployment_of(rs):
        return next((r["uid"] for r in owners_of(rs) if r.get("kind") == "Deployment" and r.get("uid") in deployments), None)

    replicasets_of = {}
    for k, w in workloads:
        if k == "ReplicaSet" and deployment_of(w) is not None:
            replicasets_of.setdefault(deployment_of(w), []).append(w)
    # The newest ReplicaSets of each Deployment, by identity (the same uid may be listed twice).
    newest = {}
    for d, sets in replicasets_of.items():
        top = max(revision(rs) for rs in sets)
        newest[d] = [rs for rs in sets if revision(rs) == top]
    newest_ids = {id(rs) for sets in newest.values() for rs in sets}

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def reconciled(w):
        # observedGeneration >= generation (0 when absent), in jq's order of values.
        observed, generation = get(w, "status", "observedGeneration"), get(w, "metadata", "generation")
        return jq_order(observed) >= jq_order(alt(generation, 0))

    def replicas(w):
        v = get(w, "spec", "replicas")
        return canon(v) if number(v) else 1

    listed, missing = [], 0
    for kind, w in workloads:
        if kind not in checked:
            continue
        if get(w, "metadata", "namespace") in excluded:
            continue
        if only and get(w, "metadata", "namespace") not in only:
            continue
        if any(r.get("kind") in kinds for r in owners_of(w)):
            continue
        me = get(w, "metadata", "uid")
        if kind == "ReplicaSet" and id(w) in newest_ids:
            continue
        if kind == "Deployment":
            mine = newest.get(me, [])
            created = sum(active.get(get(rs, "metadata", "uid"), 0) for rs in mine)
            if not reconciled(w):
                wanted = None
            elif get(w, "spec", "paused") is True:
                wanted = sum(replicas(rs) for rs in mine)
            else:
                wanted = replicas(w)
        elif kind == "DaemonSet":
            created = active.get(me, 0)
            desired = get(w, "status", "desiredNumberScheduled")
            wanted = (canon(desired) if number(desired) else 0) if reconciled(w) else None
        else:
            created = active.get(me, 0)
            wanted = replicas(w)
        short = 1 if wanted is None else max(wanted - created, 0)
        if short:
            missing += short
            listed.append({"kind": kind, "namespace": canon(get(w, "metadata", "namespace")),
                           "name": canon(get(w, "metadata", "name")), "wanted": wanted, "created": created})
    listed.sort(key=lambda m: (jq_order(m["namespace"]), jq_order(m["name"]), jq_order(m["kind"])))
    return {"missing": missing, "missing_workloads": listed}


def count_raw(values):
    """[(value, how many times it occurs)], values compared as jq compares them (1 == 1.0)."""
    counts = {}
    for v in values:
        counts.setdefault(jq_order(v), [v, 0])[1] += 1
    return list(counts.values())


def jq_order(value):
    """A sort key of jq's order of values: null < false < true < numbers < strings (by bytes)."""
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1 + value,)
    if isinstance(value, (int, float)):
        return (3, value)
    if isinstance(value, str):
        return (4, value.encode())
    return (5, json.dumps(value, sort_keys=True))


def count_by(items, key):
    """[(key, how many)], one per distinct key (keys compared as JSON values)."""
    counts = {}
    for item in items:
        k = json.dumps(key(item))
        counts[k] = counts.get(k, 0) + 1
    return [(tuple(json.loads(k)), n) for k, n in counts.items()]


def by_count(groups):
    return sorted(groups, key=lambda g: (-g["count"], jq_order(g["reason"]), jq_order(g["message"])))


def shared(values):
    """The value every item has, else None."""
    values = list(values)
    return values[0] if all(v == values[0] for v in values) else None


RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})")


def instant(text):
    """An event time as kubectl compares it (`Before`): a point in time, so
    `…:42.512345Z` is after `…:42Z` and `12:00+02:00` is `10:00Z`. The key is
    (UTC time to the second, nanoseconds as 9 digits); a missing or unreadable
    time is () and sorts before every time."""
    m = RFC3339.fullmatch(text) if isinstance(text, str) else None
    if not m:
        return ()
    year, month, day, hour, minute, second = map(int, m.groups()[:6])
    zone = m.group(8)
    try:
        at = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
        if zone != "Z":
            hours, minutes = int(zone[1:3]), int(zone[4:6])
            if hours > 23 or minutes > 59:
                return ()
            offset = timedelta(hours=hours, minutes=minutes)
            at = at - offset if zone[0] == "+" else at + offset
    except (ValueError, OverflowError):
        return ()
    return (at.timetuple()[:6], (m.group(7) or "")[:9].ljust(9, "0"))


def stamp(value):
    """A time field that is set: a non-empty string (Go's zero time is null or absent)."""
    return value if isinstance(value, str) and value != "" else None


def positive(value):
    """A count as kubectl has it: an int32 above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return canon(value) if 0 < value < 2**31 and value == math.floor(value) else None


def first(*values):
    return next((v for v in values if v is not None), None)


def model_events(events_doc, unscheduled):
    """kubectl's rules (printEvent in pkg/printers/internalversion/printers.go, eventTime() in
    kubectl/pkg/cmd/events/events.go), for core/v1 events and events.k8s.io/v1 events alike."""
    uid_of = {(p["namespace"], p["name"]): alt(p["uid"], "") for p in unscheduled}
    shown = []
    for ev in events_doc["items"]:
        obj = alt(ev.get("involvedObject"), ev.get("regarding"), {})
        key = (canon(obj.get("namespace")), canon(obj.get("name")))
        if ev.get("reason") != "FailedScheduling" or alt(obj.get("kind"), "Pod") != "Pod" or key not in uid_of:
            continue
        if uid_of[key] != "" and alt(obj.get("uid"), "") != "" and obj["uid"] != uid_of[key]:
            continue
        series = ev.get("series") if isinstance(ev.get("series"), dict) else None
        first_seen = first(stamp(ev.get("firstTimestamp")), stamp(ev.get("deprecatedFirstTimestamp")),
                           stamp(ev.get("eventTime")))
        last_seen = first(stamp(series.get("lastObservedTime")) if series else None,
                          stamp(ev.get("lastTimestamp")), stamp(ev.get("deprecatedLastTimestamp")),
                          first_seen, "")
        count = first(positive(series.get("count")) if series else None,
                      positive(ev.get("count")), positive(ev.get("deprecatedCount")), 1)
        shown.append({"namespace": canon(key[0]), "pod": canon(key[1]), "last_seen": last_seen, "count": count,
                      "message": canon(alt(ev.get("message"), ev.get("note"), ""))})
    # Newest first, as instants; ties in a fixed order.
    order = lambda e: (instant(e["last_seen"]), e["namespace"], e["pod"], e["message"])
    return list(reversed(sorted(shown, key=order)))


def hidden(c):
    """C0/C1 controls, DEL, line/paragraph separators and invisible direction
    marks/overrides: characters that would make a log line lie about itself."""
    o = ord(c)
    return o < 32 or o == 127 or 128 <= o < 160 or o in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029) \
        or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069


def flat(text):
    """A message as one log line: every hidden control becomes a space."""
    return "".join(" " if hidden(c) else c for c in str(text))


def interpolated(value):
    """A value in a jq string interpolation: a string as it is, anything else as JSON (a
    message read as null, from a number none prints alike, is `null`)."""
    return value if isinstance(value, str) else json.dumps(value)


def list_limit(name):
    """The case's list limit: its list-limit file, else the contract's default."""
    file = HERE / name / LIMIT_FILE
    if file.is_file():
        return int(file.read_text())
    knobs = json.loads((ROOT / "checker/programs/contract.json").read_text())["knobs"]
    return next(k["default"] for k in knobs if k["name"] == "list_limit")


def check_digest(expected, lines, limit):
    """The digest: per group (at most `limit`, largest first) a line with its
    count and cause, then its first `limit` pods (snapshot order) and a line
    with how many more; a line with the groups left out; no other pod named."""
    problems = []
    at = 0  # the failed pods come after the unscheduled ones
    for kind, pods, groups, key in (
            ("unscheduled", expected["unscheduled_pods"], expected["unscheduled_groups"],
             lambda p, g: p["reason"] == g["reason"] and p["message"] == g["message"]),
            ("failed", expected["failed_pods"], expected["failed_groups"],
             lambda p, g: p["reason"] == g["reason"])):
        named = set()
        for g in groups[:limit]:
            cause = [flat(v if isinstance(v, str) else json.dumps(v)).rstrip()
                     for v in (g["reason"], g["message"]) if v is not None and flat(v).strip()]
            found = next((i for i in range(at, len(lines))
                          if lines[i].startswith(f"  {g['count']} pod") and all(c in lines[i] for c in cause)), None)
            if found is None:
                problems.append(f"{kind}: no line for the group {g}")
                continue
            members = [p for p in pods if key(p, g)][:limit]
            for i, p in enumerate(members, start=found + 1):
                ref = flat(f"{p['namespace']}/{p['name']}")
                own = flat(p["message"]).rstrip() if kind == "failed" and g["message"] is None and p["message"] else ""
                want = f"    {ref}" + (f": {own}" if own else "")
                named.add(ref)
                if i >= len(lines) or lines[i] != want:
                    problems.append(f"{kind}: expected {want!r} at line {i + 1}")
            at = found + 1 + len(members)
            if g["count"] > len(members):
                if at >= len(lines) or str(g["count"] - len(members)) not in lines[at] or not lines[at].startswith("    "):
                    problems.append(f"{kind}: no '{g['count'] - len(members)} more' after the group {g}")
                at += 1
        if len(groups) > limit:
            left = groups[limit:]
            if at >= len(lines) or str(len(left)) not in lines[at] or str(sum(g["count"] for g in left)) not in lines[at]:
                problems.append(f"{kind}: no line for the {len(left)} groups left out")
        for p in pods:
            ref = flat(f"{p['namespace']}/{p['name']}")
            if ref not in named and any(line.strip() == ref or line.strip().startswith(ref + ":") for line in lines):
                problems.append(f"{kind}: {ref} is named beyond the limit")
    return problems


# Upstream verify_pods()'s own lines, which CI logs are grepped for (issue 24):
# the spec these lines are held to, not a copy of render.jq's words.
START_LINE = "Verifying pod scheduling..."
PASSED_LINE = "Scheduling validation PASSED: all {total} pods scheduled successfully"
EMPTY_LINE = "No pods were created - bundle may be empty"
FAILED_BANNER = "Scheduling validation FAILED"
BANNER_RULE = "=" * 42
UNSCHEDULED_LINE = "{n} pods could not be scheduled to nodes"
FAILED_LINE = "{n} pods are in Failed state"


def check_upstream_lines(expected, lines):
    """The start line first; a pass or an empty cluster ends with upstream's sentence; a
    failure has upstream's banner (a line of `=` above and below) after the status line,
    followed at once by upstream's counts of what failed and a blank line, and ends with
    the rule, as upstream's failing branch does."""
    problems = []
    if lines[:1] != [START_LINE]:
        problems.append(f"the first line is not {START_LINE!r}: {lines[:1]!r}")
    # "all N pods scheduled" is true (issue 29): the excused pods, not scheduled, are not in N.
    ending = {"pass": PASSED_LINE.format(total=expected["total"] - expected.get("excused", 0)),
              "empty": EMPTY_LINE}.get(expected["verdict"])
    if ending is not None and lines[-1:] != [ending]:
        problems.append(f"the last line is not {ending!r}: {lines[-1:]!r}")
    banners = [i for i, line in enumerate(lines) if line == FAILED_BANNER]
    if expected["verdict"] != "fail":
        if banners:
            problems.append(f"a {FAILED_BANNER!r} banner for verdict {expected['verdict']}")
        return problems
    if len(banners) != 1 or banners[0] < 3:
        return problems + [f"no one {FAILED_BANNER!r} banner after the status line: {banners}"]
    at = banners[0]
    # Upstream's width and spacing (issue 31, as its function prints them through
    # log_error): 42 `=`, the words, 42 `=`, the counts, a blank line; no blank above.
    if lines[at - 2:at + 2] != [lines[at - 2], BANNER_RULE, FAILED_BANNER, BANNER_RULE] \
            or lines[at - 2] in ("", BANNER_RULE):
        problems.append(f"the banner is not upstream's: {lines[at - 2:at + 2]!r}")
    counts = [UNSCHEDULED_LINE.format(n=expected["unscheduled"])] if expected["unscheduled"] else []
    counts += [FAILED_LINE.format(n=expected["failed"])] if expected["failed"] else []
    if lines[at + 2:at + 3 + len(counts)] != counts + [""]:
        problems.append(f"the banner is not followed by {counts} and a blank line: "
                        f"{lines[at + 2:at + 3 + len(counts)]}")
    if lines[-1:] != [BANNER_RULE]:
        problems.append(f"the failure does not end with the rule: {lines[-1:]!r}")
    return problems


def check_text(name, expected, lines):
    """The text golden mentions every listed pod, reason, message, event and node, on clean lines.

    Only data is looked for (the wording belongs to render.jq), plus the documented
    `Pod status:` counts line that CI log searches rely on, whose numbers add up."""
    problems = []
    for line in lines:
        if any(hidden(c) for c in line):
            problems.append(f"control character in text line {line!r}")
        if line != line.rstrip():
            problems.append(f"text line ends with whitespace: {line!r}")
    limit = list_limit(name)
    if limit == 0:
        wanted = [f"{p['namespace']}/{p['name']}" for p in expected["unscheduled_pods"]]
        wanted += [flat(p[k]).rstrip() for p in expected["unscheduled_pods"] for k in ("reason", "message")
                   if isinstance(p.get(k), str) and flat(p[k]).strip()]
        wanted += [flat(f"{p['namespace']}/{p['name']}") for p in expected["failed_pods"]]
        wanted += [flat(p[k]).rstrip() for p in expected["failed_pods"] for k in ("reason", "message")
                   if p[k] is not None and flat(p[k]).strip()]
    else:
        wanted = []
        problems += check_digest(expected, lines, limit)
    # The events (issue 29): every one with no limit; else each group shown
    # (the first `limit`) its own newest, `limit` split evenly among them (at
    # least 1 each): never more than `limit` lines, no group crowded out.
    events = expected["events"] or []
    if limit == 0:
        shown = events
    else:
        groups = expected["unscheduled_groups"][:limit]
        share = max(1, limit // len(groups)) if groups else 0
        shown = []
        for g in groups:
            pods = {(p["namespace"], p["name"]) for p in expected["unscheduled_pods"]
                    if p["reason"] == g["reason"] and p["message"] == g["message"]}
            shown += [e for e in events if (e["namespace"], e["pod"]) in pods][:share]
    event_text = lambda e: flat(f"{e['last_seen']} {e['namespace']}/{e['pod']} (x{e['count']}): {interpolated(e['message'])}").strip()
    stripped = [line.strip() for line in lines]
    at, event_lines = 0, []
    for e in shown:
        found = next((i for i in range(at, len(lines)) if stripped[i] == event_text(e)), None)
        if found is None:
            problems.append(f"event not listed (in order): {event_text(e)!r}")
            continue
        event_lines.append(found)
        at = found + 1
    every = {event_text(e) for e in events}
    if sum(line in every for line in stripped) != len(shown):
        problems.append(f"{sum(line in every for line in stripped)} event lines, expected {len(shown)}")
    # The verdict first (issue 29): the pods named before any event or the
    # node distribution.
    refs = {flat(f"{p['namespace']}/{p['name']}") for p in expected["unscheduled_pods"] + expected["failed_pods"]}
    named = [i for i, line in enumerate(stripped) if any(line == r or line.startswith(r + ":") for r in refs)]
    evidence = event_lines + [i for i, line in enumerate(lines) if line.startswith("Pod distribution")]
    if named and evidence and max(named) > min(evidence):
        problems.append(f"a pod is named at line {max(named) + 1}, after the evidence at line {min(evidence) + 1}")
    # Every excuse said (issue 29), in words that name neither driver's setting
    # (the checker's flag, a host's variable): both drivers print it.
    excuse = [line for line in lines if line.endswith(" (excluded owner kinds)")]
    if expected.get("excused"):
        if len(excuse) != 1 or not all(str(k) in excuse[0] for k in expected["excused_kinds"]) \
                or not excuse[0].startswith(f"{expected['excused']} pod"):
            problems.append(f"no one line says the {expected['excused']} excused pods: {excuse}")
    elif excuse:
        problems.append(f"an excuse line, with no pod excused: {excuse}")
    nodes = [d for d in expected["distribution"] if d["node"] != "<none>"]
    node_lines = [f"  {flat(d['node'])}: {d['pods']}" for d in nodes]
    if limit and nodes and expected["verdict"] == "pass":
        # A pass keeps the distribution short: its summary, no node listed.
        counts = sorted(d["pods"] for d in nodes)
        none = sum(d["pods"] for d in expected["distribution"] if d["node"] == "<none>")
        summary = [str(len(nodes)), str(counts[0]), str(counts[(len(counts) - 1) // 2]), str(counts[-1]), str(none)]
        if not any(all(f in line for f in summary) for line in lines):
            problems.append(f"no node summary line with {summary}")
        problems += [f"a pass lists a node: {line!r}" for line in lines if line in node_lines]
    elif limit and len(nodes) > limit:
        counts = sorted(d["pods"] for d in nodes)
        none = sum(d["pods"] for d in expected["distribution"] if d["node"] == "<none>")
        summary = [str(len(nodes)), str(counts[0]), str(counts[(len(counts) - 1) // 2]), str(counts[-1]), str(none)]
        if not any(all(f in line for f in summary) for line in lines):
            problems.append(f"no node summary line with {summary}")
        busiest = sorted(nodes, key=lambda d: (-d["pods"], jq_order(d["node"])))
        shown = [f"  {flat(d['node'])}: {d['pods']}" for d in busiest[:limit]]
        at = next((i for i, line in enumerate(lines) if line == shown[0]), None)
        if at is None or lines[at:at + limit] != shown:
            problems.append(f"the {limit} busiest nodes are not listed in order: {shown}")
        problems += [f"node listed beyond the limit: {line!r}" for line in lines
                     if any(line == f"  {flat(d['node'])}: {d['pods']}" for d in busiest[limit:])]
    else:
        wanted += [flat(d["node"]) if isinstance(d["node"], str) else json.dumps(d["node"]) for d in expected["distribution"]]
    # The version the verdict was decided at, when it is known (rule: read_at).
    if isinstance(expected.get("resource_version"), str):
        wanted.append(flat(expected["resource_version"]))
    for text in wanted:
        if not any(text in line for line in lines):
            problems.append(f"expected.txt lacks {text!r}")
    # The prefix scripts and `verify-pods triage` match, kept exactly; then a
    # term for every other phase that has pods, so that the numbers after
    # `total` (leaving out the unscheduled ones in parentheses) add up.
    status = f"Pod status: {expected['total']} total, {expected['running']} running, {expected['pending']} pending " \
             f"({expected['unscheduled']} unscheduled), {expected['failed']} failed"
    status += "".join(f", {expected[k]} {k}" for k in ("succeeded", "other") if expected.get(k))
    # Issue 30: the pods the workloads want and that do not exist yet.
    if expected.get("missing"):
        status += f", {expected['missing']} not yet created"
    # The status line comes right after upstream's start line.
    if len(lines) < 2 or not lines[1].startswith(status + " ("):
        problems.append(f"second line does not start with the counts {status!r}: {lines[1:2]!r}")
    else:
        counted = re.sub(r", \d+ not yet created$", "", lines[1].split(" (attempts=")[0])
        terms = re.findall(r"(?:, |^Pod status: )(\d+) ", counted.replace(" (", ", ("))
        if sum(map(int, terms[1:])) != int(terms[0]):
            problems.append(f"the counts of the status line do not add up: {lines[1]!r}")
    problems += check_missing(expected, lines, limit)
    problems += check_selection(name, expected, lines)
    return problems + check_upstream_lines(expected, lines)


def check_selection(name, expected, lines):
    """A selection (-n, -l) that selects no pod is named in one line: its namespaces and
    its selector, as given. A failure whose pods not yet created were not checked (no
    workloads read: `missing` None) says so in one line; any other result says nothing
    of it (check_missing has the lines of the pods that were checked). The goldens are the
    checker's; a host's library without the workloads feature never reads them and says
    nothing of them (golden.rs: a_driver_that_never_reads_the_workloads_says_nothing_of_them)."""
    problems = []
    only, terms = selection(name)
    if expected["total"] == 0 and (only or terms):
        setting = (HERE / name / SELECTOR_FILE)
        words = sorted(only) + ([setting.read_text().strip()] if terms else [])
        named = [line for line in lines[2:] if all(w in line for w in words)]
        if len(named) != 1:
            problems.append(f"no one line names the selection {words}: {named}")
    unchecked = [line for line in lines if "not yet created" in line and "not checked" in line]
    if expected["verdict"] == "fail" and expected.get("missing") is None:
        if len(unchecked) != 1:
            problems.append(f"no one line says the pods not yet created were not checked: {unchecked}")
    elif unchecked:
        problems.append(f"a line says the pods not yet created were not checked, but they were "
                        f"or the check passed: {unchecked}")
    return problems


def check_missing(expected, lines, limit):
    """Issue 30: a group naming how many pods are not yet created, then its first
    `limit` workloads (every one with 0), each with its kind, namespace/name, how many
    pods it has and wants; no group when none is missing."""
    missing = expected.get("missing") or 0
    heading = [i for i, line in enumerate(lines) if re.fullmatch(rf"{missing} pods? not yet created:", line)]
    if not missing:
        return [f"a group of pods not yet created, but none is: {lines[i]!r}" for i in heading]
    if len(heading) != 1:
        return [f"no one heading for the {missing} pods not yet created"]
    problems, at = [], heading[0] + 1
    shown = expected["missing_workloads"] if limit == 0 else expected["missing_workloads"][:limit]
    for w in shown:
        line = lines[at] if at < len(lines) else ""
        want = [f"{w['kind']} {flat(w['namespace'])}/{flat(w['name'])}", f"{w['created']} "]
        want += [f"of {w['wanted']}"] if w["wanted"] is not None else []
        if not line.startswith("  ") or not all(t in line for t in want):
            problems.append(f"expected the workload {want} at line {at + 1}: {line!r}")
        at += 1
    left = len(expected["missing_workloads"]) - len(shown)
    if left and (at >= len(lines) or str(left) not in lines[at]):
        problems.append(f"no line for the {left} workloads left out")
    return problems


def check():
    problems = []
    for name in CASES:
        readme, pods, events, workloads = render(name)
        folder = HERE / name
        for file, want in (("README", (readme + "\n").encode()), ("pods.json", pods), ("events.json", events),
                           (WORKLOADS_FILE, workloads)):
            have = (folder / file).read_bytes() if (folder / file).is_file() else None
            if have != want:
                problems.append(f"{name}/{file}: differs from what make_corpus.py writes (run it with `write`)")
        for file, values in ((LIMIT_FILE, LIMITS), (OWNER_KINDS_FILE, OWNER_KINDS),
                             (NAMESPACES_FILE, NAMESPACES), (SELECTOR_FILE, SELECTORS),
                             (EXCLUDE_NS_FILE, EXCLUDE_NS)):
            path = folder / file
            if (path.read_text() if path.is_file() else None) != (f"{values[name]}\n" if name in values else None):
                problems.append(f"{name}/{file}: differs from what make_corpus.py writes (run it with `write`)")
    pods_version = snapshot_of(documents((HERE / BAD_WORKLOADS_PODS / "pods.json").read_bytes()))["resourceVersion"]
    readers = [(BAD_PAGES, snapshot_of), (BAD_EVENTS, lambda docs: joined(docs, "Event")),
               (BAD_WORKLOADS, lambda docs: workloads_joined(docs, pods_version))]
    for bad, read in readers:
        for file, (fn, reason) in bad.items():
            problems += bad_input_problems(file, bad_text(fn).encode(), reason, read)
    cases = sorted(d for d in HERE.iterdir() if (d / "pods.json").is_file())
    for folder in cases:
        try:
            pods_doc = snapshot_of(documents((folder / "pods.json").read_bytes()),
                                   excluded_namespaces(folder.name), selection(folder.name))
            events_doc = joined(documents((folder / "events.json").read_bytes()), "Event")
            workloads_file = folder / WORKLOADS_FILE
            workloads_doc = (workloads_joined(documents(workloads_file.read_bytes()), pods_doc["resourceVersion"])
                             if workloads_file.is_file() else None)
        except Refused as e:
            problems.append(f"{folder.name}: the model refuses a recorded case: {e}")
            continue
        within, excluded = selection(folder.name), excluded_namespaces(folder.name)
        want = model(pods_doc, events_doc, owner_kinds(folder.name), within=within, excluded=excluded)
        read = workload_kinds_read(documents(workloads_file.read_bytes())) if workloads_doc is not None else None
        want.update(model_workloads(pods_doc, workloads_doc, owner_kinds(folder.name), within, excluded, read))
        if want["missing"]:
            want["verdict"] = "fail"
        if OWNER_KINDS.get(folder.name) == UPSTREAM_EQUIVALENT_KINDS:
            upstream = model(pods_doc, events_doc, set(), substring=True)
            if (upstream["verdict"], upstream["unscheduled_pods"]) != (want["verdict"], want["unscheduled_pods"]):
                problems.append(f"{folder.name}: the upstream-equivalent owner kinds do not give upstream's verdict")
        try:
            got = json.loads((folder / "expected.json").read_bytes())
            code = int((folder / "expected.exit").read_text())
            # Only "\n" ends a line: splitlines() would also split at U+2028 and friends.
            lines = (folder / "expected.txt").read_text().split("\n")[:-1]
        except (OSError, ValueError) as e:
            problems.append(f"{folder.name}: goldens missing or unreadable ({e}); run `make bless`")
            continue
        for key in sorted(set(want) | set(got)):
            if want.get(key, "<absent>") != got.get(key, "<absent>"):
                problems.append(f"{folder.name}: {key}: model says {json.dumps(want.get(key, '<absent>'), ensure_ascii=False)[:300]}, "
                                f"golden says {json.dumps(got.get(key, '<absent>'), ensure_ascii=False)[:300]}")
        if code != (1 if want["verdict"] == "fail" else 0):
            problems.append(f"{folder.name}: exit {code} for verdict {want['verdict']}")
        problems += [f"{folder.name}: {p}" for p in check_text(folder.name, got, lines)]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"checked {len(cases)} cases: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "write":
        write()
    elif command == "check":
        sys.exit(check())
    else:
        sys.exit(__doc__)
