"""Issue 30's cost: live at 10k pods with 2,000 workloads, both drivers with
the workloads read (the default) against the same without them
(KWOK_VERIFY_PODS_WORKLOADS=false), and against an older build without the
check at all (`--main-checker BINARY --main-wrapper SCRIPT`: main before
issue 30, which the target is about, built with `cargo build --release`
as `make bench` builds this one). A step of `make bench`, without the older
build:

    python3 bench/workloads.py [--reps N] [--pods N] [--main-checker B --main-wrapper S]

The synthetic pods each have an owner of their own (gen.py); here the
pods of ReplicaSets, StatefulSets and DaemonSets are regrouped under 600
Deployments with a ReplicaSet each, 400 StatefulSets and 400 DaemonSets,
each wanting the active pods it owns, as in a settled cluster (Jobs' pods
keep theirs). The replay server serves them from a case folder
(pods.json, events.json, workloads.json); the drivers run at their default
chunk size, on two states (STATES): a red lane at a deadline of 0 (one
attempt, then the events) and a green lane, every pod scheduled, at the
default deadline (its first attempt passes). It prints the medians of the
wall time (the target) and of the CPU time the driver and its children took
(kubectl, jq), which a shared machine's load moves less.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
from common import CHECKER, ROOT, SERVER  # noqa: E402

WRAPPER = os.path.join(ROOT, "generated", "verify-pods.sh")


# The workloads the pods' controllers would be: pods owned by a ReplicaSet,
# a StatefulSet or a DaemonSet are regrouped, namespace by namespace, under
# this many of each kind (a ReplicaSet each under its own Deployment). Jobs'
# pods keep their own owners, one each, as gen.py makes them.
WORKLOADS = {"ReplicaSet": 600, "StatefulSet": 400, "DaemonSet": 400}


def workloads_of(pods_file, out_file):
    """Rewrite the pods' owners to about 2,000 workloads that own them (600
    Deployments with a ReplicaSet each, 400 StatefulSets, 400 DaemonSets,
    rounded namespace by namespace: 1,996 at 10k pods),
    each wanting the active pods it owns (none missing: a settled lane, the
    state every passing check reads); write those workloads. Return how
    many."""
    with open(pods_file, encoding="utf-8") as f:
        pods = json.load(f)
    by_kind = {}
    for pod in pods["items"]:
        refs = pod["metadata"].get("ownerReferences") or []
        if refs and refs[0]["kind"] in WORKLOADS:
            by_kind.setdefault(refs[0]["kind"], {}).setdefault(pod["metadata"]["namespace"], []).append(pod)
    items = []
    for kind, target in WORKLOADS.items():
        namespaces = by_kind.get(kind, {})
        total = sum(len(p) for p in namespaces.values())
        for ns, members in sorted(namespaces.items()):
            count = max(1, round(len(members) * target / total))
            for i in range(count):
                owned = members[i::count]
                name, uid = f"{kind.lower()}-{ns}-{i}", f"{kind.lower()}-{ns}-{i}-uid"
                for pod in owned:
                    pod["metadata"]["ownerReferences"] = [
                        {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": True}]
                active = [p for p in owned if p["status"].get("phase") not in ("Succeeded", "Failed")
                          and p["metadata"].get("deletionTimestamp") is None]
                items += workload(kind, ns, name, uid, len(active))
    with open(pods_file, "w", encoding="utf-8") as f:
        json.dump(pods, f, indent=4)
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, f)
    return len(items)


def workload(kind, ns, name, uid, pods):
    """The workload objects (a ReplicaSet with its Deployment) wanting `pods` pods."""
    def meta(name, uid, owner=None):
        m = {"name": name, "namespace": ns, "uid": uid, "generation": 1}
        if owner:
            m["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": owner[0],
                                     "uid": owner[1], "controller": True}]
        return m
    status = {"observedGeneration": 1}
    if kind == "DaemonSet":
        return [{"apiVersion": "apps/v1", "kind": kind, "metadata": meta(name, uid), "spec": {},
                 "status": dict(status, desiredNumberScheduled=pods)}]
    if kind == "StatefulSet":
        return [{"apiVersion": "apps/v1", "kind": kind, "metadata": meta(name, uid), "spec": {"replicas": pods},
                 "status": status}]
    deployment = (name + "-d", uid + "-d")
    return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(*deployment), "spec": {"replicas": pods},
             "status": status},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(name, uid, deployment),
             "spec": {"replicas": pods}, "status": status}]


def timed(command, env):
    """Run `command`; its wall time and the CPU time (user + system) it and
    its children took, in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def passing(pods_file):
    """Keep only the pods that are Running or Succeeded: the state of a
    green lane, where every pod is scheduled and none failed."""
    with open(pods_file, encoding="utf-8") as f:
        pods = json.load(f)
    pods["items"] = [p for p in pods["items"] if p["status"].get("phase") in ("Running", "Succeeded")]
    with open(pods_file, "w", encoding="utf-8") as f:
        json.dump(pods, f)


