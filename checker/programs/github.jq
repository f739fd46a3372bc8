# github.jq: GitHub Actions workflow commands (annotations) for a result.
#
# Input:  the result of result.jq. No variables. Output: raw lines (`jq -r`),
#         each one workflow command `::LEVEL title=TITLE::MESSAGE`.
# Nothing for a pass. For an empty cluster one warning. For a failure: first
# the verdict (GitHub keeps at most 10 error annotations per step, so the
# verdict comes first and never gets dropped), then one error per unscheduled
# or failed pod, at most 9, then a warning saying how many were left out.
#
# Escaping as GitHub documents it (actions/toolkit, command.ts): in messages
# `%` -> %25, CR -> %0D, LF -> %0A; in properties also `:` -> %3A, `,` -> %2C.
# Other control characters would corrupt the runner's log line: a space.

# Shared definitions (text, hidden_control, verdict_message, the event notes)
# come from lib.jq, which the drivers put in front of this file.
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
  | [ (.unscheduled_pods[] | command("error"; "Unscheduled pod \(pod_ref)"; unscheduled_message($events))),
      (.failed_pods[] | command("error"; "Failed pod \(pod_ref)"; failed_message)) ];

if .verdict == "pass" then
  empty
elif .verdict == "empty" then
  command("warning"; "No pods"; verdict_message)
else
  command("error"; "verify-pods";
          "\(verdict_message) (attempts=\(.attempts), waited=\(.waited_seconds)s)"),
  (pod_annotations as $pods
   | ($pods[:9][]),
     (if ($pods | length) > 9 then
        command("warning"; "More failing pods"; "\(($pods | length) - 9) more unscheduled or failed pods are not annotated; the job log lists them all")
      else empty end))
end
