"""Synthetic `kubectl get pods -A -o json` snapshots for `make bench`.

Seeded and deterministic. A pod is ~4.3 KB as compact JSON and ~11.6 KB in
kubectl's 4-space-indented form, with what real clusters carry: labels,
annotations, ownerReferences, managedFields, containers, conditions and
containerStatuses. Phases follow a busy CI cluster: ~80 % Running, 7 %
Pending (half of them without nodeName), 8 % Succeeded (Job and
CronJob-made Job owners), 5 % Failed; ~38 namespaces including kube-system.

Variants (`generate(..., escapes=, compact=)`): kubectl's Go encoder writes
`&`, `<` and `>` as `\u0026`, `\u003c`, `\u003e`. With escapes="some", 3 pods
in 10 run `sh -c "test -f /ready && exec server > /dev/termination-log"` and
carry a dashboard URL annotation with `&` (kubectl's escapes in args and
annotations); with "every", every pod does. compact=True writes the same
document without whitespace (`kubectl get -o json` piped through a minifier,
or an API client's output). Every variant holds the same pods and tally.

Speed: json.dumps of 50k indented dicts is slow, so every (phase, owner)
variant is rendered ONCE into an indented template with @@NAME@@ holes, and
pods are made by joining the template's pieces with the per-pod values.

The generator also tallies what it wrote (per namespace: pods per phase,
pods it made unscheduled) so the benchmark can check every tool's counts
against what is really in the file, not only against each other.
"""

import json
import os
import random
import re

SEED = 20260528

# 38 namespaces; weights give kube-system ~10 % of the pods.
SYSTEM_NAMESPACES = [
    ("kube-system", 100),
    ("kube-public", 2),
    ("kube-node-lease", 2),
    ("local-path-storage", 4),
    ("kwok-system", 6),
    ("argocd", 12),
    ("flux-system", 8),
    ("monitoring", 30),
]
TENANT_NAMESPACES = [
    (name, 28)
    for name in (
        ["training", "inference", "ml-platform", "data-ingest", "batch", "ci-runners"]
        + [f"team-{i:02d}" for i in range(1, 25)]
    )
]
NAMESPACES = SYSTEM_NAMESPACES + TENANT_NAMESPACES
assert len(NAMESPACES) == 38

NODES = 500

HOLE = re.compile(r"@@([A-Z_]+)@@")


def _owner(kind, phase):
    """(apiVersion, kind) of the controller owning a pod, or None."""
    api = {
        "ReplicaSet": "apps/v1",
        "StatefulSet": "apps/v1",
        "DaemonSet": "apps/v1",
        "Job": "batch/v1",
        "PyTorchJob": "kubeflow.org/v1",
    }
    return None if kind is None else (api[kind], kind)


def _container_status(phase):
    if phase == "Running":
        state = {"running": {"startedAt": "@@START@@"}}
    elif phase == "Succeeded":
        state = {
            "terminated": {
                "containerID": "containerd://@@CID@@",
                "exitCode": 0,
                "finishedAt": "@@FINISH@@",
                "reason": "Completed",
                "startedAt": "@@START@@",
            }
        }
    elif phase == "Failed":
        state = {
            "terminated": {
                "containerID": "containerd://@@CID@@",
                "exitCode": 137,
                "finishedAt": "@@FINISH@@",
                "message": "@@FAILMSG@@",
                "reason": "@@FAILREASON@@",
                "startedAt": "@@START@@",
            }
        }
    else:
        state = {"waiting": {"reason": "ContainerCreating"}}
    return {
        "containerID": "containerd://@@CID@@",
        "image": "registry.example.com/@@APP@@:v1.27.3",
        "imageID": "registry.example.com/@@APP@@@sha256:@@CID@@",
        "lastState": {},
        "name": "main",
        "ready": phase == "Running",
        "restartCount": 0,
        "started": phase == "Running",
        "state": state,
    }


