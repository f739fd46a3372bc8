# workloads.jq: the pods the workloads want that do not exist yet.
#
# Input:     the documents of the workloads (`jq -s`), read at the pods'
#            resourceVersion: one List (`kubectl get rs,sts,ds,deploy -A
#            -o json`) or the raw pages of the four apps/v1 lists, one after
#            the other. Or what this program made of them before the pods
#            were read (below): the checker reads the workloads while the
#            pods still stream, and does their part of the work then, off
#            the path to the verdict (BENCHMARKS.md).
# Variables: $excluded_namespaces  as for report.jq.
#            $excluded_owner_kinds as for report.jq: a workload owned by one
#                                  of these kinds is left out, as its pods are.
#            $namespaces           as for report.jq (`-n`): only the workloads
#                                  of these namespaces count; empty = all.
#                                  (With `-l` the drivers read no workloads:
#                                  a workload's labels do not say which pods
#                                  it will create.)
#            $report               slurped report of report.jq: [report]. Its
#                                  `active_owners` ({owner uid: active pods})
#                                  is all this program knows of the pods: it
#                                  never reads them again. None: the pods
#                                  are not read yet, only their version
#                                  (the checker's [{resource_version}]).
# Output:    the report plus `missing` (pods wanted and not yet created) and
#            `missing_workloads` ([{kind, namespace, name, wanted, created}],
#            by namespace, name, kind); the verdict is "fail" when missing > 0.
#            Before the pods are read: the workloads prepared, an object that
#            this program then takes as its input, with the report.
#
# The rules (docs/rules.md; the model: tests/corpus/make_corpus.py):
# - A pod is active for a workload when one of its ownerReferences names
#   the workload's uid, it has no deletionTimestamp, and it is neither
#   Succeeded nor Failed (a Failed pod is reported as failed, not created):
#   report.jq's active_owners.
# - ReplicaSet and StatefulSet want spec.replicas (default 1).
# - DaemonSet wants status.desiredNumberScheduled, trusted only once
#   status.observedGeneration >= metadata.generation; before that, wanted is
#   unknown (null) and the DaemonSet counts 1 missing pod.
# - A Deployment is done when its newest ReplicaSet (the highest
#   annotation deployment.kubernetes.io/revision, compared as the integer
#   it is; several when they share it, all when none has one) has the
#   Deployment's spec.replicas active pods: during a rollout the new pods
#   are the ones that may never schedule, so the old ReplicaSet's pods do
#   not stand in for them. The newest ReplicaSet is counted as its
#   Deployment, not on its own. Its spec.replicas is unknown (as above)
#   while its observedGeneration lags its generation. A paused Deployment
#   (spec.paused: true) is not rolling out, by the user's choice: it wants
#   what its newest ReplicaSet says (spec.replicas; none: nothing). A
#   ReplicaSet's Deployment is the first listed Deployment among its owners.
# - A ReplicaSet that is not the newest of its Deployment (an old one being
#   scaled down), or that has no listed Deployment, wants its own
#   spec.replicas: never counted twice.
# - A kind whose list was not read (the server refused it: 403, 404) is not
#   checked, and neither are the Deployments without the ReplicaSets: a
#   Deployment's pods are counted through them. Nothing to check leaves the
#   report as it is (`missing` null).
# - Missing = wanted - created, never below 0; 0 replicas want nothing.
# - Workloads in the excluded namespaces, outside the `-n` namespaces, or
#   owned by an excluded owner kind, are left out.
#
# Written for 2,000 workloads and more: each costs a handful of jaq steps
# (a lookup and a comparison) unless its own figure differs from its count
# of pods; the rules above are applied in full only to those, and the
# exclusions only to the workloads found missing pods (BENCHMARKS.md).

