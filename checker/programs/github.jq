# github.jq: GitHub Actions workflow commands (annotations) for a result.
#
# Input:  the result of result.jq. Output: raw lines (`jq -r`), each one
#         workflow command `::LEVEL title=TITLE::MESSAGE`.
# Variables: $list_limit  the list limit (number): with N > 0 an error per
#         group of pods by cause (result.jq's groups) naming its first N
#         pods, with their FailedScheduling events; 0, an error per pod.
# Nothing for a pass. For an empty cluster one warning. For a check that
# ended without a verdict (exit 2: the error object, verdict "error"), one
# error with its line. For a failure, at most 10 errors (GitHub keeps at
# most 10 error annotations per step, and drops the rest): first the
# verdict, so that it never gets dropped; then one for the pods not yet
# created, when some are; then as many groups (or pods with a limit of 0)
# as leave room, and one warning saying how many were left out.
#
# Escaping as GitHub documents it (actions/toolkit, command.ts): in messages
# `%` -> %25, CR -> %0D, LF -> %0A; in properties also `:` -> %3A, `,` -> %2C.
# Other control characters would corrupt the runner's log line: a space.

# Shared definitions (text, hidden_control, verdict_message, the event notes)
# come from lib.jq, which the drivers put in front of this file.

# Every line of a multi-line text without trailing whitespace, and no blank
# lines at its end (annotations keep their line breaks). Here, not in lib.jq:
# only annotations use it, and the bash library's bytes are counted.
def trim_lines:
  text | if . == "" then . else
    split("\n") | map(trim_end) | reduce .[1:][] as $l (.[0]; . + "\n" + $l) | trim_end
  end;

def gh_data: trim_lines
  | [ explode[]
      | if . == 37 then 37, 50, 53
        elif . == 13 then 37, 48, 68
        elif . == 10 then 37, 48, 65
        elif hidden_control then 32
        else . end ]
  | implode;
def gh_property: gh_data
  | [ explode[]
      | if . == 58 then 37, 51, 65
        elif . == 44 then 37, 50, 67
        else . end ]
  | implode;
def command($level; $title; $message):
  "::\($level) title=\($title | gh_property)::\($message | gh_data)";
def pod_ref: "\(.namespace | text)/\(.name | text)";

# The events of one pod, newest first, one per line of the annotation.
def pod_events($pod; $events):
  [ $events[]
    | select(.namespace == $pod.namespace and .pod == $pod.name)
    | "\(.last_seen | text) (x\(.count | text)): \(.message | trim_end)" ];
def lines_of($list): reduce $list[] as $line (""; if . == "" then $line else . + "\n" + $line end);

# The first line says why, in the scheduler's words (its PodScheduled
# condition) when it gave them; the lines after it, the events.
def unscheduled_message($events):
  ("Pending without a node"
   + (parts_joined(trim_lines; [.reason, .message]) | if . == "" then "" else ": " + . end))
  + "\n"
  + (if $events == null then
       {events: null} | events_missing_note
     else
       pod_events(.; $events) as $mine
       | if ($mine | length) == 0 then
           "FailedScheduling events: none for this pod"
         else
           "FailedScheduling events, newest first:\n" + lines_of($mine)
         end
     end);

def failed_message: parts_joined(trim_lines; [.reason, .message]);

def pod_annotations:
  .events as $events
  | [ (.unscheduled_pods[]
       | command("error"; "Unscheduled pod \(pod_ref)"; unscheduled_message($events))),
      (.failed_pods[] | command("error"; "Failed pod \(pod_ref)"; failed_message)) ];

# A group's message: its cause, then its first pods (with their own message
# when the group has none) and what is left out.
def group_message($cause; $members; $count; $messages):
  lines_of([$cause]
           + [$members[]
              | pod_ref
                + (if $messages and (.message | trim_lines) != "" then
                     ": " + (.message | trim_lines)
                   else "" end)]
           + [and_more($count; $members | length) | select(. != "")]);

# The FailedScheduling events of a group, newest first, as many as the
# text lists under it (lib.jq's events_share and group_events: each
# group its own, never "none" for pods that have some).
def group_events_text($result; $group):
  if $result.events == null then
    {events: null} | events_missing_note
  else
    $result | group_events([$group]; events_share($list_limit))
    | if .matched == 0 then "FailedScheduling events: none for these pods"
      else
        "FailedScheduling events, newest first (\(group_events_count)):\n"
        + lines_of([.events[] | event_line])
      end
  end;

# The annotations of the first $shown groups, unscheduled ones first.
def group_annotations($shown):
  . as $result
  | ([.unscheduled_groups[] | {unscheduled: true, group: .}]
     + [.failed_groups[] | {unscheduled: false, group: .}])[:$shown][]
  | .group as $group
  | if .unscheduled then
      ($result | unscheduled_members($group; $list_limit)) as $members
      | command("error";
                "\($group.count) unscheduled \(if $group.count == 1 then "pod" else "pods" end)";
                group_message($group | unscheduled_cause(trim_lines); $members; $group.count; false)
                + "\n" + group_events_text($result; $group))
    else
      command("error"; "\($group.count) failed \(if $group.count == 1 then "pod" else "pods" end)";
              group_message($group | failed_cause(trim_lines);
                            $result | failed_members($group; $list_limit);
                            $group.count;
                            $group.message == null))
    end;

if .verdict == "pass" then
  empty
elif .verdict == "error" then
  # The line stderr got, as the action and a log reader want it: one
  # annotation, titled by what went wrong (the command line, or the rest).
  command("error"; if .usage then "verify-pods usage error" else "verify-pods gave no verdict" end;
          .error)
elif .verdict == "empty" then
  command("warning"; "No pods"; verdict_message)
else
  # The errors GitHub keeps beside the verdict's and the pods not yet
  # created's: for the groups, or the pods with a limit of 0.
  (if .missing > 0 then 8 else 9 end) as $room
  | command("error"; "verify-pods";
            "\(verdict_message) (attempts=\(.attempts), waited=\(.waited_seconds)s)"),
    # One error for the pods not yet created, its workloads listed.
    (if .missing > 0 then
       command("error"; missing_heading;
               (missing_shown($list_limit) | length) as $shown
               | lines_of([missing_shown($list_limit)[] | workload_line]
                          + [and_more(.missing_workloads | length; $shown) | select(. != "")]))
     else empty end),
    (if $list_limit == 0 then
       pod_annotations as $pods
       | ($pods[:$room][]),
         (if ($pods | length) > $room then
            command("warning"; "More failing pods";
                    "\(($pods | length) - $room) more unscheduled or failed pods are not annotated;"
                    + " the job log lists them all")
          else empty end)
     else
       # Building a group's annotation looks its pods up: only those shown.
       ((.unscheduled_groups | length) + (.failed_groups | length)) as $groups
       | group_annotations($room),
         (if $groups > $room then
            command("warning"; "More failing pods";
                    "\($groups - $room) more groups of unscheduled or failed pods"
                    + " are not annotated; the job log has the digest, `--format json` every pod")
          else empty end)
     end)
end
