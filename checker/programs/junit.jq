# junit.jq: a CTRF report of ctrf.jq as JUnit XML (`--junit FILE`), the
# format GitLab (artifacts:reports:junit) and the JUnit reporter actions read.
#
# Input:  the CTRF report of ctrf.jq. Output: raw lines (`jq -r`), the
#         XML document. No variables: every test, time and word comes from
#         the report, so the CTRF and JUnit files of one check agree.
#
# One <testsuites>, one <testsuite name="verify-pods">, a <testcase> per
# test: a CTRF name `pods/NAMESPACE` is classname="pods" name="NAMESPACE"
# (GitLab shows the classname as the suite); a `failed` test holds a
# <failure>, an `other` one an <error> (the check could not observe), each
# with the message's first line as its message attribute and the whole
# message as its text. Times are seconds with three decimals.

# Text as XML character data or an attribute value: the five markup
# characters as entities; a control character XML 1.0 cannot carry (all of
# C0 but tab, newline and carriage return; U+FFFE, U+FFFF) as a space.
def xml:
  text
  | [ explode[]
      | if . == 38 then "&amp;"
        elif . == 60 then "&lt;"
        elif . == 62 then "&gt;"
        elif . == 34 then "&quot;"
        elif . == 39 then "&apos;"
        elif (. < 32 and . != 9 and . != 10 and . != 13) or . == 65534 or . == 65535 then " "
        else [.] | implode end ]
  | add // "";

# Milliseconds as seconds with three decimals ("1.005"), without division.
def seconds:
  tostring | (if length < 4 then ("0000" + .)[-4:] else . end) | .[:-3] + "." + .[-3:];

def first_line: text | split("\n") | .[0] // "";

.results as $results
| $results.summary as $summary
| ($summary.stop - $summary.start | seconds) as $time
| ($summary.failed | tostring) as $failures
| ($summary.other | tostring) as $errors
| ($summary.skipped + $summary.pending) as $skipped
| ("tests=\"\($summary.tests)\" failures=\"\($failures)\" errors=\"\($errors)\""
   + " skipped=\"\($skipped)\" time=\"\($time)\"") as $counts
| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
  "<testsuites name=\"verify-pods\" \($counts)>",
  "  <testsuite name=\"verify-pods\" \($counts) timestamp=\"\(.timestamp | xml)\">",
  ( $results.tests[]
    | (.name | split("/") | .[0]) as $class
    | [$class, if .name == $class then $class else .name[($class | length) + 1:] end] as $names
    | (if .status == "passed" then "/" else "" end) as $ends_here
    | "    <testcase classname=\"\($names[0] | xml)\" name=\"\($names[1] | xml)\""
      + " time=\"\(.duration | seconds)\"\($ends_here)>",
      ( if .status == "passed" then empty
        else
          (if .status == "failed" then "failure" else "error" end) as $element
          | "      <\($element) message=\"\(.message | first_line | xml)\" type=\"\(.status)\">"
            + "\(.message | xml)</\($element)>",
            "    </testcase>"
        end ) ),
  "  </testsuite>",
  "</testsuites>"