def _managed_fields(bound):
    kube_controller = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {
                "f:annotations": {".": {}, "f:kubectl.kubernetes.io/restartedAt": {}},
                "f:generateName": {},
                "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}},
                "f:ownerReferences": {".": {}, 'k:{"uid":"@@OWNER_UID@@"}': {}},
            },
            "f:spec": {
                "f:containers": {
                    'k:{"name":"main"}': {
                        ".": {},
                        "f:args": {},
                        "f:env": {},
                        "f:image": {},
                        "f:imagePullPolicy": {},
                        "f:name": {},
                        "f:ports": {},
                        "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                        "f:terminationMessagePath": {},
                        "f:terminationMessagePolicy": {},
                        "f:volumeMounts": {},
                    }
                },
                "f:dnsPolicy": {},
                "f:enableServiceLinks": {},
                "f:restartPolicy": {},
                "f:schedulerName": {},
                "f:securityContext": {},
                "f:terminationGracePeriodSeconds": {},
                "f:volumes": {},
            },
        },
        "manager": "kube-controller-manager",
        "operation": "Update",
        "time": "@@CREATED@@",
    }
    fields = [kube_controller]
    if bound:
        fields.append(
            {
                "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:status": {
                        "f:conditions": {
                            'k:{"type":"ContainersReady"}': {
                                ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                "f:status": {}, "f:type": {},
                            },
                            'k:{"type":"Initialized"}': {
                                ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                "f:status": {}, "f:type": {},
                            },
                            'k:{"type":"Ready"}': {
                                ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                "f:status": {}, "f:type": {},
                            },
                        },
                        "f:containerStatuses": {},
                        "f:hostIP": {},
                        "f:phase": {},
                        "f:podIP": {},
                        "f:podIPs": {},
                        "f:startTime": {},
                    }
                },
                "manager": "kwok",
                "operation": "Update",
                "subresource": "status",
                "time": "@@START@@",
            }
        )
    return fields


ESCAPED_ARGS = ["sh", "-c", "test -f /ready && exec server --port=8080 > /dev/termination-log"]
DASHBOARD = "https://grafana.example.com/d/pods?var-ns=@@NS@@&var-pod=@@NAME@@&from=now-1h"


def _pod(phase, bound, owner_kind, escaped=False):
    """One pod as a dict whose variable parts are @@HOLES@@."""
    metadata = {
        "annotations": {
            "kubectl.kubernetes.io/restartedAt": "@@CREATED@@",
            "prometheus.io/port": "8080",
            "prometheus.io/scrape": "true",
        },
        "creationTimestamp": "@@CREATED@@",
        "generateName": "@@OWNER_NAME@@-",
        "labels": {
            "app": "@@APP@@",
            "pod-template-hash": "@@HASH@@",
            "team": "@@NS@@",
            "tier": "backend",
        },
        "managedFields": _managed_fields(bound),
        "name": "@@NAME@@",
        "namespace": "@@NS@@",
        "resourceVersion": "@@RV@@",
        "uid": "@@UID@@",
    }
    owner = _owner(owner_kind, phase)
    if owner:
        metadata["ownerReferences"] = [
            {
                "apiVersion": owner[0],
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": owner[1],
                "name": "@@OWNER_NAME@@",
                "uid": "@@OWNER_UID@@",
            }
        ]
    spec = {
        "containers": [
            {
                "args": ["--port=8080", "--log-format=json"],
                "env": [
                    {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_NAMESPACE", "value": "@@NS@@"},
                ],
                "image": "registry.example.com/@@APP@@:v1.27.3",
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "500m", "memory": "512Mi"},
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [
                    {
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "name": "kube-api-access-@@HASH@@",
                        "readOnly": True,
                    }
                ],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never" if owner_kind in ("Job", "PyTorchJob") else "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "kwok.x-k8s.io/node", "operator": "Exists"},
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            {
                "name": "kube-api-access-@@HASH@@",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt"}},
                    ],
                },
            }
        ],
    }
    if bound:
        spec["nodeName"] = "@@NODE@@"
    status = {"phase": phase, "qosClass": "Burstable"}
    if bound:
        status["conditions"] = [
            {
                "lastProbeTime": None,
                "lastTransitionTime": "@@START@@",
                "status": "True",
                "type": condition,
            }
            for condition in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ]
        status["containerStatuses"] = [_container_status(phase)]
        status["hostIP"] = "@@HOST_IP@@"
        status["podIP"] = "@@POD_IP@@"
        status["podIPs"] = [{"ip": "@@POD_IP@@"}]
        status["startTime"] = "@@START@@"
    else:
        status["conditions"] = [
            {
                "lastProbeTime": None,
                "lastTransitionTime": "@@CREATED@@",
                "message": "@@SCHED_MSG@@",
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }
        ]
    if phase == "Failed" and not bound:
        raise ValueError("failed pods ran on a node")
    if escaped:
        metadata["annotations"]["example.com/dashboard"] = DASHBOARD
        spec["containers"][0]["args"] = ESCAPED_ARGS
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def go_escaped(text):
    """JSON text as Go's encoding/json writes it: & < > as \\u escapes."""
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


