# progress.jq: the lines printed while the check runs: the start line, and
# the line before waiting for another attempt.
#
# Input:     the report of report.jq; null before the first attempt.
# Variables: $attempts, $waited_seconds (numbers), $deadline_seconds (its
#            digits, a string: up to 18 of them, past what jq 1.6's
#            numbers hold exactly).
#            $attempts 0 is "before the first attempt": the start line,
#            which both drivers print before their first list.
# Output:    one raw line "LEVEL<TAB>TEXT" (see render.jq). Both keep the
#            words of upstream's verify_pods(), which CI logs are grepped
#            for; an attempt's counts are the status line's (status_counts,
#            from lib.jq), so every attempt shows a state that adds up.

# Who the attempt waits for: the scheduler, for pods not yet scheduled
# (upstream's words), and the controllers, for pods their workloads want
# and have not created yet (`missing`, null when the workloads were not
# read); the scheduler when neither (a report that settles has one).
def awaited:
  [if .unscheduled > 0 then "scheduler" else empty end,
   if .missing > 0 then "controllers" else empty end]
  | if . == [] then "scheduler" else reduce .[1:][] as $who (.[0]; . + " and " + $who) end;

if $attempts == 0 then "info\tVerifying pod scheduling..."
else
  "info\tAttempt \($attempts): \(status_counts) — waiting for \(awaited)"
  + " (\($waited_seconds)/\($deadline_seconds)s)"
end
