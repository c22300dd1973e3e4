#!/usr/bin/env bash
# Installs the pinned Python packages of scripts/requirements-test.txt with
# pip when any is missing or at another version. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
req=scripts/requirements-test.txt
if python3 - "$req" <<'PY'
import sys
from importlib import metadata
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        sys.exit(1)
    if have != want:
        sys.exit(1)
PY
then
    exit 0
fi
echo "plugrt: installing Python packages from $req"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r "$req"
