#!/usr/bin/env python3
"""The chunk sweep: the checker live at several --chunk-size values.

`python3 bench/chunks.py --chunks 0,500,2000,5000 --sizes 10000,50000 [--reps N] [--bash]`
measures the checker live at each --chunk-size, on plain http and over TLS with a
static token and with the 300 ms exec plugin (exec - token = what the plugin costs),
round-robin so that a burst of load hits every chunk size alike, the 1-minute load
average noted with each run (the machine is shared). It chose the default of
chunk_size in checker/programs/contract.json (see BENCHMARKS.md, "Chunk size").
"""

import argparse
import os
import statistics
import tempfile

from common import CHECKER, WRAPPER, cache_dir, driver_env, excluded_namespaces, fail
from measure import Live, json_counts, text_same
from replay import Server, download_pages, served_text, token_kubeconfig
from snapshots import expected_counts, snapshot

CONNECTIONS = ("plain", "token", "exec")


def chunk_contenders(checker, kubeconfigs, env, check, chunks, connections=CONNECTIONS, bash=None):
    """One checker-live contender per (chunk size, connection); with `bash` = (wrapper, text check),
    the generated bash live too (plain http)."""
    found = []
    for chunk in chunks:
        for connection in connections:
            argv = [checker, "check", "--kubeconfig", kubeconfigs[connection], "--format", "json",
                    "--chunk-size", str(chunk)]
            found.append(Live(f"chunk {chunk} {connection}", f"checker live, --chunk-size {chunk}, {connection}",
                              argv, env, check))
        if bash:
            wrapper, text_check = bash
            bash_env = dict(env, KUBECONFIG=kubeconfigs["plain"], KWOK_VERIFY_PODS_CHUNK_SIZE=str(chunk))
            found.append(Live(f"chunk {chunk} bash", f"generated bash live, chunk size {chunk}, plain",
                              ["bash", wrapper], bash_env, text_check))
    return found


def chunk_sweep(sizes, chunks, reps, connections=CONNECTIONS, bash=False):
    cache = cache_dir()
    excluded = set(excluded_namespaces())
    rows = []
    with tempfile.TemporaryDirectory(prefix="verify-pods-bench-chunks-") as work:
        for size in sizes:
            pods_file, events_file, tally = snapshot(size, cache)
            expected = expected_counts(tally, excluded)
            kubeconfigs = {"plain": os.path.join(work, f"kubeconfig-{size}"),
                           "exec": os.path.join(work, f"kubeconfig-{size}-exec")}
            servers = [Server(pods_file, events_file, kubeconfigs["plain"]),
                       Server(pods_file, events_file, kubeconfigs["exec"], tls_exec=True)]
            try:
                kubeconfigs["token"] = token_kubeconfig(kubeconfigs["exec"], os.path.join(work, f"kc-{size}-token"))
                env = dict(driver_env(work), KWOK_VERIFY_PODS_DEADLINE="0")
                text_check = None
                if bash:
                    pages = download_pages(kubeconfigs["plain"], env, os.path.join(work, f"pages-{size}.json"))
                    text_check = (WRAPPER, text_same(served_text(CHECKER, pages, events_file)))
                runs = chunk_contenders(CHECKER, kubeconfigs, env, json_counts(expected),
                                        chunks, connections, text_check)
                loads = {c.key: [] for c in runs}
                for rep in range(reps):
                    for c in runs:
                        if c.failed:
                            continue
                        c.run(work)
                        if c.failed:
                            fail(f"{size}: {c.label}: {c.failed}")
                        loads[c.key].append(os.getloadavg()[0])
                        print(f"  {size} {c.key:<20} run {rep + 1}: {c.walls[-1]:7.2f} s  tree "
                              f"{c.tree[-1] / 1e6:6,.0f} MB  load {loads[c.key][-1]:.1f}", flush=True)
                file_bytes = os.path.getsize(pods_file)
                for c in runs:
                    rows.append((size, file_bytes, c, statistics.median(c.walls), loads[c.key]))
            finally:
                for s in servers:
                    s.stop()
    print("\n| pods | chunk | connection | kubectl calls | median | runs (s) | load (1 min) | tree peak RSS | tree / `-o json` file |")
    print("|---:|---:|---|---:|---:|---|---|---:|---:|")
    for size, file_bytes, c, median, load in rows:
        chunk = int(c.key.split()[1])
        calls = 1 if chunk == 0 else -(-size // chunk)
        walls = ", ".join(f"{w:.2f}" for w in c.walls)
        loads_text = ", ".join(f"{x:.1f}" for x in load)
        print(f"| {size:,} | {chunk} | {c.key.split()[2]} | {calls} | {median:.2f} s | {walls} | {loads_text} | "
              f"{max(c.tree) / 1e6:,.0f} MB | {100 * max(c.tree) / file_bytes:.0f} % |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The checker live at several --chunk-size values.")
    parser.add_argument("--chunks", type=lambda s: [int(x) for x in s.split(",")], default=[0, 500, 2000, 5000])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10000, 50000])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--connections", type=lambda s: [x for x in s.split(",") if x], default=list(CONNECTIONS),
                        help="of plain,token,exec (default all; '' for none)")
    parser.add_argument("--bash", action="store_true", help="also the generated bash live (plain http)")
    args = parser.parse_args()
    chunk_sweep(args.sizes, args.chunks, args.reps, args.connections, args.bash)
