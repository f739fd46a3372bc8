# lib.jq: definitions shared by the canonical programs (all but result.jq
# and decision.jq). The checker and scriptgen put this text in front of
# each of them (see checker/src/programs.rs), so a message or an escaping rule
# is written once here and reaches text, Markdown and annotations alike.

# Type tests by jq's order of values (null < false < true < numbers <
# strings < arrays < objects), the same in jq and jaq. They run on every field
# of every pod, and jaq's `type` is a chain of four comparisons written in jq
# (jaq-std's defs.jq): two comparisons cost half of one `type`.
def is_number: . > true and . < "";
def is_string: . >= "" and . < [];

# A number from the input where Kubernetes writes a string or a count, as
# every engine prints it alike: an integer below 10^17 as its digits (1.0 is
# 1, -0.0 is 0); any other number as null, since jq 1.6, jq 1.8 and jaq each
# print 1e20, 1.5e-7 or 12345678901234567890 their own way. Other values
# stay as they are. (Only `floor` gives jaq an integer; `+ 0` drops jq's -0.)
def canon:
  if is_number | not then .
  elif . < 100000000000000000 and . > -100000000000000000 and . == floor then
    floor + 0
  else null end;

# Any value as text: strings as they are, anything else as JSON.
def text: if is_string then . else tojson end;

# ---- The API's types. Every field a rule reads has its API type, or is
# unset (absent or null, as the API allows: a pod just created has no
# status). Anything else is refused, never read: a number where a name
# belongs printed each engine its own way, and a replicas of "3" read as 1.

# A value's type as a phrase, never the value: jq 1.6 and jaq print some
# numbers (NaN, 1e1000, 1.0) each their own way.
def a_type:
  type
  | if . == "null" then "null"
    elif . == "array" or . == "object" then "an " + .
    else "a " + .
    end;
# An int32 count, as the API's replicas and generations are: an integer from
# 0 to 2147483647 (NaN equals nothing, not even its floor).
def is_count: is_number and . >= 0 and . <= 2147483647 and . == floor;
# Input: the values of one field over many objects, null where unset.
# Whether all are unset or strings, natively, without a jq step per value:
# the strings lie between "" and [] in jq's order, so the least and the
# greatest value but null tell. (`sort`, not `min` and `max`: jaq runs
# those as `min_by(.)`, a jq step per value.) sorted_strings: the same test
# on values already sorted, nulls left out, when the caller keeps them sorted
# for counting as well.
def sorted_strings: . == [] or ((.[0] | is_string) and (.[-1] | is_string));
def strings_or_unset: . - [null] | sort | sorted_strings;
# Whether all are unset or counts, in the same way. A non-integer in the
# range prints with "." or "e" in every engine, NaN as null or NaN; jaq
# prints an integral float as 3.0, which the caller's closer look (is_count)
# then lets pass.
def counts_or_unset:
  . - [null] | sort
  | . == []
    or ((.[0] | is_number and . >= 0)
        and (.[-1] | is_number and . <= 2147483647)
        and (tojson as $digits
             | all(".", "e", "E", "n", "N"; . as $c | $digits | index($c) == null)));
# What a field of the API must be, and the test of it.
def a_string: "a string";
def a_count: "an integer from 0 to 2147483647";
def an_object: "an object";
def is_a($wanted):
  if $wanted == a_string then is_string
  elif $wanted == a_count then is_count
  else type == "object"
  end;
# The first problem of an object's fields ($fields: [[name, value, a_string
# or a_count]], in order), as "NAME is A TYPE, not WANTED"; null if none.
def field_problem($fields):
  first($fields[]
        | .[2] as $wanted
        | select(.[1] != null and (.[1] | is_a($wanted) | not))
        | "\(.[0]) is \(.[1] | a_type), not \($wanted)")
  // null;

# Code points that must not reach a CI log as they are: C0 controls and DEL
# (newline, tab, ESC sequences), C1 controls, the line and paragraph
# separators, and the invisible direction marks and overrides that make a log
# line read differently from its bytes.
def hidden_control:
  # Printable ASCII, nearly every code point of a log, is decided in two
  # comparisons: these run on every code point of every line.
  if . < 127 then . < 32
  else . == 127 or (. >= 128 and . < 160)
    or . == 1564 or . == 8206 or . == 8207 or . == 8232 or . == 8233
    or (. >= 8234 and . <= 8238) or (. >= 8294 and . <= 8297)
  end;