class Template:
    """A pod rendered once in kubectl's layout (items at depth 2), split at its holes."""

    def __init__(self, pod, compact=False):
        if compact:
            text = json.dumps(pod, separators=(",", ":"), ensure_ascii=False)
        else:
            text = json.dumps(pod, indent=4, ensure_ascii=False)
            text = "\n".join("        " + line for line in text.split("\n"))
        parts = HOLE.split(go_escaped(text))
        self.literals = parts[0::2]
        self.holes = parts[1::2]

    def render(self, values):
        out = [self.literals[0]]
        for hole, literal in zip(self.holes, self.literals[1:]):
            out.append(values[hole])
            out.append(literal)
        return "".join(out)


SCHED_MSG = "0/{n} nodes are available: {k} Insufficient nvidia.com/gpu. preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."
FAILURES = [
    ("OOMKilled", "container main exceeded its memory limit of 512Mi"),
    ("Error", "panic: connection refused: dial tcp 10.96.0.1:443"),
    ("Error", "exit status 1: \"step 3/7\" failed\twith code 1"),
]


def _pick_namespace(rng, cumulative, total_weight):
    r = rng.random() * total_weight
    for name, upper in cumulative:
        if r < upper:
            return name
    return cumulative[-1][0]


def _pick_kind(rng, phase, bound):
    """The owner kind; Succeeded pods are always Job-owned (plain or from a CronJob)."""
    r = rng.random()
    if phase == "Succeeded":
        return "Job"
    if phase == "Pending" and not bound:
        # Job-owned pods may wait; PyTorchJob/ReplicaSet ones are unscheduled.
        return "Job" if r < 0.25 else "PyTorchJob" if r < 0.55 else "ReplicaSet" if r < 0.9 else None
    if phase == "Failed":
        return "Job" if r < 0.4 else "PyTorchJob" if r < 0.7 else "ReplicaSet"
    return (
        "ReplicaSet" if r < 0.55 else "StatefulSet" if r < 0.70 else "DaemonSet"
        if r < 0.80 else "PyTorchJob" if r < 0.92 else "Job" if r < 0.97 else None
    )


def _stamp(second):
    minute, sec = divmod(second, 60)
    hour, minute = divmod(minute, 60)
    return f"2026-05-28T{10 + hour % 14:02d}:{minute:02d}:{sec:02d}Z"


ESCAPES = {"none": 0, "some": 3, "every": 10}  # pods in 10 with kubectl's escapes


