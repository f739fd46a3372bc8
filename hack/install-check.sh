#!/usr/bin/env bash
# The README's install, checked on this checkout (make test runs it, so CI
# does on a clean clone): `cargo install --path cli` into a temporary root,
# then the installed tools found through PATH: `verify-pods --version` names
# the commit, and the real kubectl's plugin lookup runs `kubectl verify-pods`.
#
#   hack/install-check.sh TARGET_DIR
#
# TARGET_DIR is the workspace's target directory: installing from it in the
# tests' profile (`testing`) reuses what `make build` compiled instead of
# building everything again with LTO; what is checked here is the install
# itself (the binaries, their names on PATH, the version), not the profile.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${1:?usage: hack/install-check.sh TARGET_DIR}

root=$(mktemp -d)
trap 'rm -rf -- "$root"' EXIT

fail() {
  echo "install-check: $*" >&2
  exit 1
}

cargo install --quiet --locked --offline --profile testing --path cli --root "$root" --target-dir "$target_dir"
export PATH="$root/bin:$PATH"

for tool in verify-pods kubectl-verify_pods; do
  [[ $(command -v "$tool") == "$root/bin/$tool" ]] || fail "$tool is not the installed one"
done

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
version=$(verify-pods --version)
[[ $version == "verify-pods $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml) (commit $commit)" ]] \
  || fail "verify-pods --version says: $version (expected the commit $commit)"

# kubectl finds plugins on PATH only; an empty kubeconfig keeps it offline.
export KUBECONFIG=/dev/null
# (It exits 1 when any plugin on PATH is shadowed or not executable.)
plugins=$(kubectl plugin list --name-only 2>/dev/null || true)
grep -qx 'kubectl-verify_pods' <<<"$plugins" \
  || fail "kubectl plugin list does not show kubectl-verify_pods"
help=$(kubectl verify-pods --help) || fail "kubectl verify-pods --help failed"
grep -q '^Usage: kubectl verify-pods <COMMAND>' <<<"$help" \
  || fail "kubectl verify-pods --help does not show its usage: $help"

echo "install-check: verify-pods and kubectl verify-pods installed and found ($version)"
