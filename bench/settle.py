#!/usr/bin/env python3
"""Issue 15's benchmarks: settling through a watch against polling, live.

The checker runs against target/release/replay-server (the tests' API
server) through the real kubectl, as in the live section (bench/live.py),
on a timeline of two states made from bench/gen.py's snapshot:

  waiting   the snapshot with its Failed pods made Running: unscheduled pods
            and nothing else wrong, so decision.jq says "wait";
  bound     the same pods, every Pending pod without a node bound to one
            and Running: the verdict passes.

Latency (10k pods): the server moves from `waiting` to `bound` by its
clock (`--every MILLIS`) at an instant it knows: the wall clock it started
at (the first line of its `--request-log`) plus MILLIS. The latency is
from that instant to the checker's exit, watching (the default) and
polling (`--watch=false`, `--interval 5`). MILLIS is drawn uniformly over
one interval, 3 to 8 s, so polling meets the bind at every phase of its
interval (the same draws for both modes; runs alternate the modes so that
load on the shared machine hits both alike). A watch run counts only if
the checker made one pods list and watched from before the bind.

Load (50k pods): a 60 s settle, i.e. the checker's default `--deadline 60`
(the CLI calls it the settle deadline) on the `waiting` state, whose pods
never bind, so the settle lasts the whole minute and ends with the failing
verdict. That is the case the issue's cost is about ("both drivers list
again every interval until the deadline"); a settle that ends early costs
a fraction of it, plus the events of the pods that change. From the
server's request log: every request and the bytes of the body it was sent
(a watch: its event lines), watching against polling. Target: one list
(and its events) plus the watch.

Churn (issue 21, 500 pods): the same bind, but from then on another pod
comes and goes every CHURN_MS (50 ms) until past the deadline, so the
stream never goes quiet; the server's clock moves a state every CHURN_MS
(the waiting state repeated until the bind, drawn 1 to 2 s in). Watching
only: the latency from the bind to the checker's exit. Target: 0.5 s.

Every run's output is checked: the checker's counts must equal the offline
checker's (`--snapshot`) on the state it ended in.

`python3 bench/settle.py [--latency-sizes 10000] [--load-sizes 50000] [--churn-sizes 500] [--reps 5] [--no-write]`
writes its tables between the settle markers of BENCHMARKS.md. `make bench`
runs it after bench/run.py. Python 3 standard library only.
"""

import argparse
import hashlib
import inspect
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import live
import run as bench

SERVER = os.path.join(bench.ROOT, "target", "release", "replay-server")
SETTLE_BEGIN, SETTLE_END = "<!-- bench-settle:begin -->", "<!-- bench-settle:end -->"
INTERVAL = 5
DEADLINE = 60
LATENCY_TARGET = 0.5
CHURN_MS, CHURN_FOR_MS = 50, 10000
BIND_FROM_MS, BIND_SPAN_MS = 3000, INTERVAL * 1000
ITEM_INDENT = " " * 8  # gen.py writes each pod at depth 2 of kubectl's 4-space layout


# ------------------------------------------------------------------ the states

def _waiting(pod):
    """The pod of the `waiting` state: a Failed pod is Running (a failed pod stops the settle)."""
    if pod["status"].get("phase") == "Failed":
        pod["status"]["phase"] = "Running"
    return pod


def _bound(pod):
    """The pod of the `bound` state: a Pending pod without a node is bound and Running."""
    pod = _waiting(pod)
    if pod["status"].get("phase") == "Pending" and not pod["spec"].get("nodeName"):
        pod["spec"]["nodeName"] = "kwok-node-0"
        pod["status"]["phase"] = "Running"
    return pod


TRANSFORMS = {"waiting": _waiting, "bound": _bound}


def _pods_of(pods_file):
    """The text of each pod of gen.py's indented List, one at a time (a 50k file is 600 MB)."""
    lines = []
    with open(pods_file, encoding="utf-8") as f:
        for line in f:
            if line.rstrip("\n") == ITEM_INDENT + "{":
                lines = [line]
            elif lines:
                lines.append(line)
                if line.rstrip("\n").rstrip(",") == ITEM_INDENT + "}":
                    yield "".join(lines).rstrip().rstrip(",")
                    lines = []


