# render.jq: the human text of a result, as lines "LEVEL<TAB>TEXT".
#
# Input:  the result of result.jq. Output: raw strings (`jq -r`).
# LEVEL is info, warn or error; the bash function hands TEXT to log_LEVEL and
# the checker prints TEXT. Every word a user reads comes from here.

# Shared definitions (one_line, phrases, status_counts, verdict_message, the
# headings) come from lib.jq, which the drivers put in front of this file.

def line($level): "\($level)\t\(trim_end)";
def pod_ref: "\(.namespace | one_line)/\(.name | one_line)";
# "  ns/name: PART: PART" with the parts that are not blank.
def pod_line($parts): "  \(pod_ref)" + (phrases($parts) | if . == "" then "" else ": " + . end);

("Pod status: \(status_counts) (attempts=\(.attempts), waited=\(.waited_seconds)s)" | line("info"))
,
(if (.distribution | length) > 0 then
   ("Pod distribution by node:" | line("info")),
   (.distribution[] | "  \(.node | one_line): \(.pods)" | line("info"))
 else empty end)
,
(if .unscheduled > 0 then
   ("\(unscheduled_heading):" | line("error")),
   # The scheduler's reason and message (PodScheduled=False), when it gave one.
   (.unscheduled_pods[] | pod_line([.reason, .message]) | line("error")),
   (if (.events | length) == 0 then
      (events_missing_note | line("warn"))
    else
      ("\(events_heading):" | line("error")),
      (.events[] | "  \(.last_seen | one_line) \(.namespace | one_line)/\(.pod | one_line) (x\(.count | one_line)): \(.message | phrase)" | line("error"))
    end)
 else empty end)
,
(if .failed > 0 then
   ("\(failed_heading):" | line("error")),
   (.failed_pods[] | pod_line([.reason, .message]) | line("error"))
 else empty end)
,
((if .verdict == "pass" then "info" elif .verdict == "empty" then "warn" else "error" end) as $level
 | verdict_message | line($level))
