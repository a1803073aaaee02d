#!/usr/bin/env bash
# Builds (once) the control-plane binaries the integration tests run: kube-apiserver,
# kube-controller-manager, kube-scheduler (from k8s.io/kubernetes at the release pinned
# in go.mod) and etcd (embedded server, etcd/main.go).
#
# Binaries are cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/controlplane/<key>
# where <key> hashes go.mod, go.sum, the Go sources and this script: a warm run only
# checks that the four files exist; a fresh machine downloads modules through the
# default GOPROXY and builds once (see README.md, "Tests", for the measured time).
#
# Prints the directory holding the binaries on its last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../prune_cache.sh
source "$here/../prune_cache.sh"
cache_root="${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/controlplane"
binaries=(kube-apiserver kube-controller-manager kube-scheduler etcd)

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is needed to build the test control plane (go.mod says which version);" \
         "install it from https://go.dev/dl/ or point TEST_KUBECONFIG at a cluster of yours" >&2
    exit 2
fi

key="$(cd "$here" && cat go.mod go.sum build.sh $(find . -name '*.go' | LC_ALL=C sort) | sha256sum | cut -c1-16)"
out="$cache_root/$key"

complete() {
    local name
    for name in "${binaries[@]}"; do
        [ -x "$out/$name" ] || return 1
    done
}

if complete; then
    mark_used "$out"
    prune_stale_builds "$cache_root" "$key"
    echo "$out"
    exit 0
fi

mkdir -p "$cache_root"
# Several test sessions may start at once on a shared machine: one builds, the others wait.
exec 9>"$cache_root/.lock-$key"
flock 9
if complete; then
    echo "$out"
    exit 0
fi

started=$(date +%s)
# Stamp the release like an official build: clients and the collection read it from /version.
k8s_version="$(cd "$here" && go list -mod=mod -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
version_flags=""
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    version_flags+=" -X $package.gitVersion=$k8s_version -X $package.gitMajor=1 -X $package.gitMinor=$minor"
    version_flags+=" -X $package.gitTreeState=clean"
done
staging="$(mktemp -d "$cache_root/.build-$key.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "build.sh: building the test control plane into $out (first run on this machine: downloads modules and compiles, see README.md for the time)" >&2
(
    cd "$here"
    # CGO off: static binaries, no C toolchain needed on the test machine. -dwarf=false: the linker strips DWARF
    # anyway (-w); not generating it saves 13% of the compile CPU (measured on k8s.io/client-go/kubernetes: 93
    # CPU-seconds instead of 107). tests/go_tool_build.sh compiles with the same flags, so shared packages compile once.
    CGO_ENABLED=0 go build -mod=mod -trimpath -gcflags=all=-dwarf=false -ldflags="-s -w$version_flags" -o "$staging/" \
        k8s.io/kubernetes/cmd/kube-apiserver \
        k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler \
        ./etcd
)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
mark_used "$out"
prune_stale_builds "$cache_root" "$key"
echo "build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$out"
