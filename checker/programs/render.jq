# render.jq: the human text of a result, as lines "LEVEL<TAB>TEXT".
#
# Input:  the result of result.jq. Output: raw strings (`jq -r`).
# LEVEL is info, warn or error; the bash function hands TEXT to log_LEVEL and
# the checker prints TEXT. Every word a user reads comes from here.

# Cluster data can carry newlines, tabs and escape sequences: flatten every
# control character to a space so one record stays one log line.
def clean: (if type == "string" then . else tojson end)
  | explode | map(if . < 32 or . == 127 then 32 else . end) | implode;
def line($level): "\($level)\t\(.)";
def pod_ref: "\(.namespace | clean)/\(.name | clean)";

("Pod status: \(.total) total, \(.running) running, \(.pending) pending (\(.unscheduled) unscheduled), \(.failed) failed (attempts=\(.attempts), waited=\(.waited_seconds)s)" | line("info"))
,
(if (.distribution | length) > 0 then
   ("Pod distribution by node:" | line("info")),
   (.distribution[] | "  \(.node | clean): \(.pods)" | line("info"))
 else empty end)
,
(if .unscheduled > 0 then
   ("Unscheduled pods (\(.unscheduled)):" | line("error")),
   (.unscheduled_pods[] | "  \(pod_ref)" | line("error")),
   (if .events == null then
      ("FailedScheduling events: not collected" | line("warn"))
    elif (.events | length) == 0 then
      ("FailedScheduling events: none for the unscheduled pods" | line("warn"))
    else
      ("FailedScheduling events for the unscheduled pods (\(.events | length), newest first):" | line("error")),
      (.events[] | "  \(.last_seen | clean) \(.namespace | clean)/\(.pod | clean) (x\(.count | clean)): \(.message | clean)" | line("error"))
    end)
 else empty end)
,
(if .failed > 0 then
   ("Failed pods (\(.failed)):" | line("error")),
   (.failed_pods[]
    | "  \(pod_ref): \(.reason | clean)" + (if .message == "" then "" else ": \(.message | clean)" end)
    | line("error"))
 else empty end)
,
(if .verdict == "pass" then
   ("All \(.total) pods are scheduled" | line("info"))
 elif .verdict == "empty" then
   ("No pods found outside the excluded namespaces" | line("warn"))
 else
   ("Pod validation failed: \(.unscheduled) unscheduled, \(.failed) failed" | line("error"))
 end)
