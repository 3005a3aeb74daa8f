#!/bin/sh
# Installs hymt from a source tree into its own virtual environment: what the Dockerfile runs,
# and what tests/docker runs against a scratch environment.
#
#   HYMT_SRC     the source tree (default: the directory above this script)
#   HYMT_VENV    the environment to create (default: /opt/hymt)
#   HYMT_EXTRAS  optional extras, comma-separated (default: none; "ray" for replicas and Ray Data)
#   HYMT_VENV_ARGS  extra `python -m venv` arguments (tests: --system-site-packages)
#   PYTHON       the interpreter that creates the environment (default: python3)
set -eu

src=${HYMT_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
venv=${HYMT_VENV:-/opt/hymt}
extras=${HYMT_EXTRAS:-}
python=${PYTHON:-python3}

# shellcheck disable=SC2086  # HYMT_VENV_ARGS is a list of words
"$python" -m venv ${HYMT_VENV_ARGS:-} "$venv"
"$venv/bin/python" -m pip install --no-cache-dir --upgrade pip
target="$src"
if [ -n "$extras" ]; then
    target="$src[$extras]"
fi
# Linux wheels of torch on PyPI carry their CUDA runtime: no other index is needed.
"$venv/bin/python" -m pip install --no-cache-dir "$target"
"$venv/bin/hymt" --version
