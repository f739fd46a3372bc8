#!/usr/bin/env python3
"""make bench: the checker's instructions against the parse floor.

Counts, with `valgrind --tool=cachegrind --cache-sim=no` (user-space
instructions of every thread; they repeat within 1 % where wall time on a
shared machine swings by a third), on the bench's 50k-pod snapshot and its
events (bench/gen.py, from the cache):

  checker        verify-pods check --snapshot F --events E --format json --workloads false
  reader alone   read-snapshot F      (bench/floor: the pods read and projected, nothing judged)
  parse floor    parse-floor F        (bench/floor: serde_json::from_slice::<IgnoredAny>, the
                                       registry's serde_json validating the file, building nothing)

and prints each count with the command that reproduces it, the checker's
and the reader's ratio to the parse floor (the checker's target: at most
0.9x), and the checker's peak RSS (a run without valgrind; ru_maxrss from
wait4) against the file's size (target: at most 15 %).

Usage: python3 bench/instructions.py [--pods N] [--target-dir DIR]
Needs valgrind and the release build (`cargo build --release --workspace`).
Python 3 standard library only.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from common import ROOT, cache_dir, fail
from snapshots import snapshot

# Where the checker must stand against the parse floor, and its memory.
FLOOR_TARGET = 0.9
RSS_TARGET = 0.15


def cachegrind(argv, work):
    """The instructions `argv` runs (every thread), by cachegrind."""
    out = os.path.join(work, "cachegrind.out")
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}"] + argv
    # Output to a file: the checker takes a descriptor open for reading too
    # (as subprocess.DEVNULL is) for a closed stdout.
    with open(os.path.join(work, "stdout"), "wb") as stdout:
        done = subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if not found:
        fail(f"cachegrind gave no count for {shlex.join(argv)}:\n{done.stderr[-2000:]}")
    os.unlink(out)
    # The program's own words, without valgrind's lines.
    said = "\n".join(line for line in done.stderr.splitlines() if not line.startswith(("==", "--")))
    return int(found.group(1).replace(",", "")), done.returncode, said


def peak_rss(argv, work):
    """Peak RSS in bytes of `argv` run alone (ru_maxrss from wait4)."""
    with open(os.path.join(work, "stdout"), "wb") as stdout:
        child = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    return usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=50_000, help="pods in the snapshot (default 50000)")
    parser.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"))
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        fail("valgrind is not installed: apt-get install valgrind")
    release = os.path.join(args.target_dir, "release")
    binaries = {name: os.path.join(release, name) for name in ("verify-pods", "read-snapshot", "parse-floor")}
    for path in binaries.values():
        if not os.access(path, os.X_OK):
            fail(f"{path} is missing: cargo build --release --workspace")
    pods, events, _ = snapshot(args.pods, cache_dir())
    size = os.path.getsize(pods)
    runs = [
        ("checker", [binaries["verify-pods"], "check", "--snapshot", pods, "--events", events,
                     "--format", "json", "--workloads", "false"]),
        ("reader alone", [binaries["read-snapshot"], pods]),
        ("parse floor", [binaries["parse-floor"], pods]),
    ]
    counts = {}
    print(f"Instructions (cachegrind, every thread), {args.pods:,} pods, {size / 1e6:,.0f} MB:")
    with tempfile.TemporaryDirectory() as work:
        for label, argv in runs:
            count, code, said = cachegrind(argv, work)
            # The checker exits 1 on this failing snapshot; anything else is no measurement.
            if code not in (0, 1) or (label != "checker" and code != 0):
                fail(f"{label} exited {code}: {shlex.join(argv)}\n{said[-2000:]}")
            counts[label] = count
            print(f"  {label:<13} {count / 1e9:6.2f} G   valgrind --tool=cachegrind --cache-sim=no {shlex.join(argv)}")
        rss, code = peak_rss(runs[0][1], work)
    floor = counts["parse floor"]
    for label in ("checker", "reader alone"):
        print(f"  {label} / parse floor: {counts[label] / floor:.2f}x")
    met = counts["checker"] <= FLOOR_TARGET * floor
    print(f"  target: checker <= {FLOOR_TARGET}x the parse floor: {'met' if met else 'NOT MET'}")
    rss_met = rss <= RSS_TARGET * size
    print(f"Peak RSS of the checker (no valgrind): {rss / 1e6:,.0f} MB, {rss / size:.0%} of the file"
          f" (target <= {RSS_TARGET:.0%}: {'met' if rss_met else 'NOT MET'}); exit {code}")


if __name__ == "__main__":
    main()
