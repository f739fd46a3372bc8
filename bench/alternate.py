"""Alternated runs of several driver commands against one live cluster (a
replay server's kubeconfig): each round runs every command once, in turn,
so that the machine's load moves them alike; prints the medians of wall
time and of CPU time (the command and its children), each against the
first command's. BENCHMARKS.md uses it to compare builds of the bash
wrapper on one state:

    python3 bench/alternate.py KUBECONFIG DEADLINE REPS \\
        'main=:bash /tmp/before/generated/verify-pods.sh' \\
        'new=KWOK_VERIFY_PODS_WORKLOADS=true:bash generated/verify-pods.sh'

Each spec is NAME=ENV,...:COMMAND (ENV as VAR=VALUE, comma-separated, may
be empty; COMMAND split on spaces).
"""

import os
import resource
import statistics
import subprocess
import sys
import time


def parse(spec):
    """NAME=ENV,...:COMMAND -> (name, env dict, argv)."""
    name, rest = spec.split("=", 1)
    envs, command = rest.rsplit(":", 1)
    env = dict(e.split("=", 1) for e in envs.split(",") if e)
    return name, env, command.split()


def timed(argv, env):
    """Wall and CPU seconds of one run, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    kubeconfig, deadline, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    specs = [parse(s) for s in sys.argv[4:]]
    runs = {name: [] for name, _, _ in specs}
    for _ in range(reps):
        for name, extra, argv in specs:
            env = dict(os.environ, KUBECONFIG=kubeconfig, KWOK_VERIFY_PODS_DEADLINE=deadline, **extra)
            runs[name].append(timed(argv, env))
    first = runs[specs[0][0]]
    wall0 = statistics.median(r[0] for r in first)
    cpu0 = statistics.median(r[1] for r in first)
    for name, results in runs.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        codes = sorted({r[2] for r in results})
        print(f"{name:10} {wall * 1000:.0f} ms {100 * (wall / wall0 - 1):+5.1f} %  "
              f"cpu {cpu * 1000:.0f} ms {100 * (cpu / cpu0 - 1):+5.1f} %  exit {codes}")


if __name__ == "__main__":
    main()
