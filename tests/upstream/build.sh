#!/usr/bin/env bash
# Builds (once) the real kubernetes-sigs descheduler at the release pinned in go.mod, for the tests that compare
# plans with what it does (tests/integration/test_upstream_agreement.py). Its Kubernetes libraries are those of
# tests/controlplane (go.mod's replace lines), so one Go build cache serves both.
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/upstream/<key>
# where <key> hashes go.mod, go.sum and this script. Prints that directory on its last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../prune_cache.sh
source "$here/../prune_cache.sh"
cache_root="${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/upstream"

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is needed to build the upstream descheduler (go.mod says which version)" >&2
    exit 2
fi

key="$(cd "$here" && cat go.mod go.sum build.sh tools.go | sha256sum | cut -c1-16)"
out="$cache_root/$key"
if [ -x "$out/descheduler" ]; then
    mark_used "$out"
    prune_stale_builds "$cache_root" "$key"
    echo "$out"
    exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock-$key"   # sessions starting together: one builds, the others wait
flock 9
if [ -x "$out/descheduler" ]; then
    echo "$out"
    exit 0
fi

started=$(date +%s)
staging="$(mktemp -d "$cache_root/.build-$key.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "build.sh: building the upstream descheduler into $out" >&2
(
    cd "$here"
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o "$staging/descheduler" \
        sigs.k8s.io/descheduler/cmd/descheduler
)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
mark_used "$out"
prune_stale_builds "$cache_root" "$key"
echo "build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$out"