def generate(pods, pods_path, events_path, seed=SEED, escapes="none", compact=False):
    """Write a pods List and a FailedScheduling events List; return the tally."""
    escaped_in_ten = ESCAPES[escapes]
    rng = random.Random(seed * 1_000_003 + pods)
    total_weight = sum(w for _, w in NAMESPACES)
    cumulative, acc = [], 0
    for name, weight in NAMESPACES:
        acc += weight
        cumulative.append((name, acc))
    templates = {}
    tally = {}
    events = []
    with open(pods_path + ".tmp", "w", encoding="utf-8") as out:
        out.write('{"apiVersion":"v1","items":[' if compact else '{\n    "apiVersion": "v1",\n    "items": [\n')
        for i in range(pods):
            r = rng.random()
            phase = "Running" if r < 0.80 else "Pending" if r < 0.87 else "Succeeded" if r < 0.95 else "Failed"
            bound = not (phase == "Pending" and rng.random() < 0.5)
            kind = _pick_kind(rng, phase, bound)
            escaped = i % 10 < escaped_in_ten
            key = (phase, bound, kind, escaped)
            if key not in templates:
                templates[key] = Template(_pod(phase, bound, kind, escaped), compact)
            ns = _pick_namespace(rng, cumulative, total_weight)
            app = f"svc-{i % 97:02d}"
            owner = ("nightly-report-2958" + str(i % 7)) if kind == "Job" and i % 3 == 0 else f"{app}-{i // 50:05x}"
            uid = f"{seed % 0xFFFFFFFF:08x}-{i >> 16:04x}-4{i & 0xFFF:03x}-8{(i >> 12) & 0xFFF:03x}-{i:012x}"
            node = rng.randrange(NODES)
            created = rng.randrange(36000)
            failure = FAILURES[i % len(FAILURES)]
            values = {
                "NS": ns,
                "NAME": f"{owner}-{i:06d}",
                "UID": uid,
                "APP": app,
                "HASH": f"{(i * 2654435761) & 0xFFFFFFFF:08x}"[:8],
                "OWNER_NAME": owner,
                "OWNER_UID": f"0000{uid[4:]}",
                "NODE": f"kwok-node-{node}",
                "HOST_IP": f"10.0.{node // 250}.{node % 250 + 1}",
                "POD_IP": f"10.{96 + i // 65025}.{(i // 255) % 255}.{i % 255 + 1}",
                "CREATED": _stamp(created),
                "START": _stamp(created + 2),
                "FINISH": _stamp(created + 60),
                "CID": f"{(i * 0x9E3779B97F4A7C15) & (2**64 - 1):016x}" * 4,
                "RV": str(100000 + i),
                "FAILREASON": failure[0],
                "FAILMSG": json.dumps(failure[1])[1:-1],
                "SCHED_MSG": SCHED_MSG.format(n=NODES, k=NODES),
            }
            if i:
                out.write("," if compact else ",\n")
            out.write(templates[key].render(values))
            unscheduled = phase == "Pending" and not bound and kind != "Job"
            counts = tally.setdefault(ns, {"total": 0, "Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0, "unscheduled": 0})
            counts["total"] += 1
            counts[phase] += 1
            counts["unscheduled"] += unscheduled
            if phase == "Pending" and not bound and rng.random() < 0.8:
                events.append(_event(len(events), ns, values["NAME"], uid, created, values["SCHED_MSG"]))
            elif phase == "Running" and rng.random() < 0.01:
                # A stale event of a pod that got bound since: must never match.
                events.append(_event(len(events), ns, values["NAME"], uid, created, values["SCHED_MSG"]))
        if compact:
            out.write('],"kind":"List","metadata":{"resourceVersion":""}}\n')
        else:
            out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    os.replace(pods_path + ".tmp", pods_path)
    with open(events_path + ".tmp", "w", encoding="utf-8") as out:
        json.dump({"apiVersion": "v1", "items": events, "kind": "List", "metadata": {"resourceVersion": ""}}, out, indent=4)
        out.write("\n")
    os.replace(events_path + ".tmp", events_path)
    return tally


def _event(n, ns, pod, uid, created, message):
    stamp = _stamp(created + 5 + n % 50)
    return {
        "apiVersion": "v1",
        "count": 1 + n % 9,
        "firstTimestamp": _stamp(created + 1),
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod,
            "namespace": ns,
            "resourceVersion": str(100000 + n),
            "uid": uid,
        },
        "kind": "Event",
        "lastTimestamp": stamp,
        "message": message,
        "metadata": {
            "creationTimestamp": stamp,
            "name": f"{pod}.{n:016x}",
            "namespace": ns,
            "resourceVersion": str(200000 + n),
            "uid": f"e0000000-0000-4000-8000-{n:012x}",
        },
        "reason": "FailedScheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "",
        "source": {"component": "default-scheduler"},
        "type": "Warning",
    }


if __name__ == "__main__":
    import sys
    import time

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    t = time.perf_counter()
    tally = generate(n, f"/tmp/gen-{n}.json", f"/tmp/gen-{n}-events.json")
    size = os.path.getsize(f"/tmp/gen-{n}.json")
    print(f"{n} pods, {size} bytes, {size / n:.0f} B/pod, {time.perf_counter() - t:.2f}s")
