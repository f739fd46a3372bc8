# workloads.jq: the pods the workloads want that do not exist yet (issue 30).
#
# Input:     the documents of the workloads (`jq -s`), read at the pods'
#            resourceVersion: one List (`kubectl get rs,sts,ds,deploy -A
#            -o json`) or the raw pages of the four apps/v1 lists, one after
#            the other.
# Variables: $excluded_namespaces  as for report.jq.
#            $excluded_owner_kinds as for report.jq: a workload owned by one
#                                  of these kinds is left out, as its pods are.
#            $report               slurped report of report.jq: [report]. Its
#                                  `active_owners` is all this program knows
#                                  of the pods: it never reads them again.
# Output:    the report plus `missing` (pods wanted and not yet created) and
#            `missing_workloads` ([{kind, namespace, name, wanted, created}],
#            by namespace, name, kind); the verdict is "fail" when missing > 0.
#
# The rules (README, "rules in brief"; the model: tests/corpus/make_corpus.py):
# - A pod is active for a workload when one of its ownerReferences names
#   the workload's uid, it has no deletionTimestamp, and it is neither
#   Succeeded nor Failed (a Failed pod is reported as failed, not created):
#   report.jq's active_owners.
# - ReplicaSet and StatefulSet want spec.replicas (default 1).
# - DaemonSet wants status.desiredNumberScheduled, trusted only once
#   status.observedGeneration >= metadata.generation; before that, wanted is
#   unknown (null) and the DaemonSet counts 1 missing pod.
# - Deployment wants spec.replicas, unknown (as above) while its
#   observedGeneration lags its generation. Its created pods are the active
#   pods of every ReplicaSet it owns, old and new: during a rollout the pods
#   of both count towards the Deployment's replicas, so surge or a scale-down
#   in progress never makes a false "missing". A ReplicaSet owned by a listed
#   Deployment is not counted on its own.
# - Missing = wanted - created, never below 0; 0 replicas want nothing.
# - Workloads in the excluded namespaces, or owned by an excluded owner kind,
#   are left out.

def workload_kinds: ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"];

def owners: .metadata.ownerReferences | arrays | .[] | objects;

def reconciled:
  .status.observedGeneration as $observed
  | .metadata.generation as $generation
  | ($observed | is_number) and (($generation | is_number | not) or $observed >= $generation);

def replicas: .spec.replicas | if is_number then canon else 1 end;

# Input: the workloads' documents. [{kind, w}] for every workload; refused
# unless they are one state: every document at the first one's
# resourceVersion, a page with a continue token followed by the rest of its
# list, and that version the pods' when both are known.
def workload_items($pods_at):
  if length == 0 then error("workloads is empty: expected a JSON document") else . end
  | if any(.[]; type != "object" or (.items | type) != "array")
    then error("workloads has no items array") else . end
  | (first(.[] | .kind | select(. != null and . != "List" and (. as $k | any(workload_kinds[]; . + "List" == $k) | not)))
     // null) as $other
  | if $other != null
    then error("\($other | a_kind), expected a List of ReplicaSets, StatefulSets, DaemonSets and Deployments (kubectl get rs,sts,ds,deploy -A -o json)")
    else . end
  | (.[0] | list_version) as $version
  | [.[] | list_version | select(. != $version)] as $others
  | if $others != []
    then error("workloads mixes pages of resourceVersion \($version | tojson) and \($others[0] | tojson): not one state")
    else . end
  | . as $docs
  | if any(range(0; length); . as $i | ($docs[$i] | list_continue) != ""
           and ($i + 1 == ($docs | length) or $docs[$i + 1].kind != $docs[$i].kind))
    then error("workloads is incomplete: a page with a continue token is not followed by the rest of its list")
    else . end
  | list_read_at as $at
  | if $at != null and $pods_at != null and $at != $pods_at
    then error("workloads were read at resourceVersion \($at | tojson), the pods at \($pods_at | tojson): not one state")
    else . end
  | [ .[] | (.kind | if is_string and .[-4:] == "List" then .[:-4] else "" end) as $list_kind
      | .items[] | objects | {kind: (.kind // $list_kind), w: .} ];

($excluded_namespaces | split(",") | map(select(. != ""))) as $excluded
| ($excluded_owner_kinds | split(",") | map(select(. != ""))) as $owner_kinds
| ($report[0].active_owners // {}) as $active
| workload_items($report[0].resource_version) as $items
| reduce ($items[] | select(.kind == "Deployment") | .w.metadata.uid | strings) as $uid ({}; . + {($uid): true})
| . as $deployments
| def of_listed_deployment: .kind == "Deployment" and (.uid | is_string) and $deployments[.uid] != null;
  [ $items[] | select(.kind == "ReplicaSet") | .w | .metadata.uid as $rs
    | owners | select(of_listed_deployment) | {uid: .uid, pods: (($rs | strings | $active[.]) // 0)} ]
| reduce .[] as $rs ({}; . + {($rs.uid): ((.[$rs.uid] // 0) + $rs.pods)}) | . as $by_deployment
| [ $items[] | .kind as $kind | .w
    | select(any(workload_kinds[]; . == $kind))
    | select(.metadata.namespace as $ns | any($excluded[]; . == $ns) | not)
    | select(any(owners; .kind as $k | any($owner_kinds[]; . == $k)) | not)
    | select($kind != "ReplicaSet" or (any(owners; of_listed_deployment) | not))
    | .metadata.uid as $me
    | (if $kind == "Deployment" then ($me | strings | $by_deployment[.]) // 0
       else ($me | strings | $active[.]) // 0 end) as $created
    | (if $kind == "Deployment" then (if reconciled then replicas else null end)
       elif $kind == "DaemonSet"
       then (if reconciled then (.status.desiredNumberScheduled | if is_number then canon else 0 end) else null end)
       else replicas end) as $wanted
    | (if $wanted == null then 1 elif $wanted > $created then $wanted - $created else 0 end) as $short
    | select($short > 0)
    | {kind: $kind, namespace: (.metadata.namespace | canon), name: (.metadata.name | canon),
       wanted: $wanted, created: $created, short: $short} ]
| sort_by([.namespace, .name, .kind])
| (map(.short) | add // 0) as $missing
| $report[0] + {missing: $missing, missing_workloads: map(del(.short))}
| if .missing > 0 then . + {verdict: "fail"} else . end
