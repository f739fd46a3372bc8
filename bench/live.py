"""The live section of `make bench`: through the replay API server and the real kubectl.

For each size (10k and 50k pods; 150k with --big) the snapshot bench/gen.py
wrote is served by target/release/replay-server (the tests' server, compact
pages like the apiserver) on plain http, and by a second one over TLS that
requires a bearer token, and measured, the drivers at their default chunk
size (0: the whole pods list in one `kubectl get --raw '/api/v1/pods'`):

  checker live          verify-pods check --kubeconfig K --format json (raw pages)
  checker live, token   the same over TLS with a static token
  checker live, exec    the same over TLS with an exec credential plugin that takes
                        300 ms: exec - token is what the plugin costs a check
  generated live        bash generated/verify-pods.sh (KUBECONFIG=K, kubectl on PATH)
  raw 0                 kubectl get --raw '/api/v1/pods', alone (bench/raw-pages.sh 0):
                        the download the generated bash makes
  jq pass               report.jq over those downloaded pages, the jq command line
                        `verify-pods programs` lists (the bash's one pass)
  kubectl -o json       kubectl get pods -A -o json, alone (what the drivers called
                        before issue 14)
  checker live -o json  the checker's previous path (the hidden --fetch list-json)
  generated -o json     the generated bash of OJSON_COMMIT, the last commit before
                        the raw drivers, taken from the git history
  LABEL live            verify-pods check with another build (--compare LABEL=BINARY)

The three `-o json` contenders run once per size whatever the repetitions
(kubectl -o json takes minutes and ~13 GB at 150k): their ratios are rough.

Every run is checked: the drivers must print the counts the generator
tallied (text: the offline checker's text on the pages as served, `waited=` aside), jq the same
counts, kubectl -o json must print every pod, the raw pages must hold every
pod at one resourceVersion.

Wall time is the whole command; CPU is its user + system time, children
included (GNU time's %U + %S), which the machine's load moves less.
Memory is measured two ways:
  tree peak    the largest sum of VmRSS over the process tree (the contender and
               every descendant, kubectl included), sampled from /proc every
               10 ms: a process shorter than that can be missed;
  single peak  GNU time's %M (getrusage ru_maxrss): the largest single process
               of the tree, never missed.
The replay server is not in the tree (it plays the cluster).
"""

