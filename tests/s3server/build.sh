#!/usr/bin/env bash
# Builds (once) the S3-compatible server the run store tests use: gofakes3 (github.com/johannesboyne/gofakes3, MIT),
# a real S3 protocol server (SigV4, buckets, objects, ListObjectsV2) with an on-disk backend, at the version pinned in
# go.mod. Tests start it on a free port (tests/integration/s3server.py).
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/s3server/<key>
# where <key> hashes go.mod, go.sum, tools.go and this script. Prints that directory on its last line of stdout.
# A cold build (empty Go module and build caches) takes about 30 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../prune_cache.sh
source "$here/../prune_cache.sh"
cache_root="${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/s3server"

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is needed to build the S3 test server (go.mod says which version)" >&2
    exit 2
fi

key="$(cd "$here" && cat go.mod go.sum build.sh tools.go | sha256sum | cut -c1-16)"
out="$cache_root/$key"
if [ -x "$out/gofakes3" ]; then
    mark_used "$out"
    prune_stale_builds "$cache_root" "$key"
    echo "$out"
    exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock-$key"   # sessions starting together: one builds, the others wait
flock 9
if [ -x "$out/gofakes3" ]; then
    echo "$out"
    exit 0
fi

started=$(date +%s)
staging="$(mktemp -d "$cache_root/.build-$key.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "build.sh: building the S3 test server into $out" >&2
(
    cd "$here"
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o "$staging/gofakes3" \
        github.com/johannesboyne/gofakes3/cmd/gofakes3
)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
mark_used "$out"
prune_stale_builds "$cache_root" "$key"
echo "build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$out"
