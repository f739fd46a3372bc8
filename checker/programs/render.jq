# render.jq: the human text of a result, as lines "LEVEL<TAB>TEXT".
#
# Input:  the result of result.jq. Output: raw strings (`jq -r`).
# Variables: $list_limit  the list limit (number): with N > 0 the text is a
#            digest of a bounded number of lines (at most N groups of at most
#            N pods each, at most N nodes); 0 lists every pod and node.
#            $namespaces, $selector  the selection (`-n`, `-l`), as report.jq
#            got it: a selection that selects no pod is named in one line.
# LEVEL is info, warn, error or plain; the bash function hands TEXT to
# log_LEVEL (plain: printf, on stdout) and the checker prints TEXT. A line
# upstream's verify_pods() prints through log_info, log_warn or log_error
# has that level (the banner's rules and blank line too); one it echoes (the
# node and pod entries, the events) and our new lines (groups, the closing
# line) are plain. Every word a user reads comes from here.

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
def pod_line($parts):
  "  \(pod_ref)" + (parts_joined(trim_end; $parts) | if . == "" then "" else ": " + . end);
# The pods listed under a group of $count, then what is left out.
# Each pod's message only when the group has none of its own ($messages).
def group_pods($members; $count; $messages):
  ($members[] | "  " + pod_line(if $messages then [.message] else [] end) | line("plain")),
  (and_more($count; $members | length) | select(. != "") | "    \(.)" | line("plain"));

# Upstream's banner, as it prints it, each line through log_error: a rule
# of 42 `=`, its words, the rule again; its counts follow, then a blank
# line, and the same rule closes the failure.
def rule: "==========================================" | line("error");
def failure_banner: rule, ("Scheduling validation FAILED" | line("error")), rule;

# The selection that selected no pod, as the user wrote it: "in namespace
# nosuchns", "matching the label selector app=typo", or both.
def selection_named:
  ($namespaces | split(",") - [""]) as $names
  | [ (if $names == [] then empty
       else "in namespace\(if ($names | length) > 1 then "s" else "" end) \($names[0])"
            + ($names[1:] | map(", " + .) | add // "")
       end),
      (if $selector == "" then empty else "matching the label selector \($selector)" end) ]
  | map(" " + .) | add // "";

# The order: the verdict first, the evidence after. The status
# line; for a failure upstream's banner and counts; the unscheduled groups;
# the failed groups; then what explains them (the excused pods, the events,
# the node distribution); last the verdict's sentence. The lines CI logs are
# grepped for keep their words.

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
# A failure opens with upstream verify_pods()'s banner and counts, in its
# words (CI logs are grepped for them); our lists, causes and events follow.
(if .verdict == "fail" then
   failure_banner,
   (if .unscheduled > 0 then
      "\(.unscheduled) pods could not be scheduled to nodes" | line("error")
    else empty end),
   (if .failed > 0 then "\(.failed) pods are in Failed state" | line("error") else empty end),
   ("" | line("error"))
 else empty end)
,
# A selection that selects no pod: a failure (report.jq), said as
# `kubectl get` says it, naming the selection (its typo shows).
(if .total == 0 and .verdict == "fail" then
   selection_named | select(. != "") | "No pods found\(.)" | line("error")
 else empty end)
,
(if .unscheduled > 0 then
   ("\(unscheduled_heading):" | line("error")),
   (if $list_limit == 0 then
      # The scheduler's reason and message (PodScheduled=False), when it gave one.
      (.unscheduled_pods[] | pod_line([.reason, .message]) | line("plain"))
    else
      # The digest: a line per cause, then its first pods.
      . as $result
      | (.unscheduled_groups[:$list_limit][]
         | ("  \(.count | pods_count): \(unscheduled_cause(trim_end))" | line("plain")),
           (. as $group
            | group_pods($result | unscheduled_members($group; $list_limit); .count; false))),
        (.unscheduled_groups
         | groups_left($list_limit) | select(. != "") | "  \(.)" | line("plain"))
    end)
 else empty end)
,
(if .failed > 0 then
   ("\(failed_heading):" | line("error")),
   (if $list_limit == 0 then
      (.failed_pods[] | pod_line([.reason, .message]) | line("plain"))
    else
      . as $result
      | (.failed_groups[:$list_limit][]
         | ("  \(.count | pods_count): \(failed_cause(trim_end))" | line("plain")),
           # The pods of a group whose messages differ each say theirs.
           (. as $group
            | group_pods($result | failed_members($group; $list_limit); .count; .message == null))),
        (.failed_groups
         | groups_left($list_limit) | select(. != "") | "  \(.)" | line("plain"))
    end)
 else empty end)
,
# The workloads whose pods are not all created yet, the first N.
(if .missing > 0 then
   ("\(missing_heading):" | line("error")),
   (missing_shown($list_limit)[] | "  \(workload_line)" | line("plain")),
   (and_more(.missing_workloads | length; missing_shown($list_limit) | length)
    | select(. != "") | "  \(.)" | line("plain"))
 else empty end)
,
# A failure without the workloads read (`missing` null: offline without
# their file, a label selector, or the workloads check turned off) says,
# once, what was not checked. A driver that never reads them (no `missing`
# key: report.jq's $workloads "never", upstream's verdicts) says nothing of
# them: upstream's output has no such line.
(if .verdict == "fail" and has("missing") and .missing == null then
   "Pods not yet created: not checked (no workloads read)" | line("warn")
 else empty end)
,
(if .excused > 0 then excused_line | line("plain") else empty end)
,
# The events: every one, newest first (list limit 0), or under each group
# shown its own newest (lib.jq's events_share and group_events).
(if .unscheduled == 0 then empty
 elif (.events | length) == 0 then
   events_missing_note | line("warn")
 elif $list_limit == 0 then
   ("\(events_heading(0)):" | line("error")),
   (.events[] | "  \(event_line)" | line("plain"))
 else
   ("\(events_heading($list_limit)):" | line("error")),
   (group_events(.unscheduled_groups[:$list_limit]; events_share($list_limit))
    | ("  \(group_events_line(trim_end))" | line("plain")),
      (.events[] | "    \(event_line)" | line("plain")))
 end)
,
# The node distribution, short: on a pass one summary line (with a limit);
# with more nodes than the limit, the summary and the N busiest; else every
# node. The figures (node_figures) are computed once (4 ms in jq 1.6 at
# 500 nodes), and only with a limit: without one, {nodes: 0} takes neither
# short form.
(if (.distribution | length) == 0 then empty
 else
   (if $list_limit > 0 then node_figures else {nodes: 0} end) as $stats
   | if .verdict == "pass" and $stats.nodes > 0 then
       "Pod distribution by node: \($stats | node_summary)" | line("info")
     elif $stats.nodes > $list_limit then
       # More nodes than the limit: one summary line, then the N busiest.
       $stats
       | ("Pod distribution by node: \(node_summary); the \($list_limit) with the most pods:"
          | line("info")),
         (.most[:$list_limit][] | "  \(.node): \(.pods)" | line("plain"))
     else
       ("Pod distribution by node:" | line("info")),
       (.distribution[] | "  \(.node): \(.pods)" | line("plain"))
     end
 end)
,
((if .verdict == "pass" then "info" elif .verdict == "empty" then "warn" else "plain" end) as $level
 | verdict_message | line($level))
,
(if .verdict == "fail" then rule else empty end)