def _transform_version():
    source = "".join(inspect.getsource(f) for f in (_waiting, _bound, _pods_of, _write_states))
    return hashlib.sha256(source.encode()).hexdigest()[:8]


def _write_states(pods_file, paths):
    outs = {name: open(path + ".tmp", "w", encoding="utf-8") for name, path in paths.items()}
    try:
        for out in outs.values():
            out.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        for i, pod in enumerate(_pods_of(pods_file)):
            for name, out in outs.items():
                text = json.dumps(TRANSFORMS[name](json.loads(pod)), separators=(",", ":"))
                out.write(("," if i else "") + text)
        for out in outs.values():
            out.write("]}\n")
    finally:
        for out in outs.values():
            out.close()
    for path in paths.values():
        os.replace(path + ".tmp", path)


def states(size, cache):
    """{name: pods file} of the timeline, and the events file, made once per gen.py and transform version."""
    pods_file, events_file, _ = bench.snapshot(size, cache)
    stem = os.path.join(cache, f"settle-{size}-{bench.generator_version()}-{_transform_version()}")
    paths = {name: f"{stem}-{name}.json" for name in TRANSFORMS}
    if not all(os.path.exists(p) for p in paths.values()):
        started = time.perf_counter()
        _write_states(pods_file, paths)
        print(f"  wrote the settle states of {size} pods in {time.perf_counter() - started:.1f}s", flush=True)
    return paths, events_file


def offline_counts(pods_file, events_file):
    """What the offline checker counts in one state: the counts a live run must end with."""
    out = subprocess.run([bench.CHECKER, "check", "--snapshot", pods_file, "--events", events_file,
                          "--format", "json"], capture_output=True)
    return bench.counts_of(json.loads(out.stdout), "checker offline")


# ------------------------------------------------------------------ the server

