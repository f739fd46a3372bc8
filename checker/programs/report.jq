# report.jq: ONE pass over a snapshot of the pods.
#
# Input:     the snapshot, as `jq -s` reads it: an array of its documents,
#            either one `kubectl get pods -A -o json` List or the raw pages
#            of one paged list (lib.jq's list_items: one resourceVersion,
#            no continue token left).
# Variables: $excluded_namespaces  comma-separated namespace names, exact match.
#            $excluded_owner_kinds comma-separated owner kinds whose pending
#                                  pods are not unscheduled, exact match.
#            $namespaces           comma-separated namespaces (`-n`): only
#                                  their pods count; "" = every namespace.
#            $selector             a label selector (`-l`): only the pods it
#                                  selects count; "" = every pod. Live, the
#                                  server applies both first; offline, this
#                                  is the selection.
#            $workloads            "true" when workloads.jq will read this
#                                  report: only then is
#                                  `active_owners` computed (it is most of
#                                  this program's work on a large cluster);
#                                  "false": it is null. "owners": the output
#                                  is only what workloads.jq reads of the
#                                  report, {resource_version, active_owners},
#                                  which the checker computes beside the rest
#                                  ("false") on another core, then adds.
#                                  "never": as "false", from a driver that
#                                  never reads the workloads (a host's
#                                  library without the workloads feature,
#                                  upstream's verdicts): the report has no
#                                  `missing` keys, and the text says nothing
#                                  of pods not yet created.
# Output:    one report object: counts (every phase), the unscheduled pods
#            with the scheduler's reason, the failed pods, the per-node
#            distribution, the verdict and the resourceVersion it was decided
#            at (lib.jq's list_read_at: null when unknown), and the
#            namespaces of the counted pods with how many each has (the
#            tests of ctrf.jq). The checker's
#            watch hands this program its state as one page at the version
#            of the last event or bookmark applied, so the version follows.
#
# Portable subset: runs unchanged on jq 1.6, jq 1.7/1.8 and jaq 3.x
# (see checker/src/lint.rs for the constructs we refuse).
#
# Written for 150k-pod snapshots: the work done per pod is kept to a few
# field reads, each collected by a path (`[.[].status.phase]`): `map(f)`
# pays a pipe per pod, twice the instructions in jaq. Counting and picking
# pods by phase goes through `indices`, which jq and jaq run natively; only
# the Pending and Failed pods are looked at closer. (A per-pod summary
# object cost 2.5x the evaluation time.)

# lib.jq (canon, pods_once) comes first: the drivers put it in front of this
# file. Once checked there, a pod's namespace, uid, node, phase and (of a
# pod listed) name are strings or null; only the reasons and messages may be
# numbers (canon).

# The owners of one of $kinds (exact match) excuse a pod without a node. The
# default list is `Job` (checker/programs/excluded-owner-kinds): only pods of
# a batch/v1 Job may stay unscheduled. Upstream's `map(.kind) |
# contains(["Job"])` is a substring test (PyTorchJob, MPIJob, CronJob,
# JobSet... owners escape it too): the docs/migrating.md (The Job rule) names
# the list that reproduces it.
# Input: a pod. The kinds of $kinds among its owners.
def owner_kinds_in($kinds):
  [.metadata.ownerReferences[]? | .kind as $kind | select(any($kinds[]; . == $kind)) | $kind];
# Input: the pods without a node. The pods that an owner excuses, as
# {at: their places, in order, kinds: the kinds that excuse them}. A pod
# names one owner at most (the checker's reader keeps only the owners of
# $kinds, and a controller writes one): then each pod's first owner's kind
# is read by one path, and `indices` finds the excused ones natively. Else
# (two owners, or an owner that is no object) pod by pod, as the rule says.
def excused_by($kinds):
  [.[].metadata.ownerReferences] as $owners
  | [$owners[][0]?.kind?] as $first_kinds
  | if ($first_kinds | length) == length and [$owners[][1:]?[]?] == [] then
      [$kinds | unique[] as $kind | $first_kinds | indices($kind)[]] | sort
      | {at: ., kinds: [$first_kinds[.[]]]}
    else
      [.[] | owner_kinds_in($kinds)] as $found
      | [range(0; length) | select($found[.] != [])]
      | {at: ., kinds: [$found[.[]][]]}
    end;

