#!/usr/bin/env bash
# Runs every test binary of the workspace, two at a time, then the doc tests.
#
# Usage: hack/run-tests.sh [CARGO_TEST_FLAGS...]   (make test passes the profile)
#
# `cargo test` runs one test binary after another. Most of ours wait on
# kubectl, bash, jq and the clock, so one binary at a time leaves about half
# of a 2-core machine idle; two at a time keeps `make test` within its
# 10 minutes on a fresh clone. Each binary runs as cargo runs it: in its
# package's folder. Its output is kept in a file and shown when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# How many test binaries run at once.
readonly PARALLEL=2

logs=$(mktemp -d "${TMPDIR:-/tmp}/verify-pods-tests.XXXXXX")
trap 'rm -rf -- "$logs"' EXIT

# Each test binary as "PACKAGE_DIR<TAB>EXECUTABLE", from cargo's own list.
"${CARGO:-cargo}" test "$@" --workspace --no-run --message-format=json-render-diagnostics |
  jq -r 'select(.reason == "compiler-artifact" and .profile.test and .executable != null)
         | "\(.manifest_path | sub("/Cargo.toml$"; ""))\t\(.executable)"' >"$logs/binaries"

# Runs one test binary in its package's folder; its output in a log of its own.
# shellcheck disable=SC2317 # called by xargs, through bash -c
run_one() {
  local package_dir=$1 executable=$2 log
  log=$logs/$(basename "$executable").log
  if (cd "$package_dir" && "$executable") >"$log" 2>&1; then
    local took
    took=$(grep -o 'finished in [0-9.]*s' "$log" | tail -1)
    printf 'ok      %s (%s)\n' "$(basename "$executable")" "$took"
  else
    printf 'FAILED  %s\n' "$(basename "$executable")"
    cat -- "$log"
    return 1
  fi
}
export -f run_one
export logs

status=0
# shellcheck disable=SC2016 # expanded by the bash that xargs starts
tr '\t' '\n' <"$logs/binaries" |
  xargs -d '\n' -n 2 -P "$PARALLEL" bash -c 'run_one "$1" "$2"' run_one || status=1

"${CARGO:-cargo}" test "$@" --workspace --doc || status=1
if ((status != 0)); then
  echo "run-tests: some tests failed (see above)" >&2
fi
exit "$status"
