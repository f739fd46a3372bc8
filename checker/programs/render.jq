# render.jq: the human text of a result, as lines "LEVEL<TAB>TEXT".
#
# Input:  the result of result.jq. Output: raw strings (`jq -r`).
# Variables: $list_limit  the list limit (number): with N > 0 the text is a
#            digest of a bounded number of lines (at most N groups of at most
#            N pods each, at most N nodes); 0 lists every pod and node.
# LEVEL is info, warn or error; the bash function hands TEXT to log_LEVEL and
# the checker prints TEXT. Every word a user reads comes from here.

# Shared definitions (phrase, parts_joined, status_counts, verdict_message,
# the headings) come from lib.jq, which the drivers put in front of this file.

# A line is made one line once, as a whole: one_line maps each code point on
# its own, so that equals mapping every field, and runs once a line instead
# of once a field.
def line($level): "\($level)\t\(phrase)";
def pod_ref: "\(.namespace)/\(.name)";
# "  ns/name: PART: PART" with the parts that are not blank (line() makes
# them one line: trim_end treats a hidden control as blank, as one_line
# would make it a space).
def pod_line($parts): "  \(pod_ref)" + (parts_joined(trim_end; $parts) | if . == "" then "" else ": " + . end);
# The pods listed under a group of $count, then what is left out.
# Each pod's message only when the group has none of its own ($messages).
def group_pods($members; $count; $messages):
  ($members[] | "  " + pod_line(if $messages then [.message] else [] end) | line("error")),
  (and_more($count; $members | length) | select(. != "") | "    \(.)" | line("error"));

# Upstream's banner: a line of `=` above and below its words.
def failure_banner:
  "============================================================" as $rule
  | [$rule, "Scheduling validation FAILED", $rule];

# The status line names the resourceVersion its counts were read at (the
# verdict's state: the list's, or the watch's after the last event applied),
# so a red CI log says which state of the cluster it judged, after the group
# `verify-pods triage` reads. Unknown (a `kubectl get -o json` List has none),
# nothing is added: "unknown" would be noise on every offline check of a
# kubectl List, and the person who passed the file knows where it came from.
("Pod status: \(status_counts) (attempts=\(.attempts), waited=\(.waited_seconds)s)"
 + (if .resource_version == null then "" else " at resourceVersion \(.resource_version)" end)
 | line("info"))
,
(if (.distribution | length) == 0 then empty
 elif $list_limit > 0 and (node_figures | .nodes > $list_limit) then
   # More nodes than the limit: one summary line, then the N busiest.
   (node_figures
    | ("Pod distribution by node: \(node_summary); the \($list_limit) with the most pods:" | line("info")),
      (.most[:$list_limit][] | "  \(.node): \(.pods)" | line("info")))
 else
   ("Pod distribution by node:" | line("info")),
   (.distribution[] | "  \(.node): \(.pods)" | line("info"))
 end)
,
# A failure opens with upstream verify_pods()'s banner and counts, in its
# words (CI logs are grepped for them); our lists, causes and events follow.
(if .verdict == "fail" then
   (failure_banner[] | line("error")),
   (if .unscheduled > 0 then "\(.unscheduled) pods could not be scheduled to nodes" | line("error") else empty end),
   (if .failed > 0 then "\(.failed) pods are in Failed state" | line("error") else empty end)
 else empty end)
,
(if .unscheduled > 0 then
   ("\(unscheduled_heading):" | line("error")),
   (if $list_limit == 0 then
      # The scheduler's reason and message (PodScheduled=False), when it gave one.
      (.unscheduled_pods[] | pod_line([.reason, .message]) | line("error"))
    else
      # The digest: a line per cause, then its first pods.
      . as $result
      | (.unscheduled_groups[:$list_limit][]
         | ("  \(.count | pods_count): \(unscheduled_cause(trim_end))" | line("error")),
           (. as $group | group_pods($result | unscheduled_members($group; $list_limit); .count; false))),
        (.unscheduled_groups | groups_left($list_limit) | select(. != "") | "  \(.)" | line("error"))
    end),
   (if (.events | length) == 0 then
      (events_missing_note | line("warn"))
    else
      ("\(events_heading):" | line("error")),
      (.events[] | "  \(.last_seen) \(.namespace)/\(.pod) (x\(.count)): \(.message | trim_end)" | line("error"))
    end)
 else empty end)
,
(if .failed > 0 then
   ("\(failed_heading):" | line("error")),
   (if $list_limit == 0 then
      (.failed_pods[] | pod_line([.reason, .message]) | line("error"))
    else
      . as $result
      | (.failed_groups[:$list_limit][]
         | ("  \(.count | pods_count): \(failed_cause(trim_end))" | line("error")),
           # The pods of a group whose messages differ each say theirs.
           (. as $group
            | group_pods($result | failed_members($group; $list_limit); .count; .message == null))),
        (.failed_groups | groups_left($list_limit) | select(. != "") | "  \(.)" | line("error"))
    end)
 else empty end)
,
# Issue 30: the workloads whose pods are not all created yet, the first N.
(if (.missing // 0) > 0 then
   ("\(missing_heading):" | line("error")),
   (missing_shown($list_limit)[] | "  \(workload_line)" | line("error")),
   (and_more(.missing_workloads | length; missing_shown($list_limit) | length)
    | select(. != "") | "  \(.)" | line("error"))
 else empty end)
,
((if .verdict == "pass" then "info" elif .verdict == "empty" then "warn" else "error" end) as $level
 | verdict_message | line($level))