import json
import os
import re
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "target", "release", "replay-server")
RAW_PAGES = os.path.join(ROOT, "bench", "raw-pages.sh")
TOKEN = "bench-token"
PLUGIN_MS = 300
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class Server:
    """A replay-server process serving one snapshot; writes its kubeconfig."""

    def __init__(self, pods_file, events_file, kubeconfig, tls_exec=False):
        argv = [SERVER, "--state", f"{pods_file},{events_file}", "--now", "2025-01-01T12:00:00Z",
                "--kubeconfig", kubeconfig]
        if tls_exec:
            argv += ["--tls", "--token", TOKEN, "--exec-plugin-ms", str(PLUGIN_MS)]
        started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            raise RuntimeError(f"replay-server did not start: {' '.join(argv)}")
        self.load_seconds = time.perf_counter() - started
        self.kubeconfig = kubeconfig

    def rss(self):
        """(VmRSS, VmHWM) in bytes."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(value.split()[0]) * 1024
        return values["VmRSS"], values["VmHWM"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def token_kubeconfig(exec_kubeconfig, path):
    """The exec kubeconfig with a static token instead of the plugin (same server, same TLS)."""
    with open(exec_kubeconfig, encoding="utf-8") as f:
        text = f.read()
    head = text[: text.index("    exec:")]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + f"    token: {TOKEN}\n")
    return path


def tree_rss(root):
    """Sum of VmRSS over `root` and its descendants (via /proc/PID/task/*/children)."""
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as f:
                total += int(f.read().split()[1]) * PAGE_SIZE
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


class Sampler(threading.Thread):
    """Samples tree_rss(pid) every 10 ms until stopped; keeps the peak."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self.done.wait(0.01)


class Run:
    """One measured run: wall and CPU seconds, tree and single peaks in bytes, exit code, stderr."""

    def __init__(self, wall, cpu, tree, single, code, stderr):
        self.wall, self.cpu, self.tree, self.single = wall, cpu, tree, single
        self.code, self.stderr = code, stderr


def measure_run(argv, env, stdout_path, stdin_path=None):
    """Runs argv under GNU time, its stdout into stdout_path (stdin from stdin_path)."""
    with open(stdout_path, "wb") as out, open(stdout_path + ".time", "w+", encoding="utf-8") as usage, \
            open(stdin_path or os.devnull, "rb") as stdin:
        started = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M %U %S", "-o", usage.name, *argv], env=env,
                                stdin=stdin, stdout=out, stderr=subprocess.PIPE)
        sampler = Sampler(proc.pid)
        sampler.start()
        stderr = proc.stderr.read()
        proc.wait()
        wall = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        usage.seek(0)
        # GNU time writes "Command exited with non-zero status N" first.
        max_kb, user, system = usage.read().strip().splitlines()[-1].split()
    os.unlink(usage.name)
    # /usr/bin/time's own few MB are in the tree sum.
    return Run(wall, float(user) + float(system), sampler.peak, int(max_kb) * 1024, proc.returncode,
               stderr.decode(errors="replace"))


def measure(argv, env, stdout_path):
    """(wall s, tree peak bytes, single peak bytes, exit code, stderr text)."""
    run = measure_run(argv, env, stdout_path)
    return run.wall, run.tree, run.single, run.code, run.stderr


class Live:
    """A live contender. `once`: run on the first repetition only (the slow `-o json`
    paths); `stdin`: a file for its standard input (the jq pass)."""

    def __init__(self, key, label, argv, env, check, once=False, stdin=None):
        self.key, self.label, self.argv, self.env, self.check = key, label, argv, env, check
        self.once, self.stdin = once, stdin
        self.walls, self.cpus, self.tree, self.single = [], [], [], []
        self.failed = None

    def due(self):
        """Whether to run it again: not after a failure, and a `once` contender once."""
        return not self.failed and not (self.once and self.walls)

    def run(self, work):
        out = os.path.join(work, f"live-{self.key.replace(' ', '-')}.out")
        run = measure_run(self.argv, self.env, out, self.stdin)
        problem = self.check(out, run.code, run.stderr)
        os.unlink(out)
        if problem:
            last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
            self.failed = f"{problem} (exit {run.code}): {last}"
            return
        self.walls.append(run.wall)
        self.cpus.append(run.cpu)
        self.tree.append(run.tree)
        self.single.append(run.single)


WAITED = re.compile(rb"waited=\d+s")


def text_same(golden):
    golden = WAITED.sub(b"waited=Ns", golden)

    def check(out, code, err):
        with open(out, "rb") as f:
            got = WAITED.sub(b"waited=Ns", f.read())
        return None if got == golden else "printed another text than the offline checker"
    return check


def json_counts(expected, counts_of):
    def check(out, code, err):
        with open(out, "rb") as f:
            try:
                doc = json.load(f)
            except ValueError:
                return "printed no JSON"
        got = counts_of(doc, "checker live")
        return None if got == expected else f"counts {got}, expected {expected}"
    return check


def items_printed(total):
    """kubectl -o json: one `"kind": "Pod",` line per item, at the items' fields' indentation (12)."""
    marker = b'\n            "kind": "Pod",\n'

    def check(out, code, err):
        if code != 0:
            return "kubectl failed"
        count = 0
        with open(out, "rb") as f:
            tail = b""
            while True:
                block = f.read(1 << 24)
                if not block:
                    break
                data = tail + block
                count += data.count(marker)
                tail = data[-(len(marker) - 1):]
        return None if count == total else f"{count} pods printed, expected {total}"
    return check


def raw_pages_hold(total, pages_dir):
    """bench/raw-pages.sh's pages: one resourceVersion, `total` items (each compact
    item starts with `{"metadata":{`; the list's own metadata follows a comma)."""
    version = re.compile(rb'"resourceVersion":"([^"]*)"')

    def check(out, code, err):
        try:
            if code != 0:
                return "raw-pages.sh failed"
            versions, items, pages = set(), 0, 0
            for name in os.listdir(pages_dir):
                with open(os.path.join(pages_dir, name), "rb") as f:
                    page = f.read()
                pages += 1
                versions.add(version.search(page[:1024]).group(1))
                items += page.count(b'{"metadata":{')
            if len(versions) != 1:
                return f"pages at versions {sorted(versions)}"
            return None if items == total else f"{items} items in {pages} pages, expected {total}"
        finally:
            for name in os.listdir(pages_dir):
                os.unlink(os.path.join(pages_dir, name))
    return check


# The last commit of main before the raw drivers were merged (f36081b^1): its
# generated bash reads `kubectl get pods --all-namespaces -o json`.
OJSON_COMMIT = "9cb821bf7eb266de625a215f72d56f45aa438c8a"
# KWOK_VERIFY_PODS_KUBECTL_TIMEOUT of the `-o json` drivers (seconds).
OJSON_KUBECTL_TIMEOUT = 3600


def ojson_wrapper(cache):
    """generated/verify-pods.sh as of OJSON_COMMIT, written once into the bench cache
    (outside the repository); None, with a note, where the git history is missing."""
    path = os.path.join(cache, f"verify-pods-{OJSON_COMMIT[:12]}.sh")
    if not os.path.exists(path):
        shown = subprocess.run(["git", "-C", ROOT, "show", f"{OJSON_COMMIT}:generated/verify-pods.sh"],
                               capture_output=True)
        if shown.returncode != 0:
            print(f"bench: no git history with {OJSON_COMMIT[:12]}: the previous generated bash is not measured")
            return None
        with open(path + ".tmp", "wb") as f:
            f.write(shown.stdout)
        os.replace(path + ".tmp", path)
    return path


def driver_env(work):
    """The environment the drivers run in: none of the caller's KWOK_VERIFY_PODS_*
    knobs or step summary, a home and kube cache of the bench's own, no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWOK_VERIFY_PODS_") and k != "GITHUB_STEP_SUMMARY"}
    env.update(HOME=os.path.join(work, "home"), KUBECACHEDIR=os.path.join(work, "kube-cache"), NO_COLOR="1",
               TMPDIR=work)
    os.makedirs(env["HOME"], exist_ok=True)
    return env


def served_text(checker, pages, events_file):
    """The offline checker's text on the pages as the server served them: what a
    raw driver prints live (it names the served resourceVersion; a -o json List
    has none)."""
    return subprocess.run([checker, "check", "--snapshot", pages, "--events", events_file],
                          capture_output=True, env=dict(os.environ, NO_COLOR="1")).stdout


def download_pages(kubeconfig, base_env, path):
    """The pods list as the generated bash reads it by default (one `kubectl get
    --raw` request), into path: the input of the jq-pass contender."""
    with open(path, "wb") as out:
        subprocess.run(["kubectl", "get", "--raw", "/api/v1/pods"], env=dict(base_env, KUBECONFIG=kubeconfig),
                       stdout=out, check=True)
    return path


def contenders(work, checker, wrappers, kubeconfigs, base_env, expected, text_goldens, total, counts_of,
               jq_pass, compare=()):
    """The live contenders of one size. wrappers: (generated bash, its -o json
    predecessor or None), None without the generated bash; kubeconfigs: plain,
    token, exec; text_goldens: the offline checker's text on the pages as served
    (the raw drivers name their resourceVersion) and on the -o json file (the
    -o json predecessor); jq_pass: (report.jq's argv, the downloaded pages file)."""
    served_text, ojson_text = text_goldens
    plain_kc = kubeconfigs["plain"]
    env = dict(base_env, KUBECONFIG=plain_kc)
    pages = os.path.join(work, "pages")
    os.makedirs(pages, exist_ok=True)
    counts = json_counts(expected, counts_of)

    def checker_live(kubeconfig, *more):
        return [checker, "check", "--kubeconfig", kubeconfig, "--format", "json", *more]
    jq_argv, pages_file = jq_pass
    found = [
        Live("checker live", "checker live (`verify-pods check --format json`)", checker_live(plain_kc), env, counts),
        Live("checker live token", "checker live over TLS, static token", checker_live(kubeconfigs["token"]), env,
             counts),
        Live("checker live exec", f"checker live over TLS, {PLUGIN_MS} ms exec plugin",
             checker_live(kubeconfigs["exec"]), env, counts),
    ]
    if wrappers:
        found.append(Live("generated live", "generated bash live (verify-pods.sh)", ["bash", wrappers[0]], env,
                          text_same(served_text)))
    found += [
        Live("raw 0", "`kubectl get --raw '/api/v1/pods'` alone (one request: the download)",
             ["bash", RAW_PAGES, "0", pages], env, raw_pages_hold(total, pages)),
        Live("jq pass", "jq pass over the downloaded pages (report.jq, as the bash runs it)", jq_argv, env, counts,
             stdin=pages_file),
    ]
    for label, binary in compare:
        found.append(Live(f"checker live@{label}", f"checker live, {label} build", [binary, *checker_live(plain_kc)[1:]],
                          env, counts))
    # The drivers' default kubectl timeout, 120 s, kills `-o json` at 150k pods:
    # the previous path runs with a longer one, to be measured at all.
    slow_env = dict(env, KWOK_VERIFY_PODS_KUBECTL_TIMEOUT=str(OJSON_KUBECTL_TIMEOUT))
    found += [
        Live("kubectl -o json", "`kubectl get pods -A -o json` alone (1 run)",
             ["kubectl", "get", "pods", "-A", "-o", "json"], env, items_printed(total), once=True),
        Live("checker live -o json", "checker live, previous `-o json` path (`--fetch list-json`; 1 run)",
             checker_live(plain_kc, "--fetch", "list-json"), slow_env, counts, once=True),
    ]
    if wrappers and wrappers[1]:
        found.append(Live("generated live -o json", f"generated bash live of {OJSON_COMMIT[:7]}, `-o json` (1 run)",
                          ["bash", wrappers[1]], slow_env, text_same(ojson_text), once=True))
    return found


# ---------------------------------------------------------------- chunk sweep
#
# `python3 bench/live.py --chunks 0,500,2000,5000 --sizes 10000,50000 [--reps N] [--bash]`
# measures the checker live at each --chunk-size, on plain http and over TLS with a
# static token and with the 300 ms exec plugin (exec - token = what the plugin costs),
# round-robin so that a burst of load hits every chunk size alike, the 1-minute load
# average noted with each run (the machine is shared). It chose the default of
# chunk_size in checker/programs/contract.json (see BENCHMARKS.md, "Chunk size").

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
    import statistics
    import tempfile

    import run as bench  # bench/run.py: the snapshots and their expected counts

    cache = bench.cache_dir()
    excluded = set(bench.excluded_namespaces())
    rows = []
    with tempfile.TemporaryDirectory(prefix="verify-pods-bench-chunks-") as work:
        for size in sizes:
            pods_file, events_file, tally = bench.snapshot(size, cache)
            expected = bench.expected_counts(tally, excluded)
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
                    text_check = (bench.WRAPPER, text_same(served_text(bench.CHECKER, pages, events_file)))
                runs = chunk_contenders(bench.CHECKER, kubeconfigs, env, json_counts(expected, bench.counts_of),
                                        chunks, connections, text_check)
                loads = {c.key: [] for c in runs}
                for rep in range(reps):
                    for c in runs:
                        if c.failed:
                            continue
                        c.run(work)
                        if c.failed:
                            bench.fail(f"{size}: {c.label}: {c.failed}")
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
    import argparse

    parser = argparse.ArgumentParser(description="The checker live at several --chunk-size values.")
    parser.add_argument("--chunks", type=lambda s: [int(x) for x in s.split(",")], default=[0, 500, 2000, 5000])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10000, 50000])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--connections", type=lambda s: [x for x in s.split(",") if x], default=list(CONNECTIONS),
                        help="of plain,token,exec (default all; '' for none)")
    parser.add_argument("--bash", action="store_true", help="also the generated bash live (plain http)")
    args = parser.parse_args()
    chunk_sweep(args.sizes, args.chunks, args.reps, args.connections, args.bash)