# One record, one log line: every hidden control becomes a space.
def one_line:
  text
  # Fast path: printable ASCII is kept as it is. utf8bytelength == length
  # means ASCII; tojson escapes exactly the controls, DEL, `"` and `\` of ASCII
  # (jq 1.6 to 1.8 and jaq alike), so no escape means no control.
  | if utf8bytelength == length and (tojson | length) == length + 2 then .
    else [explode[] | if hidden_control then 32 else . end] | implode end;

# Whitespace as Unicode has it (space, no-break spaces, the U+2000 range,
# ideographic space) or a hidden control.
def blank:
  if . < 127 then . <= 32
  else . == 160 or . == 5760 or (. >= 8192 and . <= 8202)
    or . == 8239 or . == 8287 or . == 12288 or hidden_control
  end;

# The text without whitespace at its end: kubelet's eviction messages end
# with ". ", and no line, annotation or table cell of ours may.
def trim_end:
  text
  # Fast path: a text that ends in printable ASCII other than a space (string
  # slices count code points in jq and jaq alike) has nothing to trim.
  | if .[-1:] | . > " " and . < "\u007f" then .
    else
      # Walk back from the end over the blanks only.
      explode as $codes
      | ($codes | length | until(. == 0 or ($codes[. - 1] | blank | not); . - 1)) as $kept
      | $codes[:$kept] | implode
    end;

# One value as a phrase of a log line: one line, no trailing whitespace.
def phrase: one_line | trim_end;

# The parts that are not null, each through f, joined by ": " when f left
# something ("Unschedulable: 0/3 nodes are available..."); "" when none is.
def parts_joined(f; $parts):
  reduce ($parts[] | select(. != null) | f | select(. != "")) as $p
    (""; if . == "" then $p else . + ": " + $p end);

# The counts of a report as the status line prints them. The prefix up to
# `failed` is fixed (scripts and `verify-pods triage` match it); a term for
# every other phase that has pods follows, so that the numbers after `total`
# (but the unscheduled ones, in parentheses) add up to the total.
# ", M not yet created" when pods the workloads want are missing
# (`missing` is null or absent when the workloads were not read).
def missing_term: if .missing > 0 then ", \(.missing) not yet created" else "" end;
def status_counts:
  "\(.total) total, \(.running) running, \(.pending) pending"
  + " (\(.unscheduled) unscheduled), \(.failed) failed"
  + (if .succeeded > 0 then ", \(.succeeded) succeeded" else "" end)
  + (if .other > 0 then ", \(.other) other" else "" end)
  + missing_term;

