# result.jq: the report plus how it was observed; this is `--format json`.
#
# Input:     the report of report.jq (resource_version included: the state
#            the verdict was decided at).
# Variables: $attempts        snapshots taken (number)
#            $waited_seconds  wall-clock seconds spent settling (number)
#            $events          slurped output of events.jq: [{matched, events}],
#                             or [] when no events were collected (then
#                             `events` and `events_matched` are null).
#
# The groups: the unscheduled pods grouped by the (reason,
# message) of their PodScheduled=False condition (both null for a pod
# without one: a group of its own), the failed pods by report.jq's reason
# (with the message their pods share, else null). Each group is {reason,
# message, count}; largest first, ties by reason then message in jq's order.
# Every pod stays in unscheduled_pods and failed_pods; the text, annotations
# and step summary list the first pods of each group from there.

def by_count: sort_by([0 - .count, .reason, .message]);

# report.jq's active_owners is for workloads.jq only.
del(.active_owners) + {
  unscheduled_groups:
    (.unscheduled_pods | group_by([.reason, .message])
     | map({reason: .[0].reason, message: .[0].message, count: length}) | by_count),
  failed_groups:
    (.failed_pods | group_by(.reason)
     | map(.[0].message as $message
           | {reason: .[0].reason,
              message: (if all(.[]; .message == $message) then $message else null end),
              count: length})
     | by_count),
  attempts: $attempts,
  waited_seconds: $waited_seconds,
  events: $events[0].events,
  events_matched: $events[0].matched
}
