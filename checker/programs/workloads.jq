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
def deployments($listed):
  [owners | select($listed[.uid?]? != null and .kind? == "Deployment") | .uid];
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
# The four kinds whose pods the rules count, and what a refusal says is
# expected instead: a Pod or a Job among them is a wrong file, not a
# workload to skip.
def workload_kinds: ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"];
# The kinds whose workloads can be checked (input: the documents): those
# whose lists were read, a raw page naming its list's kind (a kind the
# server refused to list has no page) and any other document (kubectl's
# List) all four; the Deployments only with the ReplicaSets.
def kinds_checked:
  workload_kinds as $known
  | [.[] | .kind?
     | if is_string and .[-4:] == "List" and (.[:-4] | one_of($known)) then .[:-4]
       else $known[] end]
  | unique | if any(.[]; . == "ReplicaSet") then . else . - ["Deployment"] end;
# A DaemonSet's and a Deployment's own figures are trusted only once the
# controller observed this generation (in jq's order of values).
def reconciled: .status.observedGeneration >= (.metadata.generation // 0);

# Input: workloads. Their active pods, by their places ([] once one of them
# has a uid that is no string: a list shorter than theirs).
def counts_of($active): [$active[.[].metadata.uid]?];
# Whether every workload checked has exactly the active pods it wants, told
# from arrays of their fields, read by one path each and compared natively:
# no jaq step per workload, which the rules below take a dozen of. That is
# the state a passing check reads, where the rules find no pod missing. Any
# workload out of the plain case (a figure unset, a DaemonSet or Deployment
# not reconciled or paused, a ReplicaSet with no listed Deployment or a
# second owner, a Deployment with other than one ReplicaSet) is false here,
# and the rules decide.
def settled($of; $with_deployments; $active):
  def exactly($wanted; $counts): $wanted == $counts and ($wanted | indices(null)) == [];
  # Input: DaemonSets or Deployments. Each observed at its generation.
  def all_reconciled:
    [.[].metadata.generation] as $generation
    | [.[].status.observedGeneration] == $generation and ($generation | indices(null)) == [];
  # [[uid, figure]] by uid, of aligned arrays.
  def by_uid($uids; $figures): [range(0; $uids | length) as $i | [$uids[$i], $figures[$i]]] | sort;
  # Each ReplicaSet's one owner a listed Deployment, and each Deployment's
  # one ReplicaSet (so its newest) with the pods the Deployment wants.
  def deployments_settled:
    ($of.ReplicaSet | [.[].metadata.ownerReferences[0]?.uid?]) as $deployments
    | ($of.ReplicaSet | [.[].metadata.ownerReferences[0]?.kind?]) as $kinds
    | ($of.ReplicaSet | counts_of($active)) as $pods
    | [$of.Deployment[].metadata.uid] as $uids
    | ($deployments | length) == ($of.ReplicaSet | length)
      and ($kinds | length) == ($deployments | length) and $kinds - ["Deployment"] == []
      and [$of.ReplicaSet[].metadata.ownerReferences[1:]?[]?] == []
      and ($deployments | indices(null)) == [] and ($deployments | sort) == ($uids | sort)
      and ($of.Deployment
           | all_reconciled and [.[].spec.paused] - [null, false] == []
             and ([.[].spec.replicas] | indices(null)) == [])
      and ($pods | length) == ($deployments | length)
      and by_uid($deployments; $pods) == by_uid($uids; [$of.Deployment[].spec.replicas]);
  ($of.StatefulSet | exactly([.[].spec.replicas]; counts_of($active)))
  and ($of.DaemonSet
       | all_reconciled and exactly([.[].status.desiredNumberScheduled]; counts_of($active)))
  and (if $with_deployments then deployments_settled
       else $of.ReplicaSet | exactly([.[].spec.replicas]; counts_of($active)) end);

# What a refusal says is expected instead of the workloads given.
def workloads_expected:
  "expected lists of ReplicaSets, StatefulSets, DaemonSets or Deployments"
  + " (kubectl get rs,sts,ds,deploy -A -o json, or the saved workloads.json)";
# Input: an item of the workloads, with its kind. Its name in an error:
# "item 3 (StatefulSet data/nats)", places from 1 in the items of every
# document.
def workload_named($at):
  "item \($at + 1)"
  + if type == "object" then
      " (\(.kind | if is_string then one_line + " " else "" end)\(namespace_name))"
    else "" end;
# Input: an item. As pod_problem, with the fields the rules read of a workload.
def workload_problem:
  item_problem([["metadata", .metadata, an_object],
                ["spec", .spec, an_object],
                ["status", .status, an_object]];
               [["metadata.namespace", .metadata.namespace, a_string],
                ["metadata.name", .metadata.name, a_string],
                ["metadata.uid", .metadata.uid, a_string],
                ["metadata.generation", .metadata.generation, a_count],
                ["spec.replicas", .spec.replicas, a_count],
                ["status.observedGeneration", .status.observedGeneration, a_count],
                ["status.desiredNumberScheduled", .status.desiredNumberScheduled, a_count]]);
# Input: the workloads' items, each with its kind. Them, or an error naming
# the first that has a field of another type than the API's, or repeats an
# earlier one's uid (as report.jq's pods_once: each field read once over all
# of them and judged natively, one by one only when something is wrong).
def workloads_once:
  . as $items
  | if indices(null) == []
       and all([[.[].metadata?.namespace?], [.[].metadata?.name?], [.[].metadata?.uid?]][];
           length == ($items | length) and strings_or_unset)
       and all([[.[].metadata?.generation?], [.[].spec?.replicas?],
                [.[].status?.observedGeneration?], [.[].status?.desiredNumberScheduled?]][];
               length == ($items | length) and counts_or_unset)
    then .
    else first_problem(workload_problem) as $found
         | if $found == null then .
           else error("workloads: \($items[$found[0]] | workload_named($found[0]))\($found[1])")
           end
    end
  | ([.[].metadata.uid] | repeated_uid) as $repeated
  | if $repeated == null then .
    else $repeated[0] as $uid | $repeated[1] as $first | $repeated[2] as $again
         | error("workloads: \($items[$first] | workload_named($first))"
                 + " and \($items[$again] | workload_named($again))"
                 + " have the same uid \($uid | tojson): each workload is counted once")
    end;

# Input: the workloads' documents. What the rules read of the workloads
# alone: {of: their items by kind ({ReplicaSet: [...], StatefulSet,
# DaemonSet, Deployment}, each item with its kind: a raw page's items have
# none, but their list's), replicasets: each ReplicaSet as [the listed
# Deployments owning it, it]}. Refused unless they are one state at the
# pods' resourceVersion $at (the first document's when the pods' is unknown;
# "" and none are unknown), only lists of the four kinds (an empty list of
# another kind too: it was asked for by mistake), each item an object with
# the API's types, each uid once.
def prepared($at):
  if length == 0 then error("workloads: no document, \(workloads_expected)") else . end
  | (first(.[] | select(type != "object")) // null) as $odd
  | if $odd != null then
      error("workloads: a document is \($odd | a_type), \(workloads_expected)")
    else . end
  # A document of one of the four kinds, or of another, is no list.
  | (first(.[] | .kind
           | select(. != null and . != "List"
                    and (one_of(workload_kinds | map(. + "List")) | not)))
     // null) as $other
  | if $other != null then error("workloads: \($other | a_kind), \(workloads_expected)") else . end
  | if any(.[]; (.items | type) != "array") then
      error("workloads: a document has no items array, \(workloads_expected)")
    else . end
  | (first(.[] | list_version | select(. != null and (is_string | not))) // null) as $odd
  | if $odd != null then
      error("workloads: a resourceVersion is \($odd | a_type), not a string")
    else . end
  | ($at // (.[0] | list_version)) as $at
  | if any(.[]; list_version | . != $at and . != "" and . != null)
    then error("workloads: not one state at \($at | tojson)") else . end
  # Each item with its kind: its own, or its list's (a raw page's items have
  # none). What is no object keeps its place, refused by workloads_once.
  # The items of a document that all have their own kind (kubectl's List)
  # are taken as they are: rebuilding each cost jaq some 40k instructions.
  | [ .[] | (.kind | if is_string then .[:-4] else null end) as $kind
      | [.items[].kind?] as $own
      | if ($own | length) == (.items | length) and ($own | indices(null) + indices(false)) == []
        then .items[]
        else .items[] | if type == "object" then . + {kind: (.kind // $kind)} else . end
        end ]
  # Only the four kinds. The kinds but the four are found natively; a null
  # item gives one null among them, an object of no kind another.
  | if ([.[].kind?] - workload_kinds | length) > (indices(null) | length)
    then
      first(.[] | objects | .kind | select(one_of(workload_kinds) | not)) as $kind
      | error("workloads: \($kind | a_kind), \(workloads_expected)")
    else . end
  | workloads_once
  | {ReplicaSet: [], StatefulSet: [], DaemonSet: [], Deployment: []}
    + (group_by(.kind) | map({(.[0].kind): .}) | add)
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
| (.of + ([(workload_kinds - $checked)[] | {(.): []}] | add // {})) as $of
| ($checked | any(.[]; . == "Deployment")) as $with_deployments
| if settled($of; $with_deployments; $active) then
    $report[0] + {missing: 0, missing_workloads: []}
  else
# Each ReplicaSet of the kinds checked as [its Deployment's uid (null: none
# listed, or the Deployments not checked), it, its active pods, its
# revision (null without a Deployment)].
  [ (if $of.ReplicaSet == [] then [] else .replicasets end)[]
    | (if $with_deployments then .[0][0] else null end) as $deployment
    | [$deployment,
       .[1],
       (.[1] | count_of($active)),
       (if $deployment == null then null else .[1] | revision end)] ] as $replicasets
# The newest ReplicaSets of each Deployment, by its uid: {revision, pods,
# replicas}, those that share the highest revision added up.
# A Deployment with one ReplicaSet (most of them) has it as its newest,
# taken as it is: the maps below cost a dozen jaq steps for each.
| ([ $replicasets[] | select(.[0] != null) ] | group_by(.[0])
   | map(if length == 1 then
           .[0] | {(.[0]): {revision: .[3], pods: .[2], replicas: (.[1] | replicas)}}
         else
           (map(.[3]) | max) as $top | map(select(.[3] == $top))
           | {(.[0][0]): {revision: $top,
                          pods: (map(.[2]) | add),
                          replicas: (map(.[1] | replicas) | add)}}
         end)
   | add // {}) as $newest
# [workload, wanted, created] of those that may miss pods: a workload whose
# own figure equals its count of pods (an integer) misses none, whichever
# rule applies, so only the others are looked at closer.
| [ ($replicasets[]
     | select(.[1].spec.replicas != .[2] and (.[0] == null or .[3] != $newest[.[0]].revision))
     | [.[1], (.[1] | replicas), .[2]]),
    ($of.StatefulSet[]
     | count_of($active) as $n | select(.spec.replicas != $n) | [., replicas, $n]),
    ($of.DaemonSet[]
     | count_of($active) as $n
     | select(.status.desiredNumberScheduled != $n or (reconciled | not))
     | [.,
        (if reconciled then .status.desiredNumberScheduled | if is_number then canon else 0 end
         else null end),
        $n]),
    ($of.Deployment[] | ($newest[.metadata.uid]? // {pods: 0, replicas: 0}) as $new
     | select(.spec.replicas != $new.pods or (reconciled | not) or .spec.paused == true)
     | [.,
        (if reconciled | not then null
         elif .spec.paused == true then $new.replicas
         else replicas end),
        $new.pods])
  | select(.[1] == null or .[1] > .[2])
  | .[1] as $wanted | .[2] as $created | .[0]
  # The exclusions only leave workloads out: tested on the few missing pods.
  | select((.metadata.namespace | one_of($excluded) or ($only != [] and (one_of($only) | not)))
           or any(owners; .kind? | one_of($owner_kinds))
           | not)
  | {kind,
     namespace: (.metadata.namespace | canon),
     name: (.metadata.name | canon),
     wanted: $wanted,
     created: $created} ]
| sort_by([.namespace, .name, .kind])
# Missing = wanted - created; a workload not yet reconciled counts 1.
| $report[0]
  + {missing: (map((.wanted // .created + 1) - .created) | add // 0), missing_workloads: .}
| if .missing > 0 then . + {verdict: "fail"} else . end end end
