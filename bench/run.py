#!/usr/bin/env python3
"""make bench: how fast and how lean is verify-pods on big snapshots?

Generates synthetic kubectl-shaped snapshots (bench/gen.py; 1k, 10k, 50k
pods, 150k with --big) into a cache folder outside the repository, then
measures, several repetitions each, median wall time and peak RSS of:

  checker       target/release/verify-pods check --snapshot F --events E --format json
  jq report.jq  jq -c --slurp --arg excluded_namespaces ... -f report.jq F   (the system jq,
                1.6; the options as `verify-pods programs` lists them)
  generated     generated/verify-pods.sh with a stub kubectl that cats F and E
  post-fix      bench/postfix.sh: the snapshot in a bash variable, three jq
                over here-strings (the shape of the upstream post-fix)
  cat           cat F > /dev/null, the I/O floor

Snapshots with kubectl's escapes (`&` `<` `>` as `\u0026`…, bench/gen.py)
are measured too, at 10k and 50k pods (--escape-sizes): in 3 pods in 10
("escapes 30 %"), in every pod ("escapes 100 %"), and in every pod of a
compact document ("escapes 100 %, compact"); without the post-fix baseline,
whose shape does not change with the bytes.

Every run's output is checked, not only timed: the checker's counts must
equal what the generator wrote, jq's report must equal the checker's, the
generated bash must print exactly the checker's text, and the post-fix
baseline must find the same counts. Any disagreement fails the run.

Peak RSS is ru_maxrss from wait4(): the largest single process of the tree
(for the bash contenders that is jq; the bash process holding the snapshot
in a variable is not added to it).

The live section (bench/live.py; 10k and 50k pods, 150k with --big) runs
the drivers live at their default chunk size (raw pages), the raw download
and the jq pass the generated bash makes over it, kubectl -o json alone, the
previous -o json generated bash and, with --compare, other checker builds
(the checker's own -o json path: --compare ojson=BINARY, the build of
live.OJSON_COMMIT; bench/live.py says how), through the replay API server and
the real kubectl, with wall time, CPU time and the peak RSS of the whole
process tree, and computes issue 14's targets from that one run.

The tables, the target ratios and the machine are written between the
markers of BENCHMARKS.md (one pair for the offline section, one for the
live section); the rest of that file is kept as written.
Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

import live
import replay
from common import (  # noqa: F401 (settle.py reads these through run)
    CHECKER, ROOT, SERVER, WRAPPER, cache_dir, counts_of, driver_env, excluded_namespaces, excluded_owner_kinds, fail, load, mb,
)
from measure import HAVE_TIME, Live, json_counts, measure
from snapshots import ESCAPE_VARIANTS, KUBECTL_FORM, VARIANTS, expected_counts, generator_version, snapshot  # noqa: F401

POSTFIX = os.path.join(ROOT, "bench", "postfix.sh")
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

STUB_KUBECTL = """#!/usr/bin/env bash
# bench stub: prints the saved snapshot or events, as one raw list
# (the generated bash at chunk size 0) or as `get pods|events -A -o json`.
case " $* " in
  *" /api/v1/pods"*|*" get pods "*) exec cat -- "$BENCH_PODS" ;;
  *" /api/v1/events"*|*" get events "*) exec cat -- "$BENCH_EVENTS" ;;
