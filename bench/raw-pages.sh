#!/usr/bin/env bash
# make bench: download every pods page with `kubectl get --raw`, the way the
# paged drivers read a snapshot (a benchmark contender, not a driver).
#   raw-pages.sh LIMIT DIR    LIMIT 0 = one request; page N is written to DIR/page-N.json
# The continue token is read from the head of each page: the apiserver
# writes the list's metadata before its items.
set -euo pipefail
limit=$1
dir=$2
path="/api/v1/pods?limit=$limit"
n=1
while :; do
  kubectl get --raw "$path" >"$dir/page-$n.json"
  token=$(head -c 1024 "$dir/page-$n.json" | grep -o '"continue":"[^"]*"' | cut -d'"' -f4) || true
  [[ -n $token ]] || break
  path="/api/v1/pods?limit=$limit&continue=$token"
  n=$((n + 1))
done
