"""What every part of the bench shares: the repository's paths, failing
loudly, the load and the units, the default excluded namespaces and owner
kinds, the
snapshot cache, the counts of a checker's JSON and the drivers' environment.

The bench's modules import downwards only, never back:
  common <- snapshots (gen) <- measure <- replay <- live <- run
                                                  <- chunks, watch_events
settle.py imports run and live.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKER = os.path.join(ROOT, "target", "release", "verify-pods")
SERVER = os.path.join(ROOT, "target", "release", "replay-server")
WRAPPER = os.path.join(ROOT, "generated", "verify-pods.sh")
PROGRAMS = os.path.join(ROOT, "checker", "programs")

COUNTS = ("total", "running", "pending", "failed", "succeeded", "unscheduled")


def fail(message):
    print(f"bench: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def excluded_namespaces():
    """The default excluded namespaces, from their only source."""
    return _program_list("excluded-namespaces")


def excluded_owner_kinds():
    """The default excluded owner kinds, from their only source."""
    return _program_list("excluded-owner-kinds")


def _program_list(name):
    """A list file of checker/programs (comments and blanks dropped)."""
    names = []
    with open(os.path.join(PROGRAMS, name), encoding="utf-8") as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            if name:
                names.append(name)
    return names


def cache_dir():
    path = os.environ.get("VERIFY_PODS_BENCH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "verify-pods-bench"
    )
    if os.path.realpath(path).startswith(os.path.realpath(ROOT) + os.sep):
        fail(f"the cache {path} must be outside the repository")
    os.makedirs(path, exist_ok=True)
    return path


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def mb(n):
    return n / 1e6


def counts_of(doc, who):
    try:
        return {k: doc[k] for k in COUNTS}
    except (KeyError, TypeError):
        fail(f"{who}: no counts in its output")


def driver_env(work):
    """The environment the drivers run in: none of the caller's KWOK_VERIFY_PODS_*
    knobs or step summary, a home and kube cache of the bench's own, no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWOK_VERIFY_PODS_") and k != "GITHUB_STEP_SUMMARY"}
    env.update(HOME=os.path.join(work, "home"), KUBECACHEDIR=os.path.join(work, "kube-cache"), NO_COLOR="1",
               TMPDIR=work)
    os.makedirs(env["HOME"], exist_ok=True)
    return env
