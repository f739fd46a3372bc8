# workloads.jq: the pods the workloads want that do not exist yet (issue 30).
#
# Input:     the documents of the workloads (`jq -s`), read at the pods'
#            resourceVersion: one List (`kubectl get rs,sts,ds,deploy -A
#            -o json`) or the raw pages of the four apps/v1 lists, one after
#            the other.
# Variables: $excluded_namespaces  as for report.jq.
#            $excluded_owner_kinds as for report.jq: a workload owned by one
#                                  of these kinds is left out, as its pods are.
#            $namespaces           as for report.jq (`-n`): only the workloads
#                                  of these namespaces count; empty = all.
#                                  (With `-l` the drivers read no workloads:
#                                  a workload's labels do not say which pods
#                                  it will create.)
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
# - Workloads in the excluded namespaces, outside the `-n` namespaces, or
#   owned by an excluded owner kind, are left out.

def owners: .metadata.ownerReferences | arrays | .[] | objects;
def one_of($list): . as $x | any($list[]; . == $x);
def count_of($by): (.metadata.uid | strings | $by[.]) // 0;
# The owners that are Deployments of the lists ($listed: {uid: 0}).
def deployments($listed): owners | select(.kind == "Deployment" and $listed[.uid | strings] != null);

# Input: the workloads' documents. Their items, each with its kind (a raw
# page's items have none: its list's). Refused unless they are one state at
# the pods' resourceVersion (the first document's when the pods' is
# unknown; "" and none are unknown), and only the four kinds.
def workload_items($at):
  ($at // (.[0] | list_version)) as $at
  | if length == 0 or any(.[]; (.items | type) != "array" or (list_version | . != $at and . != "" and . != null))
    then error("workloads: not one state at \($at | tojson)") else . end
  | [ .[] | (.kind | if is_string then .[:-4] else null end) as $kind
      | .items[] | objects | . + {kind: (.kind // $kind)}
      | if .kind | one_of(["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"]) then . else error("workloads: \(.kind | a_kind)") end ];

($excluded_namespaces | split(",")) as $excluded
| ($excluded_owner_kinds | split(",")) as $owner_kinds
| ($namespaces | split(",")) as $only
| (reduce ($report[0].active_owners // [])[] as $owner ({}; . + {($owner[0]): $owner[1]})) as $active
| workload_items($report[0].resource_version) as $items
| (reduce ($items[] | select(.kind == "Deployment") | .metadata.uid | strings) as $uid ({}; . + {($uid): 0})) as $listed
# A Deployment's pods: those of every ReplicaSet it owns, old and new.
| (reduce ($items[] | select(.kind == "ReplicaSet") | count_of($active) as $n | deployments($listed) | {uid, n: $n}) as $rs
     ($listed; . + {($rs.uid): (.[$rs.uid] + $rs.n)})) as $pods_of_deployment
| [ $items[]
    | select((.metadata.namespace | one_of($excluded) or ($only != [] and (one_of($only) | not))) or any(owners; .kind | one_of($owner_kinds)) | not)
    | select(.kind != "ReplicaSet" or ([deployments($listed)] == []))
    | (if .kind == "Deployment" then count_of($pods_of_deployment) else count_of($active) end) as $created
    | (.kind == "DaemonSet") as $ds
    | (if $ds then .status.desiredNumberScheduled else .spec.replicas end
       | if is_number then canon elif $ds then 0 else 1 end) as $replicas
    # A DaemonSet's and a Deployment's own figures are trusted only once
    # the controller observed this generation (in jq's order of values).
    | (if .kind == "ReplicaSet" or .kind == "StatefulSet" or .status.observedGeneration >= (.metadata.generation // 0)
       then $replicas else null end) as $wanted
    | select($wanted == null or $wanted > $created)
    | {kind, namespace: (.metadata.namespace | canon), name: (.metadata.name | canon), wanted: $wanted, created: $created} ]
| sort_by([.namespace, .name, .kind])
# Missing = wanted - created; a workload not yet reconciled counts 1.
| $report[0] + {missing: (map((.wanted // .created + 1) - .created) | add // 0), missing_workloads: .}
| if .missing > 0 then . + {verdict: "fail"} else . end
