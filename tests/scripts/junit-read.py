"""Read a JUnit XML file with junitparser (PyPI), as GitLab-like consumers
do, and print what it found as one JSON object: the suites, and each case's
classname, name, time and result ({"type": "failure"|"error"|..., "message",
"text"}, none when it passed). Usage: python3 junit-read.py FILE."""
import json
import sys

from junitparser import JUnitXml, TestSuite

xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = {"suites": []}
for suite in suites:
    cases = []
    for case in suite:
        results = [{"type": r._tag, "message": r.message, "text": r.text} for r in case.result]
        cases.append({"classname": case.classname, "name": case.name, "time": case.time, "results": results})
    out["suites"].append({"name": suite.name, "tests": suite.tests, "failures": suite.failures,
                          "errors": suite.errors, "cases": cases})
print(json.dumps(out))
