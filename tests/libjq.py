#!/usr/bin/env python3
"""Run jq programs with libjq 1.8 (the PyPI `jq` module) like the jq CLI would.

    python3 tests/libjq.py [-c] [-r] [--slurp] [--arg NAME TEXT]
                           [--argjson NAME JSON] [--slurpfile NAME FILE]
                           PROGRAM [INPUT]
    python3 tests/libjq.py --batch < runs.json

The parity tests compare this with jq 1.6 and the embedded jaq, so every byte
printed comes from libjq itself, never from Python's json module: each output
goes through jq's own `tojson` (jq -c's compact form), `--argjson` and
`--slurpfile` values are parsed by jq's own `fromjson`, so number literals and
key order are exactly what libjq makes of them. With -r, string outputs are
printed raw (decoded from jq's own escaping). With --slurp, libjq's own parser
reads every document of the input into one array, as `jq --slurp` does.

--batch reads a JSON array of argument lists (as above) on stdin and prints a
JSON array of {"status", "stdout", "stderr"}: one Python start for many runs.
Exit status as jq's: 0 ok, 2 usage, 3 compile error, 5 runtime error.
"""

import json
import sys

import jq


class Usage(Exception):
    pass


def parse(argv):
    opts = {"raw": False, "slurp": False, "args": {}, "binds": [], "positional": []}
    it = iter(argv)
    for a in it:
        if a == "-c":
            pass  # outputs are always compact: they come from `tojson`
        elif a == "-r":
            opts["raw"] = True
        elif a in ("-s", "--slurp"):
            opts["slurp"] = True
        elif a in ("--arg", "--argjson", "--slurpfile"):
            try:
                name, value = next(it), next(it)
            except StopIteration:
                raise Usage(f"{a} needs a name and a value")
            bind(opts, a, name, value)
        elif a.startswith("-") and a != "-":
            raise Usage(f"unsupported option {a}")
        else:
            opts["positional"].append(a)
    if not 1 <= len(opts["positional"]) <= 2:
        raise Usage("expected PROGRAM [INPUT]")
    return opts


def bind(opts, flag, name, value):
    """$name as jq binds it, with the JSON text parsed by jq's fromjson."""
    hidden = f"__libjq_{len(opts['args'])}"
    if flag == "--arg":
        opts["args"][name] = value
        return
    if flag == "--argjson":
        opts["args"][hidden] = value
    else:  # --slurpfile: every document of the file, in an array
        with open(value, encoding="utf-8") as f:
            docs = jq.compile("tojson").input_text(f.read()).all()
        opts["args"][hidden] = "[" + ",".join(docs) + "]"
    opts["binds"].append(f"(${hidden} | fromjson) as ${name} | ")


def run(argv):
    """(status, stdout, stderr) of one jq-like invocation."""
    try:
        opts = parse(argv)
    except (Usage, OSError, ValueError) as e:
        return 2, "", f"libjq.py: {e}\n"
    program, *input_file = opts["positional"]
    text = "".join(opts["binds"]) + "(\n" + program + "\n) | tojson"
    try:
        compiled = jq.compile(text, args=opts["args"])
    except ValueError as e:
        return 3, "", f"{e}\n"
    try:
        if input_file:
            with open(input_file[0], encoding="utf-8") as f:
                data = f.read()
        else:
            data = sys.stdin.read()
        outputs = compiled.input_text(data, slurp=opts["slurp"]).all()
    except (ValueError, OSError) as e:
        return 5, "", f"jq: error: {e}\n"
    lines = [json.loads(o) if opts["raw"] and o.startswith('"') else o for o in outputs]
    return 0, "".join(line + "\n" for line in lines), ""


def main():
    if sys.argv[1:] == ["--batch"]:
        runs = json.load(sys.stdin)
        results = [dict(zip(("status", "stdout", "stderr"), run(argv))) for argv in runs]
        json.dump(results, sys.stdout)
        return 0
    status, out, err = run(sys.argv[1:])
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main())
