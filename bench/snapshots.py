"""The synthetic snapshots of the bench (bench/gen.py), generated once into the
cache, and the counts the generator tallied."""

import json
import os
import time

import gen
from common import COUNTS, ROOT

def generator_version():
    """Cached files are reused only when gen.py has not changed."""
    import hashlib

    with open(os.path.join(ROOT, "bench", "gen.py"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


# name: (label in the table, gen.generate keywords)
VARIANTS = {
    "plain": ("", {}),
    "escapes": ("escapes 30 %", {"escapes": "some"}),
    "escapes-every": ("escapes 100 %", {"escapes": "every"}),
    "escapes-compact": ("escapes 100 %, compact", {"escapes": "every", "compact": True}),
}
ESCAPE_VARIANTS = ["escapes", "escapes-every", "escapes-compact"]
# A compact variant and the variant holding the same pods as kubectl prints
# them (`kubectl get pods -A -o json`, indented). Memory is measured against
# that size: the projected pods weigh the same however the file is indented,
# so no ratio to a file without whitespace can stay at 25 %; issue 14's live
# targets use the same `-o json` reference.
KUBECTL_FORM = {"escapes-compact": "escapes-every"}


def snapshot(pods, cache, variant="plain"):
    """(pods file, events file, tally) for `pods` pods, generated once."""
    version = generator_version()
    suffix = "" if variant == "plain" else f"-{variant}"
    stem = os.path.join(cache, f"pods-{pods}{suffix}-{version}")
    files = (stem + ".json", stem + "-events.json", stem + "-tally.json")
    if not all(os.path.exists(f) for f in files):
        started = time.perf_counter()
        tally = gen.generate(pods, files[0], files[1], **VARIANTS[variant][1])
        with open(files[2], "w", encoding="utf-8") as f:
            json.dump(tally, f)
        took = time.perf_counter() - started
        print(f"  generated {pods} pods in {took:.1f}s: {files[0]}", flush=True)
    with open(files[2], encoding="utf-8") as f:
        return files[0], files[1], json.load(f)


def expected_counts(tally, excluded):
    """What the generator wrote, outside the excluded namespaces."""
    sums = dict.fromkeys(COUNTS, 0)
    for ns, counts in tally.items():
        if ns in excluded:
            continue
        sums["total"] += counts["total"]
        sums["running"] += counts["Running"]
        sums["pending"] += counts["Pending"]
        sums["failed"] += counts["Failed"]
        sums["succeeded"] += counts["Succeeded"]
        sums["unscheduled"] += counts["unscheduled"]
    return sums
