# ctrf.jq: the check as CI test results, in the Common Test Report Format
# (CTRF, https://ctrf.io; `--ctrf FILE`, and junit.jq's input).
#
# Input:     the result of result.jq; null when the check could not
#            observe (exit 2), then $why says why.
# Variables: $list_limit  the list limit (number): a failed test's message
#                         names at most N groups of its pods by cause and
#                         N pods of each; 0, every pod.
#            $why         the error line (without the driver's prefix) of a
#                         check that could not observe; "" otherwise.
#            $version     the tool's version.
#            $timestamp   when the check began (RFC 3339, UTC).
#            $start_ms    when the check began, $stop_ms when it decided or
#            $stop_ms     gave up: milliseconds since the Unix epoch.
# Output:    one CTRF report (the official schema, ctrf-schema-0.0.json:
#            extensions only under `extra`, keys namespaced `verify-pods.`).
#
# The tests: one per namespace with counted pods or with pods not yet
# created (workloads.jq's missing_workloads: a namespace whose workloads
# made no pod yet still gets its test), named `pods/NAMESPACE`, `failed`
# when it has unscheduled or failed pods or pods not yet created (the
# message: its pods by cause, as the text's digest, then its workloads
# missing pods, as the text's group), `passed` otherwise; a failure that
# no namespace holds (a selection that selects no pod) has one test `pods`,
# status `failed`; a check that could not observe has one test `pods`,
# status `other`, its message the error.
# Every test lasted the whole check: each was decided by the same state.

# lib.jq (text, phrase, pods_count, unscheduled_cause, failed_cause,
# and_more, groups_left) comes first: the drivers put it in front.

# Input: result.jq's groups. {JSON of a group's key: its index}: the key
# of a pod is matched against it as lib.jq's unscheduled_members and
# failed_members match pods to groups.
def group_index(key):
  . as $groups
  | reduce range(0; $groups | length) as $i ({}; . + {($groups[$i] | key | tojson): $i});

# Input: the pods of one namespace. Their groups, in result.jq's order
# (largest first across the cluster): [{count, reason, message, pods}].
def namespace_groups($groups; $index; key):
  map({i: $index[key | tojson], pod: .})
  | group_by(.i)
  | map($groups[.[0].i] + {count: length, pods: map(.pod)});

# Input: a namespace's groups. The digest's lines for them: a line per
# group (at most $list_limit), its first pods, and what is left out.
def digest($what; cause):
  (if $list_limit == 0 then . else .[:$list_limit] end) as $shown
  | ($shown[]
     | "\(.count) \($what): \(cause)",
       ((if $list_limit == 0 then .pods else .pods[:$list_limit] end)[]
        | "  \(.namespace | phrase)/\(.name | phrase)"),
       (and_more(.count; if $list_limit == 0 then .count else [.count, $list_limit] | min end)
        | select(. != "") | "  " + .)),
    (if $list_limit == 0 then empty else groups_left($list_limit) | select(. != "") end);

def lines_joined: reduce .[1:][] as $line (.[0] // ""; . + "\n" + $line);

def ctrf_tests:
  if . == null then
    [{name: "pods", status: "other", duration: ($stop_ms - $start_ms), message: $why}]
  else
    . as $result
    | (.unscheduled_groups | group_index([.reason, .message])) as $unscheduled_index
    | (.failed_groups | group_index(.reason)) as $failed_index
    | (reduce (.unscheduled_pods | group_by(.namespace)[]) as $pods
         ({}; . + {($pods[0].namespace | tojson): $pods})) as $unscheduled
    | (reduce (.failed_pods | group_by(.namespace)[]) as $pods
         ({}; . + {($pods[0].namespace | tojson): $pods})) as $failed
    | ((.missing_workloads // []) | group_by(.namespace)) as $missing_by_namespace
    | (reduce $missing_by_namespace[] as $workloads
         ({}; . + {($workloads[0].namespace | tojson): $workloads})) as $missing
    # The namespaces with counted pods, and those with workloads missing
    # pods (0 counted pods when none), by name.
    | ([.namespaces[]] + [$missing_by_namespace[] | {namespace: .[0].namespace, pods: 0}]
       | group_by(.namespace)
       | map({namespace: .[0].namespace, pods: (map(.pods) | add)})) as $namespaces
    | [ $namespaces[]
        | (.namespace | tojson) as $key
        | .pods as $pods
        | ($unscheduled[$key] // []) as $u
        | ($failed[$key] // []) as $f
        | ($missing[$key] // []) as $m
        | ($m | map((.wanted // .created + 1) - .created) | add // 0) as $not_created
        | {name: "pods/\(.namespace | phrase)",
           status: (if $u == [] and $f == [] and $m == [] then "passed" else "failed" end),
           pods: .pods, unscheduled: ($u | length), failed: ($f | length), missing: $not_created,
           lines: ((if $u == [] and $f == [] then []
                    else
                      [[(if $u == [] then empty else "\($u | length) unscheduled" end),
                        (if $f == [] then empty else "\($f | length) failed" end)]
                       | reduce .[1:][] as $term (.[0]; . + " and " + $term)
                       | . + " of \($pods | pods_count)"]
                      + [$u
                         | namespace_groups($result.unscheduled_groups; $unscheduled_index;
                                            [.reason, .message])
                         | digest("unscheduled"; unscheduled_cause(phrase))]
                      + [$f | namespace_groups($result.failed_groups; $failed_index; .reason)
                         | digest("failed"; failed_cause(phrase))]
                    end)
                   # Its workloads missing pods, as the text's group.
                   + (if $m == [] then []
                      else
                        [{missing: $not_created, missing_workloads: $m}
                         | "\(missing_heading):",
                           (missing_shown($list_limit)[] | "  \(workload_line)"),
                           (and_more($m | length; missing_shown($list_limit) | length)
                            | select(. != "") | "  " + .)]
                      end))}
        | {name, status, duration: ($stop_ms - $start_ms)}
          + (if .lines == [] then {} else {message: (.lines | lines_joined)} end)
          + {extra: {"verify-pods.pods": .pods, "verify-pods.unscheduled": .unscheduled,
                     "verify-pods.failed": .failed, "verify-pods.missing": .missing}} ]
    # A failure no namespace's test holds (a selection that selects no pod)
    # is one failed test `pods`: a failed check never reads `failed: 0`.
    | if $result.verdict == "fail" and all(.[]; .status != "failed") then
        . + [{name: "pods", status: "failed", duration: ($stop_ms - $start_ms),
              message: ($result | verdict_message)}]
      else . end
  end;

def count($tests; $status): [$tests[] | select(.status == $status)] | length;

. as $result
| ctrf_tests as $tests
| {
    reportFormat: "CTRF",
    specVersion: "0.0.0",
    timestamp: $timestamp,
    generatedBy: "verify-pods",
    results: {
      tool: {name: "verify-pods", version: $version},
      summary: {
        tests: ($tests | length),
        passed: count($tests; "passed"),
        failed: count($tests; "failed"),
        skipped: 0,
        pending: 0,
        other: count($tests; "other"),
        start: $start_ms,
        stop: $stop_ms
      },
      tests: $tests,
      extra: (if $result == null then {"verify-pods.verdict": null}
              else {"verify-pods.verdict": $result.verdict,
                    "verify-pods.resource_version": $result.resource_version,
                    "verify-pods.attempts": $result.attempts,
                    "verify-pods.waited_seconds": $result.waited_seconds,
                    "verify-pods.list_limit": $list_limit}
              end)
    }
  }
