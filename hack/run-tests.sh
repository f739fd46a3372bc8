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
  local package_dir=$1 executable=$2 log reset=()
  log=$logs/$(basename "$executable").log
  # Default signal handling, as cargo test gives: a shell that started make
  # in the background left SIGINT ignored, which the signal tests send.
  if env --default-signal true 2>/dev/null; then reset=(env --default-signal); fi
  if (cd "$package_dir" && "${reset[@]}" "$executable") >"$log" 2>&1; then
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
# The longest binaries first, so that the two lanes end together.
longest_first=" parity wrapper projection faults watch golden live workloads contract race paged "
while IFS=$'\t' read -r package_dir executable; do
  name=$(basename "$executable")
  name=${name%-*}
  rank=999
  if [[ $longest_first == *" $name "* ]]; then
    rank=${longest_first%%" $name "*}
    rank=${#rank}
  fi
  printf '%s\t%s\t%s\n' "$rank" "$package_dir" "$executable"
done <"$logs/binaries" | sort -n -k1,1 | cut -f2- >"$logs/ordered"

# shellcheck disable=SC2016 # expanded by the bash that xargs starts
tr '\t' '\n' <"$logs/ordered" |
  xargs -d '\n' -n 2 -P "$PARALLEL" bash -c 'run_one "$1" "$2"' run_one || status=1

"${CARGO:-cargo}" test "$@" --workspace --doc || status=1
if ((status != 0)); then
  echo "run-tests: some tests failed (see above)" >&2
fi
exit "$status"
