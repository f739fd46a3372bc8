# summary.jq: the Markdown step summary of a result, for $GITHUB_STEP_SUMMARY.
#
# Input:  the result of result.jq. Output: raw lines (`jq -r`), appended as
#         they are to the summary file; the last one is blank so that
#         summaries appended one after the other stay apart.
# Variables: $list_limit  the list limit (number): with N > 0 the pods are
#         the text's digest, a row per group of pods by cause (at most N)
#         naming its first N pods; 0, a row per pod.
# Sections: a heading with the verdict, the counts table, then for a failure
# the unscheduled pods with the scheduler's reason and the failed pods; the
# excused pods; the FailedScheduling events, each group's own
# (lib.jq's group_events); last, when pods were left out, a line saying how
# many and where every pod is.
#
# GitHub refuses a step summary over 1 MiB (and shows none of it): whatever
# the limit, the lines stop before 1 MiB with a line that says so.

# Shared definitions (text, hidden_control, verdict_message, the headings)
# come from lib.jq, which the drivers put in front of this file.

# One table cell, without trailing whitespace. A control character
# (newline, tab, escape...) would end or corrupt the row, so it becomes a
# space. `|` would split the cell, `\` would escape the next character, and
# `` ` * _ ~ < > [ ] & `` would start code, emphasis, HTML or a link: each
# gets a backslash, which CommonMark and GFM turn back into the character
# itself.
def cell: trim_end
  | [ explode[]
      | if hidden_control then 32
        elif . == 92 or . == 124 or . == 96 or . == 42 or . == 95 or . == 126
             or . == 60 or . == 62 or . == 91 or . == 93 or . == 38 then 92, .
        else . end ]
  | implode;
def row($cells): reduce $cells[] as $c ("|"; . + " \($c | cell) |");
def table($header; $align; $rows):
  row($header),
  reduce $align[] as $a ("|"; . + " \($a) |"),
  ($rows[] | row(.));

# Where every pod is when a summary names only some. In words, not flags:
# the bash function writes this summary too, where the checker's flags mean
# nothing.
def full_lists_note:
  "Every pod is in the JSON result (report.json among the saved artifacts).";

def events_table($events):
  table(["Last seen", "Pod", "Count", "Message"]; ["---", "---", "---:", "---"];
        [$events[] | [.last_seen, "\(.namespace | text)/\(.pod | text)", .count, .message]]);
# The events as the text lists them: every one (list limit 0), or each
# group's own newest (lib.jq's group_events), a table a group.
def events_section:
  if (.events | length) == 0 then
    events_missing_note, ""
  elif $list_limit == 0 then
    "#### \(events_heading(0))", "", events_table(.events), ""
  else
    "#### \(events_heading($list_limit))",
    "",
    (group_events(.unscheduled_groups[:$list_limit]; events_share($list_limit))
     | (group_events_line(trim_end) | cell),
       "",
       (if .matched == 0 then empty else events_table(.events), "" end))
  end;

def pod_ref: "\(.namespace | text)/\(.name | text)";
# A group's first pods, in one cell: "ns/a, ns/b … and 3 more", each with
# its own message when the group has none.
def members_cell($members; $count; $messages):
  reduce ($members[]
          | pod_ref
            + (if $messages and (.message | trim_end) != "" then ": " + (.message | trim_end)
               else "" end)) as $p
    (""; if . == "" then $p else . + ", " + $p end)
  + (and_more($count; $members | length) | if . == "" then "" else " " + . end);
def groups_line: groups_left($list_limit) | select(. != "") | ., "";
# How many pods of $groups the digest names.
def named($groups):
  [$groups[:$list_limit][] | if .count < $list_limit then .count else $list_limit end]
  | add // 0;

