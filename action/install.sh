#!/usr/bin/env bash
# The action's first step: download a verify-pods release archive (or take
# the one named by the `archive` input), check it against the sha256
# published beside it (ARCHIVE.sha256), unpack it under RUNNER_TEMP and put
# its folder on GITHUB_PATH for the steps after this one.
set -euo pipefail

fail() {
  echo "::error title=verify-pods::$*"
  exit 1
}

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  *) target= ;;
esac

archive=${VERIFY_PODS_ARCHIVE:-}
if [[ -z $archive ]]; then
  [[ -n $target ]] || fail "no release of verify-pods for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
  tag=${VERIFY_PODS_VERSION:-${VERIFY_PODS_ACTION_REF:-}}
  [[ $tag == v* || -z $tag ]] || tag=v$tag
  [[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]] \
    || fail "no release to install: set the version input (vX.Y.Z), or use the action at a release tag (got '${tag}')"
  repository=${VERIFY_PODS_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}
  [[ -n $repository ]] || fail "the action's repository is unknown: set the archive input"
  archive="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/$tag/verify-pods-$tag-$target.tar.gz"
fi

work="${RUNNER_TEMP:?}/verify-pods-install"
rm -rf -- "$work"
mkdir -p -- "$work"
name=${archive##*/}
[[ $name == *.tar.gz ]] || fail "not a release archive (NAME.tar.gz): $archive"
if [[ $archive == http://* || $archive == https://* ]]; then
  echo "Downloading $archive"
  curl -fsSL --retry 3 -o "$work/$name" -- "$archive" || fail "cannot download $archive"
  curl -fsSL --retry 3 -o "$work/$name.sha256" -- "$archive.sha256" \
    || fail "cannot download its checksum $archive.sha256"
else
  [[ -f $archive ]] || fail "no archive at $archive"
  [[ -f $archive.sha256 ]] || fail "no checksum beside the archive: $archive.sha256"
  cp -- "$archive" "$work/$name"
  cp -- "$archive.sha256" "$work/$name.sha256"
fi

read -r published _ <"$work/$name.sha256" || true
if command -v sha256sum >/dev/null; then
  read -r actual _ < <(sha256sum -- "$work/$name")
else
  read -r actual _ < <(shasum -a 256 -- "$work/$name")
fi
[[ ${published:-} =~ ^[0-9a-f]{64}$ ]] || fail "$name.sha256 holds no sha256"
[[ $actual == "$published" ]] || fail "$name does not match its sha256 ($actual, published $published)"
echo "$name: sha256 $actual matches the published one"

tar -xzf "$work/$name" -C "$work"
bin="$work/${name%.tar.gz}"
[[ -x $bin/verify-pods ]] || fail "$name holds no ${name%.tar.gz}/verify-pods"
"$bin/verify-pods" --version
echo "$bin" >>"${GITHUB_PATH:?}"
