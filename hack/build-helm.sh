#!/usr/bin/env bash
# Builds helm from its Go module (helm.sh/helm/v4) into a cache keyed by version, outside the
# repository, beside the control plane's binaries. A second run with the binary present does nothing.
# Prints the path of the helm to use on stdout.
#
# A helm already on PATH is used as is when its major version is ours (4): the chart's tests need
# Helm 4 (server-side apply, its lint rules), and any 4.x has them. HELM, when it names an
# executable, is used as is too.
#
# helm.sh/helm/v4 has no replace directives, so `go install module@version` builds it from its own
# go.mod and go.sum, checked against the checksum database: no wrapper module is needed (the control
# plane's wrappers in hack/kube and hack/etcd exist because k8s.io/kubernetes has replaces).
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-4.3.2}
HELM_MAJOR=${HELM_VERSION%%.*}
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/jobflow-controller/helm
OUT=${HELM_BIN_DIR:-$CACHE_ROOT/v$HELM_VERSION}

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=

log() { printf 'build-helm: %s\n' "$*" >&2; }

# `helm version --template` prints e.g. v4.3.2; the major version is what we check.
major_of() { "$1" version --template '{{.Version}}' 2>/dev/null | sed -n 's/^v\([0-9][0-9]*\)\..*/\1/p'; }

if [ -n "${HELM:-}" ] && [ -x "${HELM}" ]; then
  if [ "$(major_of "$HELM")" = "$HELM_MAJOR" ]; then echo "$HELM"; exit 0; fi
  log "HELM=$HELM is not helm $HELM_MAJOR.x; building v$HELM_VERSION"
fi
if [ -x "$OUT/helm" ]; then echo "$OUT/helm"; exit 0; fi
if on_path=$(command -v helm 2>/dev/null) && [ "$(major_of "$on_path")" = "$HELM_MAJOR" ]; then
  log "using $on_path ($("$on_path" version --template '{{.Version}}'))"
  echo "$on_path"; exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed to build helm"; exit 1; }
mkdir -p "$OUT"
start=$(date +%s)
tmp=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log "building helm v$HELM_VERSION from helm.sh/helm/v$HELM_MAJOR"
# Helm's own Makefile sets these: the version (else `helm version` says v4.3), an empty metadata
# (a release build), and the tree state.
pkg="helm.sh/helm/v$HELM_MAJOR/internal/version"
GOBIN="$tmp" go install -trimpath -buildvcs=false \
  -ldflags="-s -w -X $pkg.version=v$HELM_VERSION -X $pkg.metadata= -X $pkg.gitTreeState=clean" \
  "helm.sh/helm/v$HELM_MAJOR/cmd/helm@v$HELM_VERSION"
mv "$tmp/helm" "$OUT/helm"

"$OUT/helm" version --short >&2
log "done in $(( $(date +%s) - start ))s into $OUT"
echo "$OUT/helm"
