#!/usr/bin/env bash
# Builds (once) the real kubernetes-sigs descheduler at the release pinned in go.mod, for the tests that compare
# plans with what it does (tests/integration/test_upstream_agreement.py). Its Kubernetes libraries are those of
# tests/controlplane (go.mod's replace lines), so one Go build cache serves both.
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/upstream/<key>
# (tests/go_tool_build.sh builds and caches it). Prints that directory on its last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../go_tool_build.sh" "$here" upstream descheduler sigs.k8s.io/descheduler/cmd/descheduler \
    "the upstream descheduler"