# Input: the node names (spec.nodeName) and $phases the phases of the pods.
# The positions of the pods that no node runs and that still should be:
# no node bound (spec.nodeName unset or "": pods_state_checked refused any
# other value than a string) in any phase but Succeeded
# and Failed. Pending is the usual one; a pod Running, Unknown or
# of no phase without a node is not scheduled either, and is never called so.
# `indices` finds them natively; only those pods are looked at.
def nodeless($phases):
  [indices(null), indices("")] | add | sort
  | map(select($phases[.] != "Succeeded" and $phases[.] != "Failed"));

# Why the scheduler left the pod unbound, in its own words: the PodScheduled
# condition with status "False" (reason Unschedulable, SchedulingGated...),
# kept current by the scheduler and part of this very snapshot. {} when the
# pod has none (its reason and message are then null).
def scheduler_verdict:
  [.status.conditions | arrays | .[] | objects
   | select(.type == "PodScheduled" and .status == "False")]
  | .[0] // {};
# Input: values read (null where unset). Each through canon: natively, when
# all are unset or strings (canon keeps those as they are).
def canon_each: if strings_or_unset then . else map(canon) end;
# Input: the pods without a node. Their scheduler_verdict's reasons and
# messages (canon), as [reasons, messages], in the pods' order. A pod without
# a node has that one condition or none (the checker's reader keeps no other):
# then each pod's first condition is read by one path, the rest natively.
# Else pod by pod.
def scheduler_verdicts:
  [.[].status.conditions] as $conditions
  | [$conditions[][0]?] as $firsts
  | ($firsts - [null]) as $found
  | if ($firsts | length) == length and [$conditions[][1:]?[]?] == []
       and ([$found[].type?] | indices("PodScheduled") | length) == ($found | length)
       and ([$found[].status?] | indices("False") | length) == ($found | length)
    then $firsts
    else [.[] | scheduler_verdict]
    end
  | [([.[].reason] | canon_each), ([.[].message] | canon_each)];

# The first terminated container state, if any.
def terminated: [.status.containerStatuses[]? | .state.terminated | objects] | .[0];
# Input: the failed pods. Each one's terminated state (null for none), in
# order. A failed pod of one container or none (the checker's reader keeps
# only the terminated ones) has its one state read by one path, each checked
# natively to be an object or null. Else pod by pod.
def terminated_each:
  [.[].status.containerStatuses] as $statuses
  | [$statuses[][0]?.state?.terminated?] as $states
  | ($states - [null]) as $set
  | if ($states | length) == length and [$statuses[][1:]?[]?] == []
       and ([$set[].reason?] | length) == ($set | length)
    then $states
    else [.[] | terminated]
    end;
