#!/usr/bin/env bash
# The action's second step: `verify-pods check` (the one the first step put
# on PATH) with the inputs, then the user's args (a flag of theirs wins over
# the same flag of the inputs: the checker takes the last --format,
# --save-dir, --ctrf, --junit). The step's outputs come from the result the
# checker writes (--json: the result as --format json prints it, or the
# error object on exit 2), and are set on every path, a bad args included.
# The step fails when the check did: validation failed (1), or no verdict
# (2: could not observe, bad input, a usage error).
set -uo pipefail

# What the outputs say unless the checker's result says otherwise: no
# verdict. Written once, when the step ends, whatever ends it.
verdict=could-not-observe
code=2
report=
# shellcheck disable=SC2317 # run by the EXIT trap
outputs() {
  {
    echo "verdict=$verdict"
    echo "exit-code=$code"
    echo "report=$report"
  } >>"${GITHUB_OUTPUT:?}"
}
trap outputs EXIT

annotate() {
  local title=$1 message=$2
  # The runner's escaping of a workflow command (actions/toolkit).
  message=${message//'%'/'%25'}
  message=${message//$'\r'/'%0D'}
  message=${message//$'\n'/'%0A'}
  echo "::error title=$title::$message"
}

fail() {
  annotate "verify-pods" "$*"
  exit 2
}

# A folder of this step's own: the report output of an earlier use of the
# action in the job stays where it said.
work=$(mktemp -d "${RUNNER_TEMP:?}/verify-pods-check.XXXXXX") || fail "cannot create a folder in RUNNER_TEMP"
result=$work/result.json
printed=$work/stdout

# The args input, split as a shell splits words (xargs reads quotes and
# backslashes), never evaluated: no expansion, no command runs.
args=()
if [[ -n ${VERIFY_PODS_ARGS:-} ]]; then
  if ! xargs printf '%s\0' <<<"$VERIFY_PODS_ARGS" >"$work/words" 2>"$work/xargs"; then
    fail "the args input is not words a shell can split ($(head -n 1 "$work/xargs")): $VERIFY_PODS_ARGS"
  fi
  while IFS= read -r -d '' word; do args+=("$word"); done <"$work/words"
fi

command -v jq >/dev/null || fail "jq not found on PATH: the action reads the checker's result with it"

save_dir=${VERIFY_PODS_SAVE_DIR:-$RUNNER_TEMP/verify-pods}
command=(verify-pods check --format "${VERIFY_PODS_FORMAT:-github}" --save-dir "$save_dir" --json "$result")
[[ -z ${VERIFY_PODS_CTRF:-} ]] || command+=(--ctrf "$VERIFY_PODS_CTRF")
[[ -z ${VERIFY_PODS_JUNIT:-} ]] || command+=(--junit "$VERIFY_PODS_JUNIT")

# Stdout is also kept, to tell whether the checker annotated the step
# itself (--format github) or the action must.
exited=0
"${command[@]}" ${args[@]+"${args[@]}"} | tee -- "$printed" || exited=$?

# The result: its verdict, and for the error object its exit code, whether
# clap refused the command line, and the line.
read_result() {
  jq -r 'if type == "object" and (.verdict | IN("pass", "empty", "fail", "error"))
         then .verdict, (.exit_code // ""), (.usage // false), (.error // "" | split("\n")[0])
         else empty end' -- "$result" 2>/dev/null
}
said=
usage=false
found=
{ read -r found && read -r said_code && read -r usage && IFS= read -r said; } < <(read_result)
case $found in
  pass | empty) verdict=$found code=0 ;;
  fail) verdict=fail code=1 report=$result ;;
  error) code=${said_code:-2} ;;
  *) said="verify-pods check exited $exited without a result: the lines above say why" ;;
esac
if [[ -n $found && $code -ne $exited ]]; then
  # A result the exit code contradicts is no verdict (the checker was
  # killed after writing it, say).
  verdict=could-not-observe code=2 report=
  said="verify-pods check exited $exited, but its result says $found: no verdict"
fi

if [[ $code -ne 0 ]] && ! grep -q '^::error' -- "$printed"; then
  if [[ $found == fail ]]; then
    annotate "verify-pods" "validation failed (exit 1): pods are unscheduled or failed"
  elif [[ $usage == true ]]; then
    annotate "verify-pods usage error" "$said"
  else
    annotate "verify-pods gave no verdict" "$said"
  fi
fi
exit "$code"
