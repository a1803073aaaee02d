#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/<namespace>/<name> as a real directory
# (it resolves symlinks) and outside any git checkout (there it would skip git-ignored paths such as build/),
# so we copy the files git knows about (tracked and untracked, not ignored) to a temporary collection root.
set -euo pipefail
BIN="${1:-.venv/bin}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SANITY_ROOT="${TMPDIR:-/tmp}/descheduler-fleet-sanity"
DEST="$SANITY_ROOT/ansible_collections/descheduler/fleet"
rm -rf "$SANITY_ROOT"
mkdir -p "$DEST"
cd "$ROOT"
git ls-files --cached --others --exclude-standard -z | while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue
  mkdir -p "$DEST/$(dirname "$file")"
  cp -p "$file" "$DEST/$file"
done
cd "$DEST"
PATH="$ROOT/$BIN:$PATH"
# --requirements installs the sanity tools (pylint, yamllint, voluptuous...) into the venv on first use.
exec ansible-test sanity --python 3.11 --local --requirements --color no "${@:2}"
