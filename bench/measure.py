"""How the bench measures a command: wall time and peak RSS of one run
(offline, `measure`), or wall, CPU and the process tree's peak (live,
`measure_run`), and the checks every live run's output must pass."""

import json
import os
import re
import subprocess
import tempfile
import threading
import time

from common import counts_of

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


TIME = "/usr/bin/time"


def measure(argv, env=None, stdout_file=None):
    """One run: (wall seconds, peak RSS bytes, exit status, stdout bytes).

    Peak RSS comes from GNU time (%M): a child forked from this Python
    process would count Python's own pages in its ru_maxrss before exec.
    Without /usr/bin/time, wait4's ru_maxrss is used (and says so)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss_file:
        target = out if stdout_file is None else stdout_file
        timed = [TIME, "-f", "%M", "-o", rss_file.name, *argv] if HAVE_TIME else argv
        started = time.perf_counter()
        proc = subprocess.Popen(timed, env=env, stdout=target, stderr=subprocess.PIPE)
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
        code = proc.returncode
        if HAVE_TIME:
            text = rss_file.read()
            # GNU time writes "Command exited with non-zero status N" first.
            peak_kb = int(text.strip().splitlines()[-1])
        else:
            peak_kb = usage.ru_maxrss
        out.seek(0)
        data = out.read() if stdout_file is None else b""
    return wall, peak_kb * 1024, code, data, stderr.decode(errors="replace")


HAVE_TIME = os.access(TIME, os.X_OK)


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


STATUS_COUNT = re.compile(rb"(\d+) (total|running|pending|failed|unscheduled)")


def status_counts(text):
    """The counts of a text's `Pod status:` line, the one line whose form
    every version keeps (the rest of the text changed with issue 24)."""
    line = next((line for line in text.splitlines() if line.startswith(b"Pod status: ")), b"")
    return dict((name, int(n)) for n, name in STATUS_COUNT.findall(line))


def status_same(golden):
    """For an older version's text: the same counts on the `Pod status:` line."""
    wanted = status_counts(golden)

    def check(out, code, err):
        with open(out, "rb") as f:
            got = status_counts(f.read())
        return None if wanted and got == wanted else f"status counts {got}, expected {wanted}"
    return check


def json_counts(expected):
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
