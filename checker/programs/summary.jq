# summary.jq: the Markdown step summary of a result, for $GITHUB_STEP_SUMMARY.
#
# Input:  the result of result.jq. No variables. Output: raw lines (`jq -r`),
#         appended as they are to the summary file; the last one is blank so
#         that summaries appended one after the other stay apart.
# Sections: a heading with the verdict, the counts table, then for a failure
# the unscheduled pods with the scheduler's reason, their FailedScheduling
# events and the failed pods.

# Shared definitions (text, hidden_control, verdict_message, the headings)
# come from lib.jq, which the drivers put in front of this file.

# One table cell, without trailing whitespace. A control character (newline, tab, escape...) would end or
# corrupt the row, so it becomes a space. `|` would split the cell, `\` would
# escape the next character, and `` ` * _ ~ < > [ ] & `` would start code,
# emphasis, HTML or a link: each gets a backslash, which CommonMark and GFM
# turn back into the character itself.
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

def events_section:
  if (.events | length) == 0 then
    events_missing_note, ""
  else
    "#### \(events_heading)",
    "",
    table(["Last seen", "Pod", "Count", "Message"]; ["---", "---", "---:", "---"];
          [.events[] | [.last_seen, "\(.namespace | text)/\(.pod | text)", .count, .message]]),
    ""
  end;

"### verify-pods: \(verdict_message)",
"",
table(["Total", "Running", "Pending", "Unscheduled", "Failed", "Succeeded", "Other", "Attempts", "Waited"];
      ["---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"];
      [[.total, .running, .pending, .unscheduled, .failed, .succeeded, .other, .attempts, "\(.waited_seconds)s"]]),
"",
(if .unscheduled > 0 then
   "#### \(unscheduled_heading)",
   "",
   # The scheduler's reason and message (PodScheduled=False); empty without one.
   table(["Namespace", "Pod", "Reason", "Message"]; ["---", "---", "---", "---"];
         [.unscheduled_pods[] | [.namespace, .name, .reason // "", .message // ""]]),
   "",
   events_section
 else empty end),
(if .failed > 0 then
   "#### \(failed_heading)",
   "",
   table(["Namespace", "Pod", "Reason", "Message"]; ["---", "---", "---", "---"];
         [.failed_pods[] | [.namespace, .name, .reason, .message]]),
   ""
 else empty end)
