"""Issue 30's cost: live at 10k pods with 2,000 workloads, both drivers with
the workloads read (the default) against the same without them
(KWOK_VERIFY_PODS_WORKLOADS=false), and against an older build without the
check at all (`--main-checker BINARY --main-wrapper SCRIPT`: main before
issue 30, which the target is about). Not yet a step of `make bench`:

    python3 bench/workloads.py [--reps N] [--pods N] [--main-checker B --main-wrapper S]

The workloads are made from the synthetic pods' own owners: 600
Deployments with a ReplicaSet each, 400 StatefulSets, 400 DaemonSets, each
wanting the pods it owns. The replay server serves them from a case folder
(pods.json, events.json, workloads.json); the drivers run at their default
chunk size, with a deadline of 0 (one attempt: the workloads are read once).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
from common import ROOT  # noqa: E402

CHECKER = os.path.join(ROOT, "target", "testing", "verify-pods")
SERVER = os.path.join(ROOT, "target", "testing", "replay-server")
WRAPPER = os.path.join(ROOT, "generated", "verify-pods.sh")


def workloads_of(pods_file, out_file):
    """2,000 workloads owning the pods' owners."""
    with open(pods_file, encoding="utf-8") as f:
        pods = json.load(f)
    owners = {}
    for pod in pods["items"]:
        for ref in pod["metadata"].get("ownerReferences") or []:
            key = (ref["kind"], pod["metadata"]["namespace"], ref["name"], ref["uid"])
            owners[key] = owners.get(key, 0) + 1
    by_kind = {}
    for key, n in owners.items():
        by_kind.setdefault(key[0], []).append((key, n))

    def meta(ns, name, uid, refs=None):
        m = {"name": name, "namespace": ns, "uid": uid, "generation": 1}
        if refs:
            m["ownerReferences"] = refs
        return m

    items = []
    for (_, ns, name, uid), n in by_kind.get("ReplicaSet", [])[:600]:
        dep = "dep-" + uid
        items.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(ns, name + "-d", dep),
                      "spec": {"replicas": n}, "status": {"observedGeneration": 1}})
        ref = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name + "-d", "uid": dep, "controller": True}]
        items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(ns, name, uid, ref),
                      "spec": {"replicas": n}, "status": {"observedGeneration": 1}})
    for (_, ns, name, uid), n in by_kind.get("StatefulSet", [])[:400]:
        items.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(ns, name, uid),
                      "spec": {"replicas": n}, "status": {"observedGeneration": 1}})
    for (_, ns, name, uid), n in by_kind.get("DaemonSet", [])[:400]:
        items.append({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(ns, name, uid),
                      "spec": {}, "status": {"observedGeneration": 1, "desiredNumberScheduled": n}})
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, f)
    return len(items)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--main-checker", help="an older verify-pods binary: the baseline")
    parser.add_argument("--main-wrapper", help="an older generated/verify-pods.sh: the baseline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        gen.generate(args.pods, os.path.join(work, "pods.json"), os.path.join(work, "events.json"))
        count = workloads_of(os.path.join(work, "pods.json"), os.path.join(work, "workloads.json"))
        kubeconfig = os.path.join(work, "kubeconfig")
        server = subprocess.Popen([SERVER, "--state", work, "--port", "0", "--kubeconfig", kubeconfig],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            server.stdout.readline()
            drivers = {"checker": [CHECKER, "check", "--format", "json"], "bash": ["bash", WRAPPER]}
            baseline = {"checker": args.main_checker and [args.main_checker, "check", "--format", "json"],
                        "bash": args.main_wrapper and ["bash", args.main_wrapper]}
            times = {(d, w): [] for d in drivers for w in ("false", "true")}
            for driver, command in baseline.items():
                if command:
                    times[(driver, "main")] = []
            for _ in range(args.reps):
                for (driver, workloads), runs in times.items():
                    env = dict(os.environ, KUBECONFIG=kubeconfig, KWOK_VERIFY_PODS_DEADLINE="0",
                               KWOK_VERIFY_PODS_WORKLOADS=workloads)
                    started = time.perf_counter()
                    command = baseline[driver] if workloads == "main" else drivers[driver]
                    subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, check=False)
                    runs.append(time.perf_counter() - started)
        finally:
            server.kill()
        with open("/proc/loadavg", encoding="utf-8") as f:
            load = f.read().split()[0]
        print(f"{args.pods} pods, {count} workloads, {args.reps} repetitions, load average {load}")
        for driver in drivers:
            off = statistics.median(times[(driver, "false")])
            on = statistics.median(times[(driver, "true")])
            line = f"  {driver}: workloads off {off:.2f} s, on {on:.2f} s: {100 * (on / off - 1):+.0f} %"
            if (driver, "main") in times:
                main_time = statistics.median(times[(driver, "main")])
                line += f"; main {main_time:.2f} s: on {100 * (on / main_time - 1):+.0f} %"
            print(line)


if __name__ == "__main__":
    main()
