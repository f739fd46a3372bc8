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
  generated -o json     the generated bash of OJSON_COMMIT, the last commit before
                        the raw drivers, taken from the git history
  checker live@LABEL    verify-pods check with another build (--compare LABEL=BINARY);
                        the checker's previous `-o json` path is the build of
                        OJSON_COMMIT (see `ojson_checker_build` below for the commands)

The `-o json` contenders run once per size whatever the repetitions
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

import os
import subprocess

from common import ROOT, driver_env  # noqa: F401 (settle.py reads live.driver_env)
from measure import Live, items_printed, json_counts, raw_pages_hold, status_same, text_same
from replay import PLUGIN_MS

RAW_PAGES = os.path.join(ROOT, "bench", "raw-pages.sh")


# The last commit of main before the raw drivers were merged (f36081b^1): its
# generated bash reads `kubectl get pods --all-namespaces -o json`.
OJSON_COMMIT = "9cb821bf7eb266de625a215f72d56f45aa438c8a"
# KWOK_VERIFY_PODS_KUBECTL_TIMEOUT of the `-o json` drivers (seconds).
OJSON_KUBECTL_TIMEOUT = 3600

# The checker's own `-o json` path is no longer in the product: measure the
# checker of OJSON_COMMIT (its `check --kubeconfig` reads `kubectl get pods -A
# -o json`) as another build:
#   git worktree add /tmp/verify-pods-ojson 9cb821bf7eb2
#   cargo build --release -p verify-pods --manifest-path /tmp/verify-pods-ojson/Cargo.toml
#   python3 bench/run.py --compare ojson=/tmp/verify-pods-ojson/target/release/verify-pods


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


def contenders(work, checker, wrappers, kubeconfigs, base_env, expected, text_goldens, total, jq_pass,
               compare=()):
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
    counts = json_counts(expected)

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
    # The drivers' default kubectl timeout, 120 s, kills `-o json` at 150k pods:
    # the previous paths (and other builds, which may be one) run with a longer one.
    slow_env = dict(env, KWOK_VERIFY_PODS_KUBECTL_TIMEOUT=str(OJSON_KUBECTL_TIMEOUT))
    for label, binary in compare:
        found.append(Live(f"checker live@{label}", f"checker live, {label} build", [binary, *checker_live(plain_kc)[1:]],
                          slow_env, counts))
    found.append(Live("kubectl -o json", "`kubectl get pods -A -o json` alone (1 run)",
                      ["kubectl", "get", "pods", "-A", "-o", "json"], env, items_printed(total), once=True))
    if wrappers and wrappers[1]:
        found.append(Live("generated live -o json", f"generated bash live of {OJSON_COMMIT[:7]}, `-o json` (1 run)",
                          ["bash", wrappers[1]], slow_env, status_same(ojson_text), once=True))
    return found
