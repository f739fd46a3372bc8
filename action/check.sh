#!/usr/bin/env bash
# The action's second step: `verify-pods check` (the one the first step put
# on PATH) with the inputs, its verdict and exit code as the step's outputs.
# The step fails when the check did: validation failed (1) or could not
# observe (2).
set -uo pipefail

fail() {
  echo "::error title=verify-pods::$*"
  exit 2
}

# The args input, split as a shell splits words (xargs reads quotes and
# backslashes), never evaluated: no expansion, no command runs.
args=()
if [[ -n ${VERIFY_PODS_ARGS:-} ]]; then
  words=$(mktemp)
  xargs printf '%s\0' <<<"$VERIFY_PODS_ARGS" >"$words" || fail "cannot split the args input: $VERIFY_PODS_ARGS"
  while IFS= read -r -d '' word; do args+=("$word"); done <"$words"
  rm -f -- "$words"
fi

save_dir=${VERIFY_PODS_SAVE_DIR:-${RUNNER_TEMP:?}/verify-pods}
command=(verify-pods check --format "${VERIFY_PODS_FORMAT:-github}" --save-dir "$save_dir")
# The CTRF results are always written (to RUNNER_TEMP without the ctrf
# input): their verdict tells an empty cluster from a pass, both exit 0.
ctrf=${VERIFY_PODS_CTRF:-$RUNNER_TEMP/verify-pods-results.json}
command+=(--ctrf "$ctrf")
[[ -z ${VERIFY_PODS_JUNIT:-} ]] || command+=(--junit "$VERIFY_PODS_JUNIT")

code=0
"${command[@]}" ${args[@]+"${args[@]}"} || code=$?
case $code in
  0)
    verdict=pass
    # ctrf.jq writes one line; its extra says the verdict.
    if grep -qF '"verify-pods.verdict":"empty"' -- "$ctrf" 2>/dev/null; then verdict=empty; fi
    ;;
  1) verdict=fail ;;
  *) verdict=could-not-observe ;;
esac
report=
[[ $code -ne 1 || ! -f $save_dir/report.json ]] || report=$save_dir/report.json
{
  echo "verdict=$verdict"
  echo "exit-code=$code"
  echo "report=$report"
} >>"${GITHUB_OUTPUT:?}"
if [[ $code -eq 2 ]]; then
  echo "::error title=verify-pods::could not observe the pods (exit 2): the line above says why"
elif [[ $code -eq 1 && ${VERIFY_PODS_FORMAT:-github} != github ]]; then
  echo "::error title=verify-pods::validation failed (exit 1)"
fi
exit "$code"
