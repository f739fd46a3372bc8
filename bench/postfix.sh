#!/usr/bin/env bash
# postfix.sh: a BENCHMARK BASELINE, not a canonical program. It has the shape
# of the upstream post-fix verify_pods(): the snapshot is held in a bash
# variable and three jq processes read it from here-strings (one for the
# counts, one for the node distribution, one for the listing of unscheduled
# and failed pods). The jq expressions below only have to compute the same
# counts as report.jq, so that bench/run.py can check that every contender
# agrees; the real rules live in checker/programs/ and nowhere else.
#
# Usage: EXCLUDED=ns,ns postfix.sh   (kubectl on PATH; bench/run.py puts a
# stub first that prints a saved snapshot). Prints the counts as one JSON
# line first, then the distribution and the listing.
set -euo pipefail

verify_pods_postfix() {
  local pods_json counts distribution listing
  pods_json=$(kubectl get pods --all-namespaces -o json) || return 2

  counts=$(jq -c --arg excluded "$EXCLUDED" '
    ($excluded | split(",")) as $ex
    | [.items[] | select(.metadata.namespace as $ns | $ex | index([$ns]) | not)]
    | {
        total: length,
        running: map(select(.status.phase == "Running")) | length,
        pending: map(select(.status.phase == "Pending")) | length,
        failed: map(select(.status.phase == "Failed")) | length,
        succeeded: map(select(.status.phase == "Succeeded")) | length,
        unscheduled: map(select(.status.phase == "Pending"
                                and (.spec.nodeName // "") == ""
                                and (any(.metadata.ownerReferences[]?; .kind == "Job") | not)))
                     | length
      }' <<<"$pods_json")

  distribution=$(jq -r --arg excluded "$EXCLUDED" '
    ($excluded | split(",")) as $ex
    | [.items[] | select(.metadata.namespace as $ns | $ex | index([$ns]) | not)
      | (.spec.nodeName // "") | if . == "" then "<none>" else . end]
    | group_by(.)[] | "  \(.[0]): \(length)"' <<<"$pods_json")

  listing=$(jq -r --arg excluded "$EXCLUDED" '
    ($excluded | split(",")) as $ex
    | .items[] | select(.metadata.namespace as $ns | $ex | index([$ns]) | not)
    | select(.status.phase == "Failed"
             or (.status.phase == "Pending" and (.spec.nodeName // "") == ""))
    | "  \(.metadata.namespace)/\(.metadata.name) \(.status.phase)"' <<<"$pods_json")

  printf '%s\n' "$counts" "Pod distribution by node:" "$distribution" "Pods:" "$listing"
}

verify_pods_postfix
