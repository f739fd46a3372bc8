# events.jq: the FailedScheduling events that explain the unscheduled pods.
#
# Input:     `kubectl get events --all-namespaces --field-selector reason=FailedScheduling -o json`.
# Variables: $report  the report of report.jq, slurped (`--slurpfile report FILE`),
#                     so the report itself is $report[0].
# Output:    an array of at most 50 events, newest first. An event matches when
#            its involvedObject is one of the unscheduled pods: same namespace and
#            name, and same uid when both sides carry one. Events of pods that
#            have since been bound, and kube-system noise, never match.

def pod_key: "\(.namespace)/\(.name)";
def seen: .lastTimestamp // .eventTime // .firstTimestamp // "";

($report[0].unscheduled_pods | map({key: pod_key, value: (.uid // "")}) | from_entries) as $uid_by_pod
| if type != "object" or (.items | type) != "array" then error("events document has no items array") else . end
| [ .items[]
    | select(.reason == "FailedScheduling")
    | (.involvedObject // {}) as $pod
    | select(($pod.kind // "Pod") == "Pod")
    | ($pod | pod_key) as $key
    | select($uid_by_pod | has($key))
    | select($uid_by_pod[$key] == "" or ($pod.uid // "") == "" or $pod.uid == $uid_by_pod[$key])
    | {
        namespace: $pod.namespace,
        pod: $pod.name,
        last_seen: seen,
        count: (.count // 1),
        message: (.message // "")
      } ]
# Sort on whole seconds first: eventTime carries microseconds, lastTimestamp does not.
| sort_by([(.last_seen | tostring | .[0:19]), .last_seen, .namespace, .pod, .message])
| reverse
| .[:50]