# The sentences the three outputs share.
# Pass and empty in upstream verify_pods()'s own words (CI logs are grepped
# for them); a failure's last line sums it up (render.jq opens it with
# upstream's banner).
def verdict_message:
  # The pods it counts: those an owner kind excused (excused_line) are not
  # scheduled, and not counted in "all N" (a pass must be true).
  if .verdict == "pass" then
    "Scheduling validation PASSED: all \(.total - .excused) pods scheduled successfully"
  elif .verdict == "empty" then "No pods were created - bundle may be empty"
  # A selection (-n, -l) that selects no pod fails with nothing to count.
  elif .total == 0 and (.missing // 0) == 0 then
    "Pod validation failed: the selection selects no pod"
  else "Pod validation failed: \(.unscheduled) unscheduled, \(.failed) failed" + missing_term
  end;
def unscheduled_heading: "Unscheduled pods (\(.unscheduled))";
# The pods without a node that the excluded owner kinds excused: no excuse
# goes unsaid. In words, not a flag: the checker's flag and a host's
# variable name the same list, and both drivers print this line.
def excused_line:
  "\(.excused) \(if .excused == 1 then "pod" else "pods" end) without a node not counted: owned by "
  + (.excused_kinds | map(text)
     | reduce .[] as $k (""; if . == "" then $k else . + ", " + $k end))
  + " (excluded owner kinds)";
def failed_heading: "Failed pods (\(.failed))";
def events_missing_note:
  if .events == null then "FailedScheduling events: not collected"
  else "FailedScheduling events: none for the unscheduled pods"
  end;


# ---- The digest. $n is the list limit (--list-limit): how many
# groups, pods of a group and nodes the text, the annotations and the step
# summary list; 0 lists every pod as one line, as before the digest. The
# groups are result.jq's (largest first); their pods are looked up in the
# snapshot's order, so "the first N" is the same in every output.

# "1 pod", "12 pods".
def pods_count: if . == 1 then "1 pod" else "\(.) pods" end;
# The group of pods not yet created, and one workload of it:
# `StatefulSet data/nats: 1 of 3`.
def missing_heading: "\(.missing | pods_count) not yet created";
def workload_line:
  "\(.kind) \(.namespace)/\(.name): \(.created) of \(.wanted // "?, not yet reconciled")";
# Input: a result. The workloads its digest lists (all with a limit of 0).
def missing_shown($n):
  if $n == 0 then .missing_workloads else .missing_workloads[:$n] end;
# The cause of a group of unscheduled pods: the scheduler's reason and
# message through f, or, for the pods without a PodScheduled=False
# condition, words that say so.
def no_scheduler_condition: "no scheduler condition";
def unscheduled_cause(f):
  if .reason == null and .message == null then no_scheduler_condition
  else parts_joined(f; [.reason, .message]) end;
# The cause of a group of failed pods: its reason, and the message when
# every pod of it has the same one.
def failed_cause(f): parts_joined(f; [.reason, .message]);
# ---- The events of each group. With a list limit N > 0 every
# unscheduled group shown (the first min(N, groups)) gets its own newest
# events, the same number each: N divided by the groups shown (rounded
# down; at least 1, as at most N groups are shown). So the event lines are at
# most N in all, and no group's events are crowded out by a larger group's.
# Input: a result.
# floor($n / $d) for integers $n >= 0, $d >= 1, without `/` (a float in jaq):
# long division over the powers of two up to 2^31 (--list-limit has at most
# 9 digits), so a huge limit costs 32 steps, not $n.
def quotient($n; $d):
  reduce (reduce range(0; 31) as $i ([1]; . + [.[length - 1] * 2]) | reverse | .[]) as $p
    ({q: 0, r: $n};
     if $p * $d <= .r then {q: (.q + $p), r: (.r - $p * $d)} else . end)
  | .q;
def events_share($n):
  ([.unscheduled_groups | length, $n] | min) as $shown
  | if $shown == 0 then 0 else [quotient($n; $shown), 1] | max end;
# Input: a result. For each group of $groups (unscheduled groups of the
# result): {group, matched: how many events its pods have, events: the
# newest $share of them, newest first}. The events are every matched event
# (events.jq), newest first, so "none" here is true.
def group_events($groups; $share):
  (.unscheduled_pods
   | map({key: ([.namespace, .name] | tojson), value: ([.reason, .message] | tojson)})
   | from_entries) as $group_of
  | [.events // [] | .[] | {key: $group_of[[.namespace, .pod] | tojson], event: .}] as $keyed
  | $groups[]
  | . as $group
  | ([.reason, .message] | tojson) as $key
  | [$keyed[] | select(.key == $key) | .event] as $mine
  | {group: $group, matched: ($mine | length), events: $mine[:$share]};

# The events: every one that matched, newest first (list limit 0), or the
# newest of each group (events_share).
def events_heading($n):
  if $n == 0 then
    "FailedScheduling events for the unscheduled pods (\(.events | length), newest first)"
  else
    "FailedScheduling events for the unscheduled pods, newest first,"
    + " at most \(events_share($n)) a group"
  end;
# Input: one of group_events. The line that opens a group's events: its
# count, how many of its events are shown, its cause.
def group_events_count:
  if .matched == 0 then "no FailedScheduling events"
  else "\(.events | length) of \(.matched) \(if .matched == 1 then "event" else "events" end)"
  end;
def group_events_line(f):
  "\(.group.count | pods_count) (\(group_events_count)): \(.group | unscheduled_cause(f))";
# One event as a line of text (the text and the annotations).
def event_line:
  "\(.last_seen | text) \(.namespace | text)/\(.pod | text) (x\(.count | text)):"
  + " \(.message | trim_end)";
# Input: a result. The first $n pods of one of its groups, in the snapshot's
# order.
def unscheduled_members($group; $n):
  [.unscheduled_pods[] | select(.reason == $group.reason and .message == $group.message)]
  | .[:$n];
def failed_members($group; $n):
  [.failed_pods[] | select(.reason == $group.reason)] | .[:$n];
# What a list of $shown of $count leaves out; "" when nothing.
def and_more($count; $shown):
  if $count > $shown then "… and \($count - $shown) more" else "" end;
# Input: groups. What showing the first $n leaves out; "" when nothing.
def groups_left($n):
  .[$n:] as $left
  | if $left == [] then ""
    else
      "… and \($left | length) more \(if ($left | length) == 1 then "group" else "groups" end)"
         + " (\($left | map(.count) | add | pods_count))"
    end;
# Input: a result. The figures of the distribution summary: the nodes
# (`<none>` is no node), min / median (the lower one of an even count;
# its index counted, not divided: jaq divides to a float) /
# max pods per node, the pods on no node, and the nodes by pods, most first
# (ties by name).
def node_figures:
  [.distribution[] | select(.node != "<none>")] as $nodes
  | ($nodes | map(.pods) | sort) as $counts
  | { nodes: ($nodes | length),
      min: $counts[0],
      median: $counts[[range(2; $counts | length; 2)] | length],
      max: $counts[-1],
      none: ([.distribution[] | select(.node == "<none>") | .pods] | add // 0),
      most: ($nodes | sort_by([0 - .pods, .node])) };
def node_summary:
  "\(.nodes) nodes, pods per node: min \(.min), median \(.median), max \(.max); <none>: \(.none)";

# Input: the documents of one list, as `jq -s` reads them: one List
# (`kubectl get pods -A -o json`), or the raw pages of a paged list
# (`kubectl get --raw '/api/v1/pods?limit=N'`, then `&continue=TOKEN`), in
# order. Output: the items of every document, joined. The pages are one list
# only when each carries the first page's metadata.resourceVersion (the API
# server pins continue tokens to it) and the last one has no continue token:
# anything else is refused, never counted. $what names the list in errors.
def list_version: if (.metadata | type) == "object" then .metadata.resourceVersion else null end;
# The version a snapshot was read at, which the result names: the first
# document's (every page carries it), when it is a non-empty string; else
# null, unknown. `kubectl get -o json` prints a List it assembled itself,
# with resourceVersion "": such a snapshot has no version to name.
def list_read_at: .[0] | list_version | if is_string and . != "" then . else null end;
def list_continue: if (.metadata | type) == "object" then .metadata["continue"] // "" else "" end;
# A kind as a phrase: "an EventList", "a Node"; a kind that is not a string,
# or "" (a List's items without kind), as JSON: "a " would name nothing; a
# number as every engine prints it (`canon`: NaN, Infinity and 1e20 as null).
def a_kind:
  if is_string and . != "" then
    .[0:1] as $first
    | (if any("A", "E", "I", "O", "U"; . == $first) then "an " else "a " end) + one_line
  else "a kind " + (canon | tojson) end;
# Only the lists of $kind are read: a document must be an object, and its
# kind, when set, "\($kind)List" or "List"; an item of it whose kind is set
# must be $kind (`kubectl get pods -o json` sets it on every item; a raw page
# of the API server on none). Anything else is refused in one line naming
# what was found and what was expected, never counted: a NodeList or an
# EventList counted as pods was a false pass. $command is how to get the
# right list.
def list_expected($kind; $command):
  (if $kind == "Pod" then "a PodList or a List of Pods"
   else "an \($kind)List or a List of \($kind)s"
   end)
  + " (\($command))";
# Input: the documents. Each is an object (null or a bare array is no list,
# a single Deployment no list of pods) whose kind, when set, is a list of
# $kind; checked before its items array, so that the refusal names what the
# document is rather than what it lacks.
def documents_listing($what; $kind; $command):
  list_expected($kind; $command) as $expected
  | (first(.[] | select(type != "object") | a_type) // null) as $found
  | if $found != null then error("\($what) is \($found), expected \($expected)") else . end
  | (first(.[] | .kind | select(. != null and . != "\($kind)List" and . != "List")) // null)
    as $other
  | if $other != null then error("\($other | a_kind), expected \($expected)") else . end;
# Input: the documents, each with an items array. The items of every
# document, a PodList's too (an item of a raw page carries no kind, one of
# `kubectl get -o json` its own): `indices` counts them natively, without a
# jq test per item.
def items_listing($kind; $command):
  (first(.[] | [.items[].kind?]
         | select(length > (indices($kind) | length) + (indices(null) | length))
         | .[] | select(. != null and . != $kind)) // null) as $item
  | if $item != null then
      error("a list holding \($item | a_kind), expected \(list_expected($kind; $command))")
    else . end;
def list_items($what; $kind; $command):
  if length == 0 then error("\($what) is empty: expected a JSON document") else . end
  | documents_listing($what; $kind; $command)
  | if any(.[]; (.items | type) != "array")
    then error("\($what) has no items array") else . end
  | items_listing($kind; $command)
  # The version, when set, is a string, as the API server writes it (a page
  # of a number would be refused live: so it is offline).
  | (first(.[] | list_version | select(. != null and (is_string | not))) // null) as $odd
  | if $odd != null then
      error("\($what) has a resourceVersion that is \($odd | a_type), not a string")
    else . end
  | (.[0] | list_version) as $version
  | [.[] | list_version | select(. != $version)] as $others
  | if $others != []
    then
      error("\($what) mixes pages of resourceVersion \($version | tojson)"
            + " and \($others[0] | tojson): not one list")
    else . end
  | if .[-1] | list_continue != "" then
      error("\($what) is incomplete: its last page has a continue token")
    else . end
  | [.[].items[]];

# Input: an item of a list. What is wrong with it, or null: that it is no
# object, or the first of the objects holding the fields (`parts`, as for
# field_problem: metadata, spec, status), or of the fields (`fields`, read
# only once their parts are objects or unset), that does not have its API
# type: " is null, not an object", ": spec.nodeName is a number, not a string".
def item_problem(parts; fields):
  if type != "object" then " is \(a_type), not an object"
  else field_problem(parts) // field_problem(fields) | if . == null then null else ": " + . end
  end;
# Input: items. The first of them (in their order) that has a problem, as
# [its place from 0, the problem]; else null.
def first_problem(problem):
  . as $items
  | first(range(0; length) as $at
          | $items[$at]
          | problem as $problem
          | select($problem != null)
          | [$at, $problem])
    // null;

# Input: values sorted. Whether one is there twice: found by `group_by`
# (native; `unique` is a jq step per group in jaq), a slice at a time, so
# that its working set (some 200 bytes a value) stays small at 150k pods.
# Equal values lie together: a repeat is within a slice or across the
# border of two.
def repeats:
  . as $sorted
  | any(range(0; length; 4096) as $at
        | ($sorted[$at:$at + 4096] | (group_by(.) | length) < length)
          or ($at > 0 and $sorted[$at - 1] == $sorted[$at]);
        .);
# Input: the uids of some objects (strings, or null where unset); $sorted
# the strings among them, sorted (sorted here without it). null when no uid
# is there twice; else [uid, the place of its first object, the place of
# the first object that repeats an earlier one's uid], places from 0.
def repeated_uid($sorted):
  . as $uids
  | if $sorted | repeats | not then null
    else [range(0; length) as $at | select($uids[$at] != null) | [$uids[$at], $at]]
         | group_by(.[0]) | map(select(length > 1) | [.[0][0], .[0][1], .[1][1]]) | min_by(.[2])
    end;
def repeated_uid: repeated_uid(. - [null] | sort);

# ---- Each pod once, with the API's types (report.jq, on list_items'
# output). Two copies of one list joined, or a hand-merged file, counted a
# pod twice: a ReplicaSet wanting 2 with 1 pod passed. A null item was
# counted as a pod null/null, and a nodeName of NaN as a node.

# Input: an item. Its namespace/name in an error, "?" for either that is no
# string; with its place ($at, from 0): "pod 3 (web/api-1)".
def namespace_name:
  .metadata | if type == "object" then [.namespace, .name] else [null, null] end
  | map(if is_string then one_line else "?" end) | "\(.[0])/\(.[1])";
def pod_named($at): "pod \($at + 1)" + if type == "object" then " (\(namespace_name))" else "" end;
# Each field is checked where the rules read it, in one native pass over
# the values read (strings_or_unset); the pods are looked at one by one only
# when something is wrong, to name the first. Every pod's namespace and uid
# (pods_once), the node and phase of every pod counted, the name of every
# pod listed (pods_state_checked, pods_names_checked).

# Input: an item. What is wrong with its namespace or uid (or with it: no
# object), or null.
def pod_identity_problem:
  item_problem([["metadata", .metadata, an_object]];
               [["metadata.namespace", .metadata.namespace, a_string],
                ["metadata.uid", .metadata.uid, a_string]]);
# Input: the items of a snapshot; $metadata their metadata (`[.[].metadata?]`:
# a list shorter than the items says one is no object), $namespaces the
# namespaces in it (`[$metadata[].namespace?]`), which report.jq then counts
# by, and $named_namespaces those that are set, sorted (`- [null] | sort`):
# read and sorted once for both. The items, or an error naming the first item
# (in the snapshot's order) that is null or no object, or whose namespace
# or uid is of another type, else the first that repeats an earlier one's
# uid (one state holds each pod once), and that earlier one.
# The uids are read again only to name a pod: held, they were 50 bytes a pod
# more at this part's peak.
def pods_once($metadata; $namespaces; $named_namespaces):
  . as $pods
  | first([$metadata[].uid?] | [length, (. - [null] | sort)]) as [$uid_count, $named_uids]
  | if indices(null) == []
       and $uid_count == length and ($namespaces | length) == length
       and all($named_uids, $named_namespaces; sorted_strings)
    then .
    else first_problem(pod_identity_problem) as $found
         | if $found == null then .
           else error(($pods[$found[0]] | pod_named($found[0])) + $found[1])
           end
    end
  | (if $named_uids | repeats then [$metadata[].uid?] | repeated_uid($named_uids) else null end)
    as $repeated
  | if $repeated == null then .
    else $repeated[0] as $uid | $repeated[1] as $first | $repeated[2] as $again
         | error("\($pods[$first] | pod_named($first)) and \($pods[$again] | pod_named($again))"
                 + " have the same uid \($uid | tojson): each pod is counted once")
    end;
# Input: a pod of $items (the snapshot's items). The pod, or an error naming
# it by its place there, and $problem (unless null).
def pod_refused($items; $problem):
  if $problem == null then .
  else . as $pod | ($items | indices([$pod])[0]) as $at | error(pod_named($at) + $problem) end;
# Input: the pods counted; $node_names and $phases theirs, read by `?`
# paths. The pods, or an error naming the first whose spec.nodeName or
# status.phase (or spec, status) is of another type.
def pods_state_refused($items):
  (first(.[] | . as $pod
         | item_problem([["spec", .spec, an_object], ["status", .status, an_object]];
                        [["spec.nodeName", .spec.nodeName, a_string],
                         ["status.phase", .status.phase, a_string]])
         | select(. != null) | [$pod, .]) // null) as $found
  | if $found == null then . else $found[0] | pod_refused($items; $found[1]) end;
def pods_state_checked($node_names; $phases; $items):
  length as $counted
  | if all($node_names, $phases; length == $counted and strings_or_unset) then .
    else pods_state_refused($items)
    end;
# The same, with $named_nodes the node names but null and "", sorted
# (report.jq counts the pods of each node from them).
def pods_state_checked($node_names; $named_nodes; $phases; $items):
  length as $counted
  | if all($node_names, $phases; length == $counted)
       and ($named_nodes | sorted_strings) and ($phases | strings_or_unset)
    then .
    else pods_state_refused($items)
    end;
# Input: the pods counted; $names the names of those the output lists, at
# the places $listed of the pods. The pods, or an error naming the first of
# them whose name is of another type.
def pods_names_checked($names; $listed; $items):
  if $names | strings_or_unset then .
  else . as $pods
       | (first($listed[]
                | $pods[.]
                | field_problem([["metadata.name", .metadata.name, a_string]]) as $problem
                | select($problem != null)
                | [., $problem]) // null) as $found
       | if $found == null then . else $found[0] | pod_refused($items; ": " + $found[1]) end
  end;
