#!/usr/bin/env bash
# Builds (once) one Go tool the tests use, from the go.mod of its directory (tests/upstream, tests/s3server: each
# has go.mod, go.sum, tools.go and a build.sh that calls this script with its own arguments).
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/<cache name>/<key>
# where <key> hashes the tool directory's go.mod, go.sum, build.sh and tools.go, and this script. Prints that
# directory on its last line of stdout.
#
# usage: go_tool_build.sh DIR CACHE_NAME BINARY PACKAGE DESCRIPTION [LDFLAGS]
#   DIR          the tool's directory
#   CACHE_NAME   its folder in the cache (upstream, s3server)
#   BINARY       the executable's name in the build directory
#   PACKAGE      the Go package of its main, as go build takes it
#   DESCRIPTION  what it is, for the messages ("the upstream descheduler")
#   LDFLAGS      more linker flags (for example -X to set a package variable); the tool's build.sh passes them,
#                so they are part of the cache key
set -euo pipefail

if [ "$#" -ne 5 ] && [ "$#" -ne 6 ]; then
    echo "usage: $0 DIR CACHE_NAME BINARY PACKAGE DESCRIPTION [LDFLAGS]" >&2
    exit 2
fi
dir="$(cd "$1" && pwd)"
cache_name="$2"
binary="$3"
package="$4"
description="$5"
extra_ldflags="${6:-}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=prune_cache.sh
source "$here/prune_cache.sh"
cache_root="${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/$cache_name"

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is needed to build $description (go.mod says which version)" >&2
    exit 2
fi

key="$( (cd "$dir" && cat go.mod go.sum build.sh tools.go && cat "$here/go_tool_build.sh") | sha256sum | cut -c1-16)"
out="$cache_root/$key"
if [ -x "$out/$binary" ]; then
    mark_used "$out"
    prune_stale_builds "$cache_root" "$key"
    echo "$out"
    exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock-$key"   # sessions starting together: one builds, the others wait
flock 9
if [ -x "$out/$binary" ]; then
    echo "$out"
    exit 0
fi

started=$(date +%s)
staging="$(mktemp -d "$cache_root/.build-$key.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "build.sh: building $description into $out" >&2
(
    cd "$dir"
    # The same compiler flags as tests/controlplane/build.sh, so the packages both use compile once (one build
    # cache). -dwarf=false: the linker strips DWARF anyway (-w); not generating it saves 13% of the compile CPU.
    CGO_ENABLED=0 go build -mod=mod -trimpath -gcflags=all=-dwarf=false -ldflags="-s -w $extra_ldflags" \
        -o "$staging/$binary" "$package"
)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
mark_used "$out"
prune_stale_builds "$cache_root" "$key"
echo "build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$out"