# Input: values. Each, or where it is null or false, the value at its place
# in `second` (an array), or where that is too, $last: `//` in turn. No value
# at a time when none is null or false.
def or_else(second; $last):
  if indices(null) + indices(false) == [] then .
  else . as $first | second as $second
       | [range(0; length) as $i | $first[$i] // $second[$i] // $last]
  end;

# Input: values sorted, null and strings only. Where the run of equal values
# that starts at $at ends: the place of the least value above them (after
# null, false; after a string, it with "\u0000" added), which `bsearch`
# finds in log n steps (native in jaq); when that value is there too, its
# first place.
def run_end($at):
  (.[$at] | if . == null then false else . + "\u0000" end) as $above
  | bsearch($above) as $found
  | if $found < 0 then -1 - $found else indices($above)[0] end;
# Input: values sorted, null and strings only. Each run of equal values as
# {($key): the value, pods: how many}, in order. The work is per run, not
# per value: `group_by(.)` pays a jq step and an array for each value (at
# 50k pods on 500 nodes, 130 M instructions against 25 M).
def counted($key):
  . as $sorted
  | length as $n
  | [0 | while(. < $n; . as $at | $sorted | run_end($at))] as $starts
  | [range(0; $starts | length) as $i
     | {($key): $sorted[$starts[$i]], pods: (($starts[$i + 1] // $n) - $starts[$i])}];

# Input: the node names of the counted pods but null and "", sorted;
# $unbound: how many pods have no node (null or ""). How many pods are bound
# to each node, by name; the unbound ones count as "<none>" (with the pods of
# a node of that name, if any), in its place among the names.
def distribution($unbound):
  counted("node")
  | if $unbound == 0 then .
    else ([.[].node] | bsearch("<none>")) as $at
         | if $at >= 0
           then .[:$at] + [{node: "<none>", pods: (.[$at].pods + $unbound)}] + .[$at + 1:]
           else (-1 - $at) as $at | .[:$at] + [{node: "<none>", pods: $unbound}] + .[$at:]
           end
    end;

# The namespaces of the counted pods, by name, with how many each has, from
# the namespaces read of every pod ($named: those set, sorted), the excluded
# ones left out; the pods of no namespace (null sorts first) counted apart.
def namespace_counts($all; $named; $excluded):
  (($all | length) - ($named | length)) as $unset
  | [if $unset > 0 then {namespace: null, pods: $unset} else empty end]
    + ($named
       | counted("namespace")
       | map(select(.namespace as $ns | any($excluded[]; . == $ns) | not)));

# Input: the phases. How many are $phase.
def count($phase): indices($phase) | length;

# Input: the pods. Those not at the places $dropped (sorted, each once): the
# runs between them, each one slice, added (`add` is linear in jq and jaq).
# The work is per run, not per pod: in jaq a slice costs what collecting some
# ten pods one by one (`[...[]]`) does, and kubectl lists a namespace's pods
# together, so the excluded ones leave a few runs. A membership test per pod
# cost 40 % of this program's time at 10k pods. The places come from
# `indices`, which jq and jaq run natively.
def without($dropped):
  . as $all
  | if $dropped == [] then $all
    else [ range(0; ($dropped | length) + 1) as $i
           | $all[(if $i == 0 then 0 else $dropped[$i - 1] + 1 end) : ($dropped[$i] // length)] ]
         | add
    end;
# $namespaces: the pods' namespaces, read once (pods_once checked them). A pod
# has one namespace: the places of distinct names are distinct.
def outside($excluded; $namespaces):
  without([$excluded | unique | .[] as $name | $namespaces | indices($name)[]] | sort);

# Input: owner uids as read, any value. The string ones, equal ones
# grouped: sorted, the strings are one slice between the sentinels "" and []
# (jq's order: ... numbers < strings < arrays), found natively.
def owner_groups:
  ["", []] + . | sort | .[indices("")[0] + 1 : indices([[]])[0]] | group_by(.)[];

# Input: every pod of the snapshot. What workloads.jq needs of the pods
# (the pods not yet created), so that it never reads them again: {owner
# uid: how many active pods name it}. A pod is active with no
# deletionTimestamp, neither Succeeded nor Failed. The excluded namespaces
# and the selection are not applied: they leave out workloads, which
# workloads.jq does, and a workload's pods are in its namespace (Kubernetes
# has no cross-namespace owners), so the pods of the others only add uids
# no workload looks up. On a large cluster this is most of the program's
# work: jaq pays a few thousand instructions for each step it takes per pod
# (each part of a path), so the pods are read by as few paths as there are
# facts (the owners, the first one, a second one, the deletion), and the
# rest is done on their arrays by `indices`, `sort` and slices, which run
# natively. Per owner one small object, all added at once: jq 1.6 copies
# the whole object at each step of a reduce (0.2 s for 4,000 owners at 10k
# pods) and at `.[k] += n` (2.5 s). (The uids sorted and looked up with
# `bsearch`, native in jaq, cost jaq more: a search and a count took it 8
# times a key's instructions.) Type tests and comparisons per pod cost 2.4x
# this (BENCHMARKS.md).
# $phases: the pods' phases as read for pods_state_checked.
def active_owners($phases):
  # The pods' metadata once, for the deletion and the owners: a path less
  # from each pod.
  [.[].metadata] as $metadata
  | [$metadata[].deletionTimestamp] as $deletion
  # The places of the ended pods, in order, each once (`without` slices
  # between them): by phase (`indices`, natively) and by deletion (per
  # distinct deletionTimestamp, not per pod; the nulls subtracted before
  # `unique`, which cost jq 1.6 17 ms on 10k nulls).
  | ($phases | indices("Succeeded") + indices("Failed")) as $by_phase
  | ($by_phase
     + ([$deletion - [null] | unique[] as $at | $deletion | indices([$at])] | add // []
        | . - $by_phase)
     | sort) as $ended
  # Each pod's owners as read (one value a pod), then its first owner's uid
  # (null for none): one value a pod while every ownerReferences is an
  # array of objects (or unset). Then, when no pod names a second owner,
  # these are all the owners, and the active pods' are this array with the
  # ended pods' places cut out. Otherwise (a second owner, or a value of
  # another type) each active pod's owners are read one by one, each named
  # once: a pod that names the same owner twice (no controller writes that)
  # is still one pod of it. (Both from the owners' array: the paths from
  # each pod cost a third more.)
  | [$metadata[].ownerReferences] as $owners
  | [$owners[][0]?.uid?] as $first
  | if ($first | length) == length and [$owners[][1:]?[]?] == [] then
      $first | without($ended)
    else
      [without($ended)[] | [.metadata.ownerReferences[0:]?[]?.uid?] | unique[]]
    end
  | [owner_groups | {(.[0]): length}] | add // {};

# Input: every pod. active_owners, after every pod's node and phase are
# checked, as it reads every pod's phase ($items: the list, for the words).
def owners_checked($items):
  [.[].status?.phase?] as $all_phases
  | pods_state_checked([.[].spec?.nodeName?]; $all_phases; $items)
  | active_owners($all_phases);

# The selection (`-n`, `-l`), as the API server makes it: kubectl's
# equality-based label selector, terms separated by commas, each `key`,
# `!key`, `key=value`, `key==value` or `key!=value` (a missing label is
# `!=` any value), as [key, value or null, whether it must match]. Set-based
# terms (`in`, `notin`, parentheses) and spaces are refused, as is anything
# but letters, digits, `-`, `_`, `.` (and `/` in keys). Namespace names
# (`-n` and the excluded ones) must be DNS-1123 labels. The drivers run
# this program on no pods first, so a setting it refuses ends the check
# before any list.
def chars($c):
  explode | all(.[]; . >= 97 and . <= 122 or . >= 65 and . <= 90 or . >= 45 and . <= 57 and . != 47
                     or . == 95 or . == $c);
def terms:
  if . == "" then [] else split(",") end
  | map(. as $t
        | if .[:1] == "!" then [.[1:], null, false]
          else (split("!=") | select(length == 2) + [false])
               // (split("==") | select(length == 2) + [true])
               // (split("=") | . + [null][length - 1:] + [true])
          end
        | if length == 3 and .[0] != "" and (.[0] | chars(47)) and (.[1] // "" | chars(0)) then .
          else error("label selector term \($t | tojson): use key, !key, key=value or key!=value")
          end);
def names($w):
  split(",") - [""]
  | map(if length < 64
           and (explode
                | .[0] != 45 and .[-1] != 45
                  and all(.[]; . >= 97 and . <= 122 or . >= 48 and . <= 57 or . == 45))
        then . else error("\($w) \(tojson) is not a DNS-1123 label") end);

($namespaces | names("namespace")) as $only
| ($selector | terms) as $terms
# A namespace named with `-n` is checked even when the default list excludes
# it: the name given wins (the drivers refuse it named by --exclude-ns too).
| ($excluded_namespaces | names("excluded namespace") - $only) as $excluded
| ($excluded_owner_kinds | split(",") | map(select(. != ""))) as $owner_kinds
| . as $documents
# The owners' part, which the checker runs beside the rest, takes the items
# as they are: the rest refuses what list_items refuses, and its refusal
# comes first.
| if $workloads == "owners" then [.[].items[]]
  else list_items("snapshot"; "Pod"; "kubectl get pods -A -o json") end
| . as $items
# Each pod once, its namespace and uid of the API's types (lib.jq), the
# namespaces read once for that, for the exclusion and (without a selection)
# for their counts. The owners' part, which the checker runs beside the rest
# and adds to it, leaves that to the rest. (`first`: jaq keeps what a filter
# bound while the rest of the pipe runs, unless the filter is done: the uids
# and namespaces read here are freed before the rest's peak.)
| (if $workloads == "owners" then null
   else first([.[].metadata?] as $metadata
              | [$metadata[].namespace?] as $all_namespaces
              | ($all_namespaces - [null] | sort) as $named_namespaces
              | pods_once($metadata; $all_namespaces; $named_namespaces)
              | {counted: outside($excluded; $all_namespaces),
                 namespaces: (if $only + $terms == [] then
                                namespace_counts($all_namespaces; $named_namespaces; $excluded)
                              else null end)})
   end) as $once
# With the workloads, active_owners reads every pod's phase: every pod's node
# and phase are checked for it (the rest checks only the counted pods'). In
# one run (`true`) that comes after the rest, as the checker, which runs the
# two parts apart, tells the rest's refusal first: the same pod is named.
| . as $every_pod
| if $workloads == "owners" then
    {resource_version: ($documents | list_read_at), active_owners: owners_checked($items)}
  else
# Else the whole report.
$once.counted
| if $only + $terms == [] then .
  # A pod of one of $only (none: any), whose labels match every term.
  else map(select((.metadata.namespace as $ns | $only == [] or any($only[]; . == $ns))
                  and ((.metadata.labels | objects // {}) as $l
                       | all($terms[];
                             .[2] == (.[1] as $v
                                      | $l[.[0]]
                                      | if $v == null then . != null else . == $v end)))))
  end
# The node and phase of every pod counted, of the API's types (lib.jq).
| [.[].status?.phase?] as $phases
| [.[].spec?.nodeName?] as $node_names
# The distribution, from the node names but null and "", sorted for the
# check and counted (`first`: freed before the lists below are made).
| first(($node_names - [null, ""] | sort) as $named_nodes
        | pods_state_checked($node_names; $named_nodes; $phases; $items)
        | $named_nodes | distribution(($node_names | length) - ($named_nodes | length)))
  as $distribution
| . as $pods
# The pods without a node: each unscheduled, or excused when an owner's kind
# is one of $owner_kinds (then said, never silent). Their fields are read by
# one path each over them all, each output object built once.
| ($node_names | nodeless($phases)) as $nodeless_at
| [$pods[$nodeless_at[]]] as $nodeless
| ($nodeless | excused_by($owner_kinds)) as $excused
| ($nodeless | scheduler_verdicts) as [$reasons, $messages]
| [range(0; $nodeless | length) as $i
   | $nodeless[$i].metadata
   | {namespace: .namespace, name: .name, uid: .uid,
      reason: $reasons[$i], message: $messages[$i]}] as $nodeless_pods
| ($nodeless_pods | without($excused.at)) as $unscheduled_pods
# The failed pods, read as the pods without a node are: each one's first
# terminated container's reason and message, else its own, else words.
| ($phases | indices("Failed")) as $failed_at
| [$pods[$failed_at[]]] as $failed
| ($failed | terminated_each) as $states
| ([$states[].reason] | or_else([$failed[].status.reason]; "Unknown") | canon_each)
  as $failed_reasons
| ([$states[].message] | or_else([$failed[].status.message]; "") | canon_each)
  as $failed_messages
| [range(0; $failed | length) as $i
   | $failed[$i].metadata
   | {namespace: .namespace, name: .name,
      reason: $failed_reasons[$i], message: $failed_messages[$i]}] as $failed_pods
# The names of the pods listed, of the API's type (lib.jq).
| pods_names_checked([$nodeless_pods[].name, $failed_pods[].name];
                     $nodeless_at + $failed_at; $items)
| ($phases | count("Running")) as $running
| ($phases | count("Pending")) as $pending
| ($phases | count("Succeeded")) as $succeeded
| {
    total: length,
    running: $running,
    pending: $pending,
    failed: ($failed_pods | length),
    succeeded: $succeeded,
    # Unknown, no phase at all, or a phase Kubernetes does not define: with
    # it, the counts after `total` add up to the total.
    other: (length - $running - $pending - ($failed_pods | length) - $succeeded),
    unscheduled: ($unscheduled_pods | length),
    unscheduled_pods: $unscheduled_pods,
    failed_pods: $failed_pods,
    distribution: $distribution,
    # Pods without a node not counted as unscheduled (--exclude-owner-kinds),
    # shaped like unscheduled_pods, and the owner kinds that excused them.
    excused: ($excused.at | length),
    excused_pods: [$nodeless_pods[$excused.at[]]],
    excused_kinds: ($excused.kinds | unique),
    # The namespaces that have counted pods, by name (jq's order), with
    # how many each has: ctrf.jq makes a test of each.
    # Without a selection, from the namespaces read of every pod (counted
    # beside the check of them): one read of every pod less.
    namespaces: (if $only + $terms == [] then $once.namespaces
                 else [.[].metadata.namespace] | group_by(.) | map({namespace: .[0], pods: length})
                 end)
  }
| . + {
    # A selection (`-n`, `-l`) that selects no pod fails, as `kubectl wait`
    # does: only the whole cluster may be empty (upstream's warning).
    verdict: (if .unscheduled > 0 or .failed > 0 then "fail"
              elif .total == 0 then (if $only + $terms == [] then "empty" else "fail" end)
              else "pass" end),
    # After list_items: the documents are known to be objects.
    resource_version: ($documents | list_read_at)
  }
  # workloads.jq's: null, not read. A driver that never reads them has no
  # word on them: no key (render.jq then says nothing of them).
| . + (if $workloads == "never" then {} else {missing: null, missing_workloads: null} end)
  # Left out by result.jq: it is the report's last key, as jaq's del moves
  # the last key into the place it empties.
| . + {active_owners: (if $workloads == "true" then $every_pod | owners_checked($items)
                       else null end)}
end