class Replay:
    """A replay-server on a timeline, with its request log."""

    def __init__(self, work, state_files, events_file, every_ms=None):
        self.kubeconfig = os.path.join(work, "kubeconfig")
        self.log = os.path.join(work, "requests.jsonl")
        argv = [SERVER, "--now", "2025-01-01T12:00:00Z", "--kubeconfig", self.kubeconfig, "--request-log", self.log]
        for pods_file in state_files:
            argv += ["--state", f"{pods_file},{events_file}"]
        if every_ms is not None:
            argv += ["--every", str(every_ms)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if not self.proc.stdout.readline().strip():
            bench.fail(f"replay-server did not start: {shlex.join(argv)}")
        with open(self.log, encoding="utf-8") as f:
            self.started = json.loads(f.readline())["started_unix"]

    def requests(self):
        """Every request so far: a seq's last line (a running watch is written again as it sends)."""
        time.sleep(0.3)  # the server writes its log every 100 ms
        last = {}
        with open(self.log, encoding="utf-8") as f:
            for line in f.readlines()[1:]:
                entry = json.loads(line)
                last[entry["seq"]] = entry
        return [last[seq] for seq in sorted(last)]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def run_checker(server, watch, env):
    """(exit code, result object, wall clock at exit)."""
    argv = [bench.CHECKER, "check", "--kubeconfig", server.kubeconfig, "--format", "json",
            f"--watch={'true' if watch else 'false'}", "--deadline", str(DEADLINE), "--interval", str(INTERVAL)]
    proc = subprocess.run(argv, env=env, capture_output=True)
    exited = time.time()
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        bench.fail(f"{shlex.join(argv)}: exit {proc.returncode}, no JSON: {proc.stderr.decode(errors='replace')[-500:]}")
    return proc.returncode, result, exited


def is_watch(entry):
    return "watch=1" in entry["query"].split("&")


def tally(requests):
    """Requests and bytes by kind: pods lists (first pages) and pages, events pages, watches, the rest."""
    kinds = {"pods lists": 0, "pods pages": 0, "events pages": 0, "watches": 0, "other": 0}
    sent = dict.fromkeys(kinds, 0)
    for entry in requests:
        if is_watch(entry):
            kind = "watches"
        elif entry["list"] == "pods":
            kind = "pods pages"
            if entry["page"] == 1 and entry["status"] == 200:
                kinds["pods lists"] += 1
        elif entry["list"] == "events":
            kind = "events pages"
        else:
            kind = "other"
        kinds[kind] += 1
        sent[kind] += entry["bytes"]
    kinds["all"] = len(requests)
    sent["all"] = sum(e["bytes"] for e in requests)
    return kinds, sent


# ------------------------------------------------------------------ latency

def latency(size, cache, work, reps, seed):
    paths, events_file = states(size, cache)
    expected = offline_counts(paths["bound"], events_file)
    draws = random.Random(seed)
    bind_ms = [BIND_FROM_MS + draws.randrange(BIND_SPAN_MS) for _ in range(reps)]
    runs = {"watch": [], "poll": []}
    env = live.driver_env(work)
    for rep, bind in enumerate(bind_ms):
        for mode in ("watch", "poll") if rep % 2 == 0 else ("poll", "watch"):
            server = Replay(work, [paths["waiting"], paths["bound"]], events_file, every_ms=bind)
            try:
                code, result, exited = run_checker(server, mode == "watch", env)
                requests = server.requests()
            finally:
                server.stop()
            seconds = exited - (server.started + bind / 1000)
            kinds, _ = tally(requests)
            counts = bench.counts_of(result, f"checker ({mode})")
            if code != 0 or counts != expected:
                bench.fail(f"latency {size} {mode}: exit {code}, counts {counts}, expected {expected}")
            if mode == "watch":
                watches = [e for e in requests if is_watch(e)]
                if kinds["pods lists"] != 1 or not watches or watches[0]["at"] >= bind / 1000:
                    bench.fail(f"latency {size} watch: the bind at {bind} ms came before the watch ({kinds}); "
                               "the machine is too slow for the draw: raise BIND_FROM_MS")
            runs[mode].append((seconds, bind, kinds["pods lists"]))
            print(f"  latency {size} {mode:<5} run {rep + 1}: bind at {bind / 1000:.2f} s, verdict "
                  f"{seconds:6.3f} s later ({kinds['pods lists']} pods list(s), {kinds['watches']} watch(es))",
                  flush=True)
    return size, runs


# ------------------------------------------------------------------ churn

def churn_state(bound_file, work):
    """The `bound` state plus one more running pod (`zz-churn`): the state the churn alternates with."""
    with open(bound_file, encoding="utf-8") as f:
        listed = json.load(f)
    extra = json.loads(json.dumps(listed["items"][0]))
    extra["metadata"].update(name="zz-churn", namespace="zz-churn", uid="churn-0000")
    extra["spec"]["nodeName"] = "kwok-node-0"
    extra["status"]["phase"] = "Running"
    listed["items"].append(extra)
    path = os.path.join(work, "churn.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(listed, f, separators=(",", ":"))
    return path


def churn(size, cache, work, reps, seed):
    """Watch latency when another pod changes every CHURN_MS from the bind on."""
    paths, events_file = states(size, cache)
    churned = churn_state(paths["bound"], work)
    draws = random.Random(seed)
    env = live.driver_env(work)
    runs = []
    for rep in range(reps):
        waiting = (1000 + draws.randrange(1000)) // CHURN_MS
        timeline = [paths["waiting"]] * waiting
        timeline += [paths["bound"] if i % 2 == 0 else churned for i in range(CHURN_FOR_MS // CHURN_MS)]
        server = Replay(work, timeline, events_file, every_ms=CHURN_MS)
        try:
            code, result, exited = run_checker(server, True, env)
        finally:
            server.stop()
        bind = waiting * CHURN_MS
        seconds = exited - (server.started + bind / 1000)
        if code != 0:
            bench.fail(f"churn {size}: exit {code}: {result.get('status')}")
        runs.append(seconds)
        print(f"  churn {size} run {rep + 1}: bind at {bind / 1000:.2f} s, verdict {seconds:6.3f} s later", flush=True)
    return size, runs


# ------------------------------------------------------------------ load

def load_run(size, cache, work, reps):
    paths, events_file = states(size, cache)
    expected = offline_counts(paths["waiting"], events_file)
    results = {}
    env = live.driver_env(work)
    for rep in range(reps):
        for mode in ("watch", "poll"):
            server = Replay(work, [paths["waiting"]], events_file)
            try:
                began = time.time()
                code, result, exited = run_checker(server, mode == "watch", env)
                requests = server.requests()
            finally:
                server.stop()
            counts = bench.counts_of(result, f"checker ({mode})")
            if code != 1 or counts != expected:
                bench.fail(f"load {size} {mode}: exit {code} (the deadline fails it: 1), counts {counts}, "
                           f"expected {expected}")
            kinds, sent = tally(requests)
            results.setdefault(mode, []).append((exited - began, kinds, sent))
            print(f"  load {size} {mode:<5} run {rep + 1}: {exited - began:5.1f} s, {kinds['all']} requests "
                  f"({kinds['pods lists']} pods lists, {kinds['watches']} watches), "
                  f"{bench.mb(sent['all']):,.1f} MB sent", flush=True)
    return size, os.path.getsize(paths["waiting"]), results


# ------------------------------------------------------------------ report

def summary_cells(seconds):
    """The table cells of a row's runs: mean, median, min, max, then each run."""
    stats = (statistics.mean(seconds), statistics.median(seconds), min(seconds), max(seconds))
    each = ", ".join(f"{s:.2f}" for s in seconds)
    return " | ".join(f"{value:.3f} s" for value in stats) + f" | {each}"


def markdown(latencies, loads, info, command, machine_load, churns=()):
    lines = [
        SETTLE_BEGIN,
        "",
        f"Measured {info['date']} with `{command}`: the checker live through target/release/replay-server and the "
        f"real kubectl, `--deadline {DEADLINE} --interval {INTERVAL}`, watching (the default) or polling "
        f"(`--watch=false`). Load average (1 min) before/after: {machine_load[0]:.1f} / {machine_load[1]:.1f}.",
        "",
    ]
    if latencies:
        lines += [
            "Latency: from the server-side instant the last pods bind (timeline state 1 by the server's clock, "
            f"drawn uniformly {BIND_FROM_MS / 1000:.0f}-{(BIND_FROM_MS + BIND_SPAN_MS) / 1000:.0f} s after the "
            "server started) to the checker's exit with the passing verdict.",
            "",
            "| pods | mode | runs | mean | median | min | max | each run (s) |",
            "|---:|---|---:|---:|---:|---:|---:|---|",
        ]
        for size, runs in latencies:
            for mode, label in (("watch", "watch"), ("poll", f"poll ({INTERVAL} s)")):
                seconds = [r[0] for r in runs[mode]]
                lines.append(f"| {size:,} | {label} | {len(seconds)} | {summary_cells(seconds)} |")
        lines.append("")
    if churns:
        lines += [
            f"Churn: the same bind, then another pod comes and goes every {CHURN_MS} ms (the stream never goes "
            "quiet); watching; from the bind to the checker's exit.",
            "",
            "| pods | runs | mean | median | min | max | each run (s) |",
            "|---:|---:|---:|---:|---:|---:|---|",
        ]
        for size, seconds in churns:
            lines.append(f"| {size:,} | {len(seconds)} | {summary_cells(seconds)} |")
        lines.append("")
    if loads:
        lines += [
            f"Load: a {DEADLINE} s settle on pods that never bind (the whole default settle deadline; the verdict "
            "fails at the deadline), from the server's request log: every request and the body bytes it was "
            "sent (list pages as served; a watch, its event lines).",
            "",
            "| pods | mode | wall | requests | pods lists (pages) | events pages | watches | other | "
            "pods lists MB | events MB | watch bytes | other bytes | all MB |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for size, _, results in loads:
            for mode in ("watch", "poll"):
                for wall, kinds, sent in results[mode]:
                    lines.append(
                        f"| {size:,} | {mode} | {wall:.1f} s | {kinds['all']} | {kinds['pods lists']} "
                        f"({kinds['pods pages']}) | {kinds['events pages']} | {kinds['watches']} | {kinds['other']} | "
                        f"{bench.mb(sent['pods pages']):,.1f} | {bench.mb(sent['events pages']):,.1f} | "
                        f"{sent['watches']:,} | {sent['other']:,} | {bench.mb(sent['all']):,.1f} |")
        lines.append("")
    lines += ["| target | measured | wanted | |", "|---|---|---|---|"]
    for size, runs in latencies:
        mean = statistics.mean(r[0] for r in runs["watch"])
        worst = max(r[0] for r in runs["watch"])
        lines.append(bench.ratio_line(f"{size:,}: latency, watch (mean; max {worst:.3f} s)", f"{mean:.3f} s",
                                      f"<= {LATENCY_TARGET} s", mean <= LATENCY_TARGET))
        poll = statistics.mean(r[0] for r in runs["poll"])
        lines.append(f"| {size:,}: latency, polling (mean) | {poll:.3f} s | about half an interval "
                     f"({INTERVAL / 2:.1f} s) | |")
    for size, seconds in churns:
        worst = max(seconds)
        lines.append(bench.ratio_line(f"{size:,}: latency under churn (max)", f"{worst:.3f} s",
                                      f"<= {LATENCY_TARGET} s", worst <= LATENCY_TARGET))
    for size, _, results in loads:
        for wall, kinds, sent in results["watch"]:
            met = kinds["pods lists"] == 1 and kinds["watches"] == 1
            lines.append(bench.ratio_line(f"{size:,}: {DEADLINE} s settle, watch", f"{kinds['pods lists']} list + "
                                          f"{kinds['watches']} watch, {bench.mb(sent['all']):,.1f} MB",
                                          "one list plus the watch", met))
        for wall, kinds, sent in results["poll"]:
            lines.append(f"| {size:,}: {DEADLINE} s settle, polling | {kinds['pods lists']} lists, "
                         f"{bench.mb(sent['all']):,.1f} MB | a list per interval | |")
    lines += ["", SETTLE_END]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sizes = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    parser.add_argument("--latency-sizes", type=sizes, default=[10000], help="pod counts ('' for none; default 10000)")
    parser.add_argument("--load-sizes", type=sizes, default=[50000], help="pod counts ('' for none; default 50000)")
    parser.add_argument("--churn-sizes", type=sizes, default=[500], help="pod counts ('' for none; default 500)")
    parser.add_argument("--reps", type=int, default=5, help="latency runs per mode (default 5)")
    parser.add_argument("--load-reps", type=int, default=1, help="load runs per mode (default 1)")
    parser.add_argument("--seed", type=int, default=15, help="of the bind instants (default 15)")
    parser.add_argument("--no-write", action="store_true", help="print the tables, leave BENCHMARKS.md alone")
    args = parser.parse_args()
    for binary in (bench.CHECKER, SERVER):
        if not os.access(binary, os.X_OK):
            bench.fail(f"{binary} is missing: cargo build --release --workspace (make bench does it)")
    cache = bench.cache_dir()
    info = bench.machine()
    command = "python3 bench/settle.py " + shlex.join(sys.argv[1:])
    machine_load = [bench.load()]
    with tempfile.TemporaryDirectory(prefix="verify-pods-bench-settle-") as work:
        latencies = [latency(size, cache, work, args.reps, args.seed) for size in args.latency_sizes]
        churns = [churn(size, cache, work, args.reps, args.seed) for size in args.churn_sizes]
        loads = [load_run(size, cache, work, args.load_reps) for size in args.load_sizes]
    machine_load.append(bench.load())
    section = markdown(latencies, loads, info, command.strip(), machine_load, churns)
    print()
    print(section)
    if not args.no_write and (latencies or loads or churns):
        bench.write_benchmarks(section, SETTLE_BEGIN, SETTLE_END)
        print(f"\nwritten to {bench.BENCHMARKS}")


if __name__ == "__main__":
    main()
