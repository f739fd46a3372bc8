# decision.jq: what a driver decides from a report, as one raw line
# "VERDICT UNSCHEDULED NEXT".
#
# Input:  the report of report.jq. Output: one raw string (`jq -r`).
# NEXT is "wait" when another attempt can still change the verdict (pods are
# unscheduled, or wanted by their workloads and not yet created (their
# `missing`, when workloads.jq read them), and none has failed: a failed pod
# never recovers by waiting), else "stop". UNSCHEDULED > 0 means the
# FailedScheduling events are wanted.
(if (.unscheduled > 0 or .missing > 0) and .failed == 0 then "wait" else "stop" end) as $next
| "\(.verdict) \(.unscheduled) \($next)"