# The two states measured: a red lane (unscheduled and failed pods) with a
# deadline of 0, one attempt that reads the workloads at the deadline and
# then the events; and a green lane (every pod scheduled, none failed) with
# the default deadline, whose first attempt passes once its workloads are
# read: the common CI run, which reads no events.
STATES = (("red", "0", None), ("green", "60", passing))


def measure(work, deadline, args):
    """Start the replay server on the case folder `work`; run every driver
    in turn, `args.reps` times; return {(driver, workloads): [(wall, cpu)]}."""
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
                env = dict(os.environ, KUBECONFIG=kubeconfig, KWOK_VERIFY_PODS_DEADLINE=deadline,
                           KWOK_VERIFY_PODS_WORKLOADS=workloads)
                command = baseline[driver] if workloads == "main" else drivers[driver]
                runs.append(timed(command, env))
    finally:
        server.kill()
    return times


def report(state, deadline, times):
    """Print the medians of one state's runs, driver by driver."""
    print(f"  {state} (deadline {deadline}):")
    for driver in ("checker", "bash"):
        for what, index in (("wall", 0), ("CPU", 1)):
            median = {w: statistics.median(run[index] for run in runs)
                      for (d, w), runs in times.items() if d == driver}
            off, on = median["false"], median["true"]
            line = f"    {driver} {what}: workloads off {off:.2f} s, on {on:.2f} s: {100 * (on / off - 1):+.0f} %"
            if "main" in median:
                line += f"; main {median['main']:.2f} s: on {100 * (on / median['main'] - 1):+.0f} %"
            print(line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--main-checker", help="an older verify-pods binary: the baseline")
    parser.add_argument("--main-wrapper", help="an older generated/verify-pods.sh: the baseline")
    args = parser.parse_args()
    results = []
    for state, deadline, shape in STATES:
        with tempfile.TemporaryDirectory() as work:
            pods_file = os.path.join(work, "pods.json")
            gen.generate(args.pods, pods_file, os.path.join(work, "events.json"))
            if shape:
                shape(pods_file)
            count = workloads_of(pods_file, os.path.join(work, "workloads.json"))
            with open(pods_file, encoding="utf-8") as f:
                pods = len(json.load(f)["items"])
            results.append((state, deadline, pods, count, measure(work, deadline, args)))
    with open("/proc/loadavg", encoding="utf-8") as f:
        load = f.read().split()[0]
    print(f"{args.reps} repetitions, load average {load}")
    # Wall time is what the target is about; CPU time (the driver and
    # every kubectl and jq it started) moves less with the machine's load.
    for state, deadline, pods, count, times in results:
        print(f"{pods} pods, {count} workloads")
        report(state, deadline, times)


if __name__ == "__main__":
    main()
