#!/usr/bin/env python3
"""How fast a watch delivers a big transition: N pods (10k by default) bind
at once, and kubectl, watching through the replay server, prints their N
MODIFIED events. Prints when the first and the last arrived after the
transition. (It was an ignored test of tests/tests/watch_server.rs: a
measurement, not a check.)

  python3 bench/watch_events.py [--pods 10000] [--period-ms 2000]

Needs target/release/replay-server (cargo build --release --workspace) and
kubectl on PATH. Python 3 standard library only.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

from common import SERVER, fail


def pod(name, bound):
    """A pod as the tests' fixtures write it: running on node-1, or unschedulable."""
    condition = {"type": "PodScheduled", "status": "True" if bound else "False",
                 "lastTransitionTime": "2025-01-01T11:00:05Z"}
    if not bound:
        condition.update(reason="Unschedulable", message="0/4 nodes are available: 4 Insufficient cpu.")
    spec = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}
    if bound:
        spec["nodeName"] = "node-1"
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "4242",
                         "creationTimestamp": "2025-01-01T11:00:00Z"},
            "spec": spec,
            "status": {"phase": "Running" if bound else "Pending", "conditions": [condition]}}


def write_list(path, pods):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": pods}, f)


def measure(pods, period_ms):
    with tempfile.TemporaryDirectory(prefix="verify-pods-bench-watch-") as work:
        names = [f"p{i:05}" for i in range(pods)]
        states = []
        for bound in (False, True):
            path = os.path.join(work, f"pods-{'bound' if bound else 'pending'}.json")
            write_list(path, [pod(n, bound) for n in names])
            states += ["--state", path]
        kubeconfig, log = os.path.join(work, "kubeconfig"), os.path.join(work, "requests.jsonl")
        argv = [SERVER, *states, "--every", str(period_ms), "--kubeconfig", kubeconfig, "--request-log", log]
        server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            if not server.stdout.readline().strip():
                fail(f"replay-server did not start: {' '.join(argv)}")
            with open(log, encoding="utf-8") as f:
                started = json.loads(f.readline())["started_unix"]
            transition = started + period_ms / 1000
            timeout = int(period_ms / 1000) + 4
            path = f"/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds={timeout}"
            env = dict(os.environ, KUBECONFIG=kubeconfig, HOME=work, KUBECACHEDIR=os.path.join(work, "cache"))
            watch = subprocess.Popen(["kubectl", "get", "--raw", path], env=env, stdout=subprocess.PIPE)
            arrived = []
            for line in watch.stdout:
                if line.strip():
                    arrived.append((time.time(), json.loads(line)["type"]))
            watch.wait()
        finally:
            server.kill()
            server.wait()
    modified = [at for at, kind in arrived if kind == "MODIFIED"]
    if len(modified) != pods:
        fail(f"{len(modified)} MODIFIED events of {len(arrived)}, expected {pods}")
    return modified[0] - transition, modified[-1] - transition


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--period-ms", type=int, default=2000, help="when the pods bind, after the server starts")
    args = parser.parse_args()
    if not os.access(SERVER, os.X_OK):
        fail(f"{SERVER} is missing: cargo build --release --workspace")
    first, last = measure(args.pods, args.period_ms)
    print(f"{args.pods} MODIFIED: first {first:.3f} s, last {last:.3f} s after the transition")


if __name__ == "__main__":
    main()
