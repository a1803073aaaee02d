# Sourced by tests/controlplane/build.sh and tests/go_tool_build.sh (the upstream descheduler, the S3 server)
# after they pick their cache key.
# Every use of a build touches its .used stamp; builds no checkout has used for PRUNE_DAYS days are removed, so
# the keys of old go.mod/source versions do not pile up (a build is hundreds of MB). A build still in use by another
# checkout is touched by that checkout's runs, and a build in progress lives under .build-* until it is renamed.
PRUNE_DAYS="${DESCHEDULER_FLEET_CACHE_DAYS:-30}"

mark_used() {  # $1: the build directory just used
    touch "$1/.used" 2>/dev/null || true
}

prune_stale_builds() {  # $1: cache root, $2: the key in use (kept)
    local dir
    for dir in "$1"/*/; do
        dir="${dir%/}"
        [ -d "$dir" ] || continue
        [ "$(basename "$dir")" = "$2" ] && continue
        local stamp="$dir/.used"
        [ -e "$stamp" ] || stamp="$dir"
        if [ -n "$(find "$stamp" -maxdepth 0 -mtime +"$PRUNE_DAYS" 2>/dev/null)" ]; then
            rm -rf "$dir" && echo "build.sh: removed $dir (unused for $PRUNE_DAYS days)" >&2
        fi
    done
    return 0
}
