#!/usr/bin/env bash
# Builds (once) the S3-compatible server the run store tests use: gofakes3 (github.com/johannesboyne/gofakes3, MIT),
# a real S3 protocol server (SigV4, buckets, objects, ListObjectsV2) with an on-disk backend, at the version pinned in
# go.mod. Tests start it on a free port (tests/integration/s3server.py).
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/s3server/<key>
# (tests/go_tool_build.sh builds and caches it). Prints that directory on its last line of stdout.
# A cold build (empty Go module and build caches) takes about 30 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../go_tool_build.sh" "$here" s3server gofakes3 github.com/johannesboyne/gofakes3/cmd/gofakes3 \
    "the S3 test server"
