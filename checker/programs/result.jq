# result.jq: the report plus how it was observed; this is `--format json`.
#
# Input:     the report of report.jq (resource_version included: the state
#            the verdict was decided at).
# Variables: $attempts        snapshots taken (number)
#            $waited_seconds  wall-clock seconds spent settling (number)
#            $events          slurped output of events.jq: [events], or [] when
#                             no events were collected (then `events` is null).
. + {
  attempts: $attempts,
  waited_seconds: $waited_seconds,
  events: ($events[0] // null)
}