esac
echo "bench stub kubectl: unexpected call: $*" >&2
exit 1
"""


class Contender:
    def __init__(self, key, label, argv, env=None, stdout_devnull=False, may_fail=False):
        self.key, self.label, self.argv, self.env = key, label, argv, env
        self.stdout_devnull = stdout_devnull
        # A baseline that breaks on a big snapshot is a result, not a bench
        # failure: it is reported and not run again.
        self.may_fail = may_fail
        self.failed = None
        self.walls, self.rss, self.outputs = [], [], []

    def run(self):
        if self.failed:
            return
        if self.stdout_devnull:
            with open(os.devnull, "wb") as null:
                wall, rss, code, out, err = measure(self.argv, self.env, null)
        else:
            wall, rss, code, out, err = measure(self.argv, self.env)
        if code not in (0, 1):
            why = f"exit {code}" + (" (killed by signal " + str(code - 128) + ")" if code > 128 else "")
            last = err.strip().splitlines()[-1] if err.strip() else "no message"
            if not self.may_fail:
                fail(f"{' '.join(self.argv)}: {why}: {err[-2000:]}")
            self.failed = f"{why} after {wall:.0f} s, {mb(rss):,.0f} MB: {last}"
            return
        self.walls.append(wall)
        self.rss.append(rss)
        self.outputs.append(out)

    @property
    def median(self):
        return statistics.median(self.walls)

    @property
    def peak(self):
        return max(self.rss)


def jq_command(name, program_file, values):
    """The jq command line of a canonical program as `verify-pods programs`
    lists it (its options come from the program's descriptor), with its
    placeholders (EXCLUDED_NAMESPACES, ...) filled from `values`."""
    listing = subprocess.run([CHECKER, "programs"], check=True, capture_output=True, text=True).stdout.splitlines()
    at = next(i for i, line in enumerate(listing) if line.split()[:1] == [name])
    words = shlex.split(listing[at + 1])
    if words[0] != "jq" or words[-2:] != ["-f", f"{name}.jq"]:
        fail(f"unexpected jq command for {name}: {listing[at + 1].strip()}")
    argv = [values.get(w, w) for w in words[1:-2]]
    # A placeholder left unfilled would reach jq as a value and change the
    # verdict quietly (an owner kind named EXCLUDED_OWNER_KINDS).
    unfilled = [w for w in argv if w.isupper() and w.replace("_", "").isalpha()]
    if unfilled:
        fail(f"jq command for {name}: no value for {', '.join(unfilled)}")
    return ["jq"] + argv + ["-f", program_file]


def report_values(excluded):
    """The placeholders of report.jq's command line: the default lists, and no
    workloads read (as the checker offline)."""
    return {"EXCLUDED_NAMESPACES": ",".join(excluded), "EXCLUDED_OWNER_KINDS": ",".join(excluded_owner_kinds()),
            "NAMESPACES": "", "SELECTOR": "", "WORKLOADS": "false"}


def contenders(pods_file, events_file, excluded, work, have_wrapper, compare=()):
    report_program = os.path.join(work, "report.jq")
    with open(report_program, "wb") as f:
        f.write(subprocess.run([CHECKER, "programs", "report"], check=True, capture_output=True).stdout)
    stub_dir = os.path.join(work, "bin")
    os.makedirs(stub_dir, exist_ok=True)
    stub = os.path.join(stub_dir, "kubectl")
    with open(stub, "w", encoding="utf-8") as f:
        f.write(STUB_KUBECTL)
    os.chmod(stub, 0o755)
    env = dict(os.environ)
    env.update(
        PATH=stub_dir + os.pathsep + env.get("PATH", ""),
        BENCH_PODS=pods_file,
        BENCH_EVENTS=events_file,
        KWOK_VERIFY_PODS_DEADLINE="0",
        EXCLUDED=",".join(excluded),
        NO_COLOR="1",
        TMPDIR=work,
    )
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.pop("KWOK_VERIFY_PODS_ARTIFACT_DIR", None)
    found = [
        Contender("checker", "checker (verify-pods check --format json)",
                  [CHECKER, "check", "--snapshot", pods_file, "--events", events_file, "--format", "json"], env),
    ]
    # Other builds of the checker (--compare LABEL=BINARY), e.g. before a change.
    for label, binary in compare:
        found.append(Contender(f"checker@{label}", f"checker, {label} build",
                               [binary, "check", "--snapshot", pods_file, "--events", events_file, "--format", "json"], env))
    found += [
        Contender("jq", "jq report.jq (one pass)",
                  jq_command("report", report_program, report_values(excluded)) + [pods_file]),
    ]
    if have_wrapper:
        found.append(Contender("generated", "generated bash (verify-pods.sh, stub kubectl)", ["bash", WRAPPER], env))
    found += [
        Contender("postfix", "post-fix-shaped bash (3 jq over a variable)", ["bash", POSTFIX], env, may_fail=True),
        Contender("cat", "cat F > /dev/null (I/O floor)", ["cat", pods_file], stdout_devnull=True),
    ]
    return found


def same_shared_keys(contender, out, reference):
    """Whether another build (--compare) gave the checker's result on the keys
    both have: an older build lacks the newer keys (e.g. unscheduled_groups,
    failed_groups, events_matched). Says once per build which were left out."""
    if contender.key == "checker":
        return False
    theirs, ours = json.loads(out), json.loads(reference)
    shared = theirs.keys() & ours.keys()
    if any(theirs[key] != ours[key] for key in shared):
        return False
    left_out = sorted(theirs.keys() ^ ours.keys())
    if left_out and not getattr(contender, "noted", False):
        contender.noted = True
        print(f"  note: {contender.label} compared on the keys both builds have; not on {', '.join(left_out)}",
              flush=True)
    return True


def check_results(runs, expected, text_golden):
    """Fail loudly unless every contender saw the same pods."""
    by = {c.key: c for c in runs}
    for c in runs:
        if not c.key.startswith("checker"):
            continue
        for out in c.outputs:
            if out != by["checker"].outputs[0] and not same_shared_keys(c, out, by["checker"].outputs[0]):
                fail(f"{c.label} printed another result than the checker's first run")
    for out in by["checker"].outputs:
        got = counts_of(json.loads(out), "checker")
        if got != expected:
            fail(f"checker counts {got} differ from the generated snapshot {expected}")
    checker_report = json.loads(by["checker"].outputs[0])
    for out in by["jq"].outputs if "jq" in by else []:
        report = json.loads(out)
        if counts_of(report, "jq") != expected:
            fail(f"jq report.jq counts {counts_of(report, 'jq')} differ from {expected}")
        for key, value in report.items():
            if checker_report.get(key) != value:
                fail(f"jq report.jq and the checker differ in {key!r}")
    if "generated" in by:
        for out in by["generated"].outputs:
            if out != text_golden:
                fail("the generated bash printed something else than `verify-pods check` (text)")
    for out in by["postfix"].outputs if "postfix" in by and not by["postfix"].failed else []:
        first = out.split(b"\n", 1)[0]
        got = counts_of(json.loads(first), "post-fix")
        if got != expected:
            fail(f"post-fix counts {got} differ from {expected}")


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "unknown"
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            kb = int(f.readline().split()[1])
            ram = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass

    def version(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "unknown"

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram": ram,
        "jq": version(["jq", "--version"]),
        "bash": version(["bash", "--version"]),
        "rustc": version(["rustc", "--version"]),
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def ratio_line(name, value, target, met):
    mark = "met" if met else "NOT MET"
    return f"| {name} | {value} | {target} | **{mark}** |"


def report_markdown(results, info, argv, reps, loads):
    lines = [
        BEGIN,
        "",
        f"Measured {info['date']} with `{argv}` ({reps} repetitions; median wall time; peak RSS = max over the repetitions).",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM, Linux {info['kernel']}; "
        f"{info['jq']}; {info['bash']}; {info['rustc']}. "
        f"Load average (1 min) before/after: {loads[0]:.1f} / {loads[1]:.1f} "
        "(other work ran on the machine: expect noise between runs; the ratios come from one run).",
        "",
        "| pods | file | contender | median | runs (s) | peak RSS | RSS / file |",
        "|---:|---:|---|---:|---|---:|---:|",
    ]
    for size, variant, file_bytes, runs, _ in results:
        pods = f"{size:,}" + (f" ({variant})" if variant else "")
        for c in runs:
            if c.failed:
                lines.append(f"| {pods} | {mb(file_bytes):,.0f} MB | {c.label} | **failed** | {c.failed} | | |")
                continue
            walls = ", ".join(f"{w:.2f}" for w in c.walls)
            lines.append(
                f"| {pods} | {mb(file_bytes):,.0f} MB | {c.label} | {c.median:.2f} s | {walls} | "
                f"{mb(c.peak):,.0f} MB | {100 * c.peak / file_bytes:.0f} % |"
            )
    lines += ["", "| target | measured | wanted | |", "|---|---|---|---|"]
    for size, variant, file_bytes, runs, json_bytes in results:
        by = {c.key: c for c in runs}
        pods = f"{size:,}" + (f" ({variant})" if variant else "")
        if "jq" not in by:
            continue
        speedup = by["jq"].median / by["checker"].median
        lean = by["checker"].peak / json_bytes
        reference = "file size" if json_bytes == file_bytes else "`-o json` size of the same pods"
        big = size >= 50_000
        tag = "" if big else " (small file; the target is set for 50k and 150k)"
        lines.append(ratio_line(f"{pods}: checker vs jq 1.6 report.jq{tag}", f"{speedup:.1f}x faster", ">= 10x (goal 20x)", speedup >= 10))
        lines.append(ratio_line(f"{pods}: checker peak RSS / {reference}{tag}", f"{100 * lean:.0f} %", "<= 25 %", lean <= 0.25))
        if "generated" in by:
            overhead = by["generated"].median / by["jq"].median
            lines.append(ratio_line(f"{pods}: generated bash / bare jq report.jq", f"{overhead:.2f}x", "<= 1.15x", overhead <= 1.15))
            if size == 50_000 and "postfix" in by and not by["postfix"].failed:
                gain = by["postfix"].median / by["generated"].median
                lines.append(ratio_line(f"{pods} (failing snapshot): post-fix-shaped / generated bash", f"{gain:.2f}x", ">= 2.5x", gain >= 2.5))
    broken = [f"{c.label} at {size:,} pods {variant}".strip() for size, variant, _, runs, _ in results for c in runs if c.failed]
    agreed = "Results: every contender that finished agreed on every count (checked on every run)."
    if broken:
        agreed += " Failed: " + "; ".join(broken) + "."
    lines += ["", agreed, "", END]
    return "\n".join(lines)


def write_benchmarks(section, begin=BEGIN, end=END):
    text = ""
    if os.path.exists(BENCHMARKS):
        with open(BENCHMARKS, encoding="utf-8") as f:
            text = f.read()
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(BENCHMARKS, "w", encoding="utf-8") as f:
        f.write(text)


LIVE_BEGIN, LIVE_END = "<!-- bench-live:begin -->", "<!-- bench-live:end -->"


def run_live(size, cache, excluded, work, have_wrapper, compare, reps):
    """One size of the live section: (size, file bytes, contenders, server facts)."""
    pods_file, events_file, tally = snapshot(size, cache)
    expected = expected_counts(tally, set(excluded))
    total = sum(counts["total"] for counts in tally.values())
    text_golden = subprocess.run([CHECKER, "check", "--snapshot", pods_file, "--events", events_file],
                                 capture_output=True, env=dict(os.environ, NO_COLOR="1")).stdout
    kubeconfigs = {"plain": os.path.join(work, f"kubeconfig-{size}"),
                   "exec": os.path.join(work, f"kubeconfig-{size}-exec")}
    servers = [replay.Server(pods_file, events_file, kubeconfigs["plain"]),
               replay.Server(pods_file, events_file, kubeconfigs["exec"], tls_exec=True)]
    try:
        kubeconfigs["token"] = replay.token_kubeconfig(kubeconfigs["exec"], os.path.join(work, f"kubeconfig-{size}-token"))
        env = dict(driver_env(work), KWOK_VERIFY_PODS_DEADLINE="0")
        report_program = os.path.join(work, "report.jq")
        with open(report_program, "wb") as f:
            f.write(subprocess.run([CHECKER, "programs", "report"], check=True, capture_output=True).stdout)
        jq_argv = jq_command("report", report_program, report_values(excluded))
        pages = replay.download_pages(kubeconfigs["plain"], env, os.path.join(work, f"pages-{size}.json"))
        served_text = replay.served_text(CHECKER, pages, events_file)
        wrappers = (WRAPPER, live.ojson_wrapper(cache)) if have_wrapper else None
        runs = [Live("checker offline", "checker offline (`--snapshot F --events E`), same pods",
                          [CHECKER, "check", "--snapshot", pods_file, "--events", events_file, "--format", "json"],
                          env, json_counts(expected))]
        runs += live.contenders(work, CHECKER, wrappers, kubeconfigs, env, expected, (served_text, text_golden),
                                total, (jq_argv, pages), compare)
        for rep in range(reps):
            for c in runs:
                if not c.due():
                    continue
                c.run(work)
                if c.failed and c.once:
                    # A baseline that breaks is a result (reported), not a bench failure.
                    print(f"  {c.key:<24} run {rep + 1}: FAILED {c.failed}", flush=True)
                    continue
                if c.failed:
                    fail(f"live {size}: {c.label}: {c.failed}")
                print(f"  {c.key:<24} run {rep + 1}: {c.walls[-1]:7.2f} s  cpu {c.cpus[-1]:7.2f} s  tree "
                      f"{mb(c.tree[-1]):8,.0f} MB  single {mb(c.single[-1]):8,.0f} MB  load {load():.1f}", flush=True)
        os.unlink(pages)
        server = {"load": servers[0].load_seconds, "rss": servers[0].rss()}
    finally:
        for s in servers:
            s.stop()
    return size, os.path.getsize(pods_file), runs, server


def live_targets(size, file_bytes, by):
    """Issue 14's targets, computed from one size's live run (medians)."""
    by = {key: c for key, c in by.items() if c.walls}  # a failed baseline has no figures
    med = {key: statistics.median(c.walls) for key, c in by.items()}
    cpu = {key: statistics.median(c.cpus) for key, c in by.items()}
    tag = "" if size >= 50_000 else " (the targets are set at 50k and 150k)"
    pods = f"{size:,}"
    lines = [ratio_line(f"{pods}: checker live / checker offline{tag}",
                        f"{med['checker live'] / med['checker offline']:.2f}x", "<= 2x",
                        med["checker live"] <= 2 * med["checker offline"])]
    if "kubectl -o json" in med:
        speedup = med["kubectl -o json"] / med["checker live"]
        lines.append(ratio_line(f"{pods}: `kubectl -o json` alone / checker live{tag}", f"{speedup:.0f}x faster",
                                ">= 10x", speedup >= 10))
    else:
        lines.append(f"| {pods}: `kubectl -o json` alone / checker live | kubectl -o json failed | >= 10x | |")
    for key, who in (("checker live", "checker live"), ("generated live", "generated bash live")):
        if key in by:
            lean = max(by[key].tree) / file_bytes
            lines.append(ratio_line(f"{pods}: {who} tree peak RSS / `-o json` size{tag}", f"{100 * lean:.0f} %",
                                    "<= 25 %", lean <= 0.25))
    if "generated live" in by:
        floor = med["jq pass"] + med["raw 0"]
        over = med["generated live"] / floor
        over_cpu = cpu["generated live"] / (cpu["jq pass"] + cpu["raw 0"])
        lines.append(ratio_line(f"{pods}: generated bash live / (its jq pass + the raw download){tag}",
                                f"{over:.2f}x ({med['generated live']:.2f} s / {floor:.2f} s; CPU {over_cpu:.2f}x)",
                                "<= 1.3x", over <= 1.3))
    plugin = med["checker live exec"] - med["checker live token"]
    lines.append(ratio_line(f"{pods}: what a {replay.PLUGIN_MS} ms exec plugin adds to the checker live (exec - token)",
                            f"{plugin:+.2f} s", "<= 1 s (set at 150k)", plugin <= 1))
    # The previous `-o json` path of each driver: for comparison, no target (the
    # checker's is the build of live.OJSON_COMMIT, given as --compare ojson=BINARY).
    for new, old, who in (("checker live", "checker live@ojson", "checker"),
                          ("generated live", "generated live -o json", "generated bash")):
        if new in by and old in by:
            lines.append(f"| {pods}: {who}, previous `-o json` path / raw pages (1 run) | "
                         f"{med[old] / med[new]:.1f}x slower, {max(by[old].tree) / max(by[new].tree):.1f}x the tree peak RSS | "
                         "(comparison) | |")
    return lines


def live_markdown(results, info, argv, reps, loads):
    lines = [
        LIVE_BEGIN,
        "",
        f"Measured {info['date']} with `{argv}` ({reps} repetition(s), the `-o json` contenders 1; median wall "
        "time; CPU = user + system, children included, median; peak RSS = max over the repetitions). The "
        "replay server (target/release/replay-server) serves the snapshot; kubectl is the real one on PATH; "
        "the drivers run at their default chunk size (0: one request). "
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram']} RAM; {info['jq']}. "
        f"Load average (1 min) before/after: {loads[0]:.1f} / {loads[1]:.1f}.",
        "",
        "| pods | `-o json` file | contender | median | runs (s) | CPU | tree peak RSS | largest process | tree / file |",
        "|---:|---:|---|---:|---|---:|---:|---:|---:|",
    ]
    for size, file_bytes, runs, _ in results:
        for c in runs:
            if not c.walls:
                lines.append(f"| {size:,} | {mb(file_bytes):,.0f} MB | {c.label} | **failed** | {c.failed} | | | | |")
                continue
            walls = ", ".join(f"{w:.2f}" for w in c.walls)
            tree = max(c.tree)
            lines.append(f"| {size:,} | {mb(file_bytes):,.0f} MB | {c.label} | {statistics.median(c.walls):.2f} s | "
                         f"{walls} | {statistics.median(c.cpus):.2f} s | {mb(tree):,.0f} MB | "
                         f"{mb(max(c.single)):,.0f} MB | {100 * tree / file_bytes:.0f} % |")
    lines += ["", "| pods | replay server: load | RSS serving | peak RSS |", "|---:|---:|---:|---:|"]
    for size, _, _, server in results:
        rss, hwm = server["rss"]
        lines.append(f"| {size:,} | {server['load']:.1f} s | {mb(rss):,.0f} MB | {mb(hwm):,.0f} MB |")
    lines += ["", "| target | measured | wanted | |", "|---|---|---|---|"]
    for size, file_bytes, runs, _ in results:
        lines += live_targets(size, file_bytes, {c.key: c for c in runs})
    lines += ["", LIVE_END]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", action="store_true", help="add the 150k-pod snapshot (~1.8 GB; jq needs ~6 GB RAM)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per contender (default 3)")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",") if x], help="pod counts, e.g. 1000,10000 ('' for none)")
    parser.add_argument("--escape-sizes", type=lambda s: [int(x) for x in s.split(",") if x], default=[10000, 50000],
                        help="pod counts of the snapshots with kubectl's escapes (default 10000,50000; '' for none)")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave BENCHMARKS.md alone")
    parser.add_argument("--only", type=lambda s: s.split(","), metavar="KEYS",
                        help="measure only these contenders (checker,jq,generated,postfix,cat; implies --no-write)")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=BINARY",
                        help="also measure another verify-pods build (repeatable)")
    parser.add_argument("--live-sizes", type=lambda s: [int(x) for x in s.split(",") if x],
                        help="pod counts of the live section (default 10000,50000, 150000 with --big; '' for none)")
    parser.add_argument("--live-reps", type=int, default=1, help="repetitions per live contender (default 1; the -o json ones run once)")
    args = parser.parse_args()
    live_sizes = args.live_sizes if args.live_sizes is not None else [10000, 50000] + ([150000] if args.big else [])
    sizes = args.sizes if args.sizes is not None else [1000, 10000, 50000] + ([150000] if args.big else [])
    snapshots = [(size, "plain") for size in sizes]
    snapshots += [(size, variant) for size in args.escape_sizes for variant in ESCAPE_VARIANTS]
    if not os.access(CHECKER, os.X_OK):
        fail(f"{CHECKER} is missing: cargo build --release -p verify-pods (make bench does it)")
    for tool in ("jq", "bash", "cat"):
        if shutil.which(tool) is None:
            fail(f"{tool} not found on PATH")
    if not HAVE_TIME:
        print("bench: /usr/bin/time is missing (apt-get install time); peak RSS from wait4 includes the forked Python", file=sys.stderr)
    have_wrapper = os.path.exists(WRAPPER)
    if not have_wrapper:
        print(f"bench: {WRAPPER} does not exist yet; the generated bash is not measured", file=sys.stderr)
    compare = []
    for item in args.compare:
        label, _, binary = item.partition("=")
        if not label or not os.access(binary, os.X_OK):
            fail(f"--compare {item}: expected LABEL=EXECUTABLE")
        compare.append((label, os.path.abspath(binary)))
    excluded = excluded_namespaces()
    cache = cache_dir()
    info = machine()
    command = "python3 bench/run.py " + shlex.join(sys.argv[1:])
    loads = [load()]
    results = []
    with tempfile.TemporaryDirectory(prefix="verify-pods-bench-") as work:
        for size, variant in snapshots:
            label = VARIANTS[variant][0]
            print(f"{size} pods {label}:", flush=True)
            pods_file, events_file, tally = snapshot(size, cache, variant)
            file_bytes = os.path.getsize(pods_file)
            expected = expected_counts(tally, set(excluded))
            text_golden = subprocess.run(
                [CHECKER, "check", "--snapshot", pods_file, "--events", events_file],
                capture_output=True, env=dict(os.environ, NO_COLOR="1"),
            ).stdout
            runs = contenders(pods_file, events_file, excluded, work, have_wrapper, compare)
            if args.only:
                runs = [c for c in runs if c.key.split("@")[0] in args.only + ["checker"]]
            if variant != "plain":
                runs = [c for c in runs if c.key != "postfix"]
            subprocess.run(["cat", pods_file], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
            # Round-robin, so that a burst of load on the machine hits every contender alike.
            for rep in range(args.reps):
                for c in runs:
                    if c.failed:
                        continue
                    c.run()
                    if c.failed:
                        print(f"  {c.key:<10} run {rep + 1}: FAILED {c.failed}", flush=True)
                    else:
                        print(f"  {c.key:<10} run {rep + 1}: {c.walls[-1]:7.2f} s  {mb(c.rss[-1]):8,.0f} MB", flush=True)
            check_results(runs, expected, text_golden)
            for c in runs:
                c.outputs = []  # the outputs of 150k runs are large
            # The same pods as `kubectl get pods -A -o json` prints them.
            json_bytes = os.path.getsize(snapshot(size, cache, KUBECTL_FORM.get(variant, variant))[0])
            results.append((size, label, file_bytes, runs, json_bytes))
    loads.append(load())
    if results:
        section = report_markdown(results, info, command, args.reps, loads)
        print()
        print(section)
        if not args.no_write and not args.only:
            write_benchmarks(section)
            print(f"\nwritten to {BENCHMARKS}")
    if live_sizes:
        if not os.access(SERVER, os.X_OK) or shutil.which("kubectl") is None:
            fail(f"the live section needs {SERVER} (make build) and kubectl on PATH")
        live_loads = [load()]
        live_results = []
        with tempfile.TemporaryDirectory(prefix="verify-pods-bench-live-") as work:
            for size in live_sizes:
                print(f"live, {size} pods:", flush=True)
                live_results.append(run_live(size, cache, excluded, work, have_wrapper, compare, args.live_reps))
        live_loads.append(load())
        section = live_markdown(live_results, info, command, args.live_reps, live_loads)
        print()
        print(section)
        if not args.no_write and not args.only:
            write_benchmarks(section, LIVE_BEGIN, LIVE_END)
            print(f"\nwritten to {BENCHMARKS}")


if __name__ == "__main__":
    main()
