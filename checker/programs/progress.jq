# progress.jq: the line printed before waiting for another attempt.
#
# Input:     the report of report.jq.
# Variables: $attempts, $waited_seconds, $deadline_seconds (numbers).
# Output:    one raw line "LEVEL<TAB>TEXT" (see render.jq), with the same
#            counts as the status line (status_counts, from lib.jq), so every
#            attempt shows a state that adds up.
"info\tAttempt \($attempts): \(status_counts); waited \($waited_seconds)s of \($deadline_seconds)s, retrying"
