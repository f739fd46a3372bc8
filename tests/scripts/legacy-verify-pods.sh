#!/usr/bin/env bash
# The legacy verify_pods pattern that verify-pods replaces, kept for the race
# tests: FIVE separate reads of the cluster. Four counts come from
# `kubectl get pods --no-headers | wc -l` (all pods, then one phase each),
# the unscheduled pods from `kubectl get pods -o json | jq`. Each read may
# see a different cluster state, so the printed status can be impossible
# (`20 total, 20 running, 0 pending (1 unscheduled)`).
#
# EXCLUDED: comma-separated namespaces to skip (the tests pass the checker's
# default list, so on a cluster that does not change this script agrees
# with the checker and only the race makes it wrong).
set -euo pipefail

selector=""
IFS=, read -ra excluded <<<"${EXCLUDED:-}"
for namespace in "${excluded[@]}"; do
  selector+="${selector:+,}metadata.namespace!=$namespace"
done

# pods [PHASE]: the table rows (NAMESPACE NAME ...) of the pods in PHASE.
pods() {
  local fields=$selector
  if [[ -n ${1:-} ]]; then
    fields+="${fields:+,}status.phase=$1"
  fi
  kubectl get pods --all-namespaces ${fields:+"--field-selector=$fields"} --no-headers 2>/dev/null
}

total=$(pods | wc -l)
pending=$(pods Pending | wc -l)
failed_rows=$(pods Failed)
running=$(pods Running | wc -l)
unscheduled_pods=$(kubectl get pods --all-namespaces -o json | jq -r --arg excluded "${EXCLUDED:-}" '
  ($excluded | split(",")) as $skip
  | .items[]
  | select(.metadata.namespace as $ns | any($skip[]; . == $ns) | not)
  | select(.status.phase == "Pending")
  | select(any(.status.conditions[]?; .type == "PodScheduled" and .status == "False" and .reason == "Unschedulable"))
  | "\(.metadata.namespace)/\(.metadata.name)"')

failed=0
if [[ -n $failed_rows ]]; then
  failed=$(wc -l <<<"$failed_rows")
fi
unscheduled=0
if [[ -n $unscheduled_pods ]]; then
  unscheduled=$(wc -l <<<"$unscheduled_pods")
fi

echo "Pod status: $total total, $running running, $pending pending ($unscheduled unscheduled), $failed failed"
if ((unscheduled > 0)); then
  echo "Unscheduled pods ($unscheduled):"
  while read -r pod; do echo "  $pod"; done <<<"$unscheduled_pods"
fi
if ((failed > 0)); then
  echo "Failed pods ($failed):"
  while read -r namespace name _; do echo "  $namespace/$name: Failed"; done <<<"$failed_rows"
fi
if ((unscheduled > 0 || failed > 0)); then
  exit 1
fi