# Every line but the closing blank one, before the 1 MiB guard.
def summary_lines:
  "### verify-pods: \(verdict_message)",
  "",
  table(["Total", "Running", "Pending", "Unscheduled", "Failed", "Succeeded", "Other",
         "Attempts", "Waited"];
        ["---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"];
        [[.total, .running, .pending, .unscheduled, .failed, .succeeded, .other,
          .attempts, "\(.waited_seconds)s"]]),
  "",
  (if .unscheduled > 0 then
     "#### \(unscheduled_heading)",
     "",
     (if $list_limit == 0 then
        # The scheduler's reason and message (PodScheduled=False); empty without one.
        table(["Namespace", "Pod", "Reason", "Message"]; ["---", "---", "---", "---"];
              [.unscheduled_pods[] | [.namespace, .name, .reason // "", .message // ""]])
      else
        . as $result
        | table(["Pods", "Reason", "Message", "First pods"]; ["---:", "---", "---", "---"];
                [.unscheduled_groups[:$list_limit][] | . as $group
                 | [.count,
                    (if .reason == null and .message == null then no_scheduler_condition
                     else .reason // "" end),
                    .message // "",
                    members_cell($result | unscheduled_members($group; $list_limit);
                                 .count;
                                 false)]])
      end),
     "",
     (if $list_limit == 0 then empty else .unscheduled_groups | groups_line end)
   else empty end),
  (if .failed > 0 then
     "#### \(failed_heading)",
     "",
     (if $list_limit == 0 then
        table(["Namespace", "Pod", "Reason", "Message"]; ["---", "---", "---", "---"];
              [.failed_pods[] | [.namespace, .name, .reason, .message]])
      else
        . as $result
        | table(["Pods", "Reason", "Message", "First pods"]; ["---:", "---", "---", "---"];
                [.failed_groups[:$list_limit][] | . as $group
                 | [.count, .reason, .message // "",
                    members_cell($result | failed_members($group; $list_limit);
                                 .count;
                                 .message == null)]])
      end),
     "",
     (if $list_limit == 0 then empty else .failed_groups | groups_line end)
   else empty end),
  # The workloads whose pods are not all created yet.
  (if .missing > 0 then
     "#### \(missing_heading)",
     "",
     table(["Kind", "Namespace", "Name", "Created", "Wanted"];
           ["---", "---", "---", "---:", "---:"];
           [missing_shown($list_limit)[]
            | [.kind, .namespace, .name, .created, .wanted // "not yet reconciled"]]),
     "",
     (and_more(.missing_workloads | length; missing_shown($list_limit) | length)
      | select(. != "") | ., "")
   else empty end),
  # The excused pods, then the events (after the failed pods, as in the text).
  (if .excused > 0 then (excused_line | cell), "" else empty end),
  (if .unscheduled > 0 then events_section else empty end),
  # What the digest left out, and where every pod is.
  (if $list_limit == 0 then empty
   else
     (.unscheduled - named(.unscheduled_groups)) as $unscheduled
     | (.failed - named(.failed_groups)) as $failed
     | if $unscheduled + $failed == 0 then empty
       else
         "Not named here: \($unscheduled) of \(.unscheduled) unscheduled"
         + " and \($failed) of \(.failed) failed pods"
         + " (list limit \($list_limit)). \(full_lists_note)",
         ""
       end
   end);

# The 1 MiB guard: the lines while they fit, with room for the last line.
1048576 as $most
| [summary_lines] as $lines
| if ($lines | map(utf8bytelength + 1) | add) + 1 <= $most then $lines[], ""
  else
    # How many lines fit: [bytes so far, lines kept]; once one does not,
    # the bytes are set to the most and no later line fits.
    (reduce ($lines[] | utf8bytelength + 1) as $size ([0, 0];
       if .[0] + $size > $most - 4096 then [$most, .[1]] else [.[0] + $size, .[1] + 1] end)
     | .[1]) as $kept
    | $lines[:$kept][],
    "",
    "The step summary stops here: GitHub shows at most 1 MiB. \(full_lists_note)",
    ""
  end
