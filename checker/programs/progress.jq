# progress.jq: the line printed before waiting for another attempt.
#
# Input:     the report of report.jq.
# Variables: $attempts, $waited_seconds, $deadline_seconds (numbers).
# Output:    one raw line "LEVEL<TAB>TEXT" (see render.jq).
"info\t\(.unscheduled) of \(.total) pods unscheduled after attempt \($attempts) (waited \($waited_seconds)s of \($deadline_seconds)s); retrying"