# The elements of ownerReferences when it is an array: `[0:]?` and `[]?`
# find nothing in any other value, and `.kind?` and `.uid?` nothing (or null)
# in an element that is no object, at a fraction of the cost of type tests.
def owners: .metadata.ownerReferences[0:]?[]?;
def one_of($list): . as $x | any($list[]; . == $x);
# How many pods $by counts for this workload's uid (0 for none, or a uid that
# is no string).
def count_of($by): $by[.metadata.uid]? // 0;
# The uids of the owners that are Deployments of the lists ($listed: {uid: 0}).
def deployments($listed): [owners | select($listed[.uid?]? != null and .kind? == "Deployment") | .uid];
def replicas: .spec.replicas | if is_number then canon else 1 end;
# A ReplicaSet's revision as a key that sorts as the integer does: [how
# many digits, the digits], leading zeros left out (no number: the annotation
# may hold more digits than a double keeps); [-1], the oldest, for none or
# anything but digits (`[...][0]`: null where `?` finds nothing).
def revision:
  [.metadata.annotations["deployment.kubernetes.io/revision"]?][0]
  | if is_string and . != "" and (explode | all(.[]; . >= 48 and . <= 57)) then
      .[(explode | first(range(length) as $i | select(.[$i] != 48) | $i) // length):] | [length, .]
    else [-1] end;
# The kinds whose workloads can be checked (input: the documents): those
# whose lists were read, a raw page naming its list's kind (a kind the
# server refused to list has no page) and any other document (kubectl's
# List) all four; the Deployments only with the ReplicaSets.
def kinds_checked:
  ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"] as $known
  | [.[] | .kind? | if is_string and .[-4:] == "List" and (.[:-4] | one_of($known)) then .[:-4] else $known[] end]
  | unique | if any(.[]; . == "ReplicaSet") then . else . - ["Deployment"] end;
# A DaemonSet's and a Deployment's own figures are trusted only once the
# controller observed this generation (in jq's order of values).
def reconciled: .status.observedGeneration >= (.metadata.generation // 0);

# Input: the workloads' documents. What the rules read of the workloads
# alone: {of: their items by kind ({ReplicaSet: [...], StatefulSet,
# DaemonSet, Deployment}, each item with its kind: a raw page's items have
# none, but their list's), replicasets: each ReplicaSet as [the listed
# Deployments owning it, it]}. Refused unless they are one state at the
# pods' resourceVersion $at (the first document's when the pods' is unknown;
# "" and none are unknown), and only the four kinds.
def prepared($at):
  ($at // (.[0] | list_version)) as $at
  | if length == 0 or any(.[]; (.items | type) != "array" or (list_version | . != $at and . != "" and . != null))
    then error("workloads: not one state at \($at | tojson)") else . end
  | [ .[] | (.kind | if is_string then .[:-4] else null end) as $kind
      | .items[] | objects | . + {kind: (.kind // $kind)} ]
  | ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"] as $known
  | if [.[].kind] - $known != [] then error("workloads: \(first(.[].kind | select(one_of($known) | not)) | a_kind)")
    else {ReplicaSet: [], StatefulSet: [], DaemonSet: [], Deployment: []} + (group_by(.kind) | map({(.[0].kind): .}) | add) end
  | (reduce (.Deployment[].metadata.uid | strings) as $uid ({}; . + {($uid): 0})) as $listed
  | {of: ., replicasets: [.ReplicaSet[] | [deployments($listed), .]]};

# A namespace named with `-n` is checked even when excluded by default, as
# in report.jq.
($namespaces | split(",")) as $only
| ($excluded_namespaces | split(",") - $only) as $excluded
| ($excluded_owner_kinds | split(",")) as $owner_kinds
| $report[0].active_owners as $active
# The input prepared (an object: the checker's, made before the pods were
# read), or the documents, prepared now, with the kinds they let us check.
| objects // (prepared($report[0].resource_version) + {checked: kinds_checked})
# Without the pods' owners (the report holds only their version): the
# workloads prepared are the output. Nothing to check: the report as it is.
| if $active == null then . elif .checked == [] then $report[0] else
  .checked as $checked
# The workloads of the kinds checked, the others none.
| (reduce (["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"] - $checked)[] as $kind (.of; .[$kind] = [])) as $of
| ($checked | any(.[]; . == "Deployment")) as $with_deployments
# Each ReplicaSet of the kinds checked as [its Deployment's uid (null: none
# listed, or the Deployments not checked), it, its active pods, its
# revision (null without a Deployment)].
| [ (if $of.ReplicaSet == [] then [] else .replicasets end)[]
    | (if $with_deployments then .[0][0] else null end) as $deployment
    | [$deployment, .[1], (.[1] | count_of($active)), (if $deployment == null then null else .[1] | revision end)] ] as $replicasets
# The newest ReplicaSets of each Deployment, by its uid: {revision, pods,
# replicas}, those that share the highest revision added up.
| ([ $replicasets[] | select(.[0] != null) ] | group_by(.[0])
   | map((map(.[3]) | max) as $top | map(select(.[3] == $top))
         | {(.[0][0]): {revision: $top, pods: (map(.[2]) | add), replicas: (map(.[1] | replicas) | add)}})
   | add // {}) as $newest
# [workload, wanted, created] of those that may miss pods: a workload whose
# own figure equals its count of pods (an integer) misses none, whichever
# rule applies, so only the others are looked at closer.
| [ ($replicasets[] | select(.[1].spec.replicas != .[2] and (.[0] == null or .[3] != $newest[.[0]].revision))
     | [.[1], (.[1] | replicas), .[2]]),
    ($of.StatefulSet[] | count_of($active) as $n | select(.spec.replicas != $n) | [., replicas, $n]),
    ($of.DaemonSet[] | count_of($active) as $n | select(.status.desiredNumberScheduled != $n or (reconciled | not))
     | [., (if reconciled then .status.desiredNumberScheduled | if is_number then canon else 0 end else null end), $n]),
    ($of.Deployment[] | ($newest[.metadata.uid]? // {pods: 0, replicas: 0}) as $new
     | select(.spec.replicas != $new.pods or (reconciled | not) or .spec.paused == true)
     | [., (if reconciled | not then null elif .spec.paused == true then $new.replicas else replicas end), $new.pods])
  | select(.[1] == null or .[1] > .[2])
  | .[1] as $wanted | .[2] as $created | .[0]
  # The exclusions only leave workloads out: tested on the few missing pods.
  | select((.metadata.namespace | one_of($excluded) or ($only != [] and (one_of($only) | not))) or any(owners; .kind? | one_of($owner_kinds)) | not)
  | {kind, namespace: (.metadata.namespace | canon), name: (.metadata.name | canon), wanted: $wanted, created: $created} ]
| sort_by([.namespace, .name, .kind])
# Missing = wanted - created; a workload not yet reconciled counts 1.
| $report[0] + {missing: (map((.wanted // .created + 1) - .created) | add // 0), missing_workloads: .}
| if .missing > 0 then . + {verdict: "fail"} else . end end
