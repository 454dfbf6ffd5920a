#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from the Go module proxy into a cache keyed
# by version, outside the repository. A second run with the binaries present does nothing.
#
# The wrapper modules hack/kube and hack/etcd hold only go.mod and go.sum. When go.sum is absent
# (first run after a version bump) the script regenerates both from the exact k8s.io/kubernetes
# go.mod, deriving the staging replaces from it instead of a hard-coded list.
#
# KUBEBUILDER_ASSETS, when it names a folder that holds kube-apiserver and etcd, is used as is;
# kube-controller-manager is then still built into the cache unless that folder holds it too.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
HACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/jobflow-controller/control-plane
OUT=${CONTROL_PLANE_BIN_DIR:-$CACHE_ROOT/v$K8S_VERSION}

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=

log() { printf 'build-control-plane: %s\n' "$*" >&2; }

have_all() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ] && [ -x "$1/kube-controller-manager" ]; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
  if [ -x "$KUBEBUILDER_ASSETS/kube-controller-manager" ]; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"; echo "$KUBEBUILDER_ASSETS"; exit 0
  fi
fi
if have_all "$OUT"; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || { log "go is not installed; it is needed to build the control plane"; exit 1; }
mkdir -p "$OUT"
start=$(date +%s)

STG="v0.${K8S_VERSION#1.}"
MINOR=$(cut -d. -f2 <<<"$K8S_VERSION")

prepare_kube_module() {
  cd "$HACK/kube"
  if [ -f go.sum ] && grep -q "k8s.io/kubernetes v$K8S_VERSION" go.mod; then return; fi
  log "generating hack/kube/go.mod for k8s.io/kubernetes v$K8S_VERSION"
  rm -f go.mod go.sum
  go mod init jobflow-controller.invalid/hack/kube >/dev/null 2>&1
  local modfile
  modfile=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | python3 -c 'import json,sys;print(json.load(sys.stdin)["GoMod"])')
  go mod edit -go="$(sed -n 's/^go \(.*\)$/\1/p' "$modfile")"
  for m in $(sed -n 's|^.*[[:space:]]\(k8s\.io/[^[:space:]]*\) => \./staging/src/.*|\1|p' "$modfile"); do
    go mod edit -replace="$m=$m@$STG"
  done
  go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION"
  go get -tool "k8s.io/kubernetes/cmd/kube-controller-manager@v$K8S_VERSION"
  go mod tidy
}

prepare_etcd_module() {
  cd "$HACK/etcd"
  if [ -f go.sum ] && grep -q "go.etcd.io/etcd/server/v3 v$ETCD_VERSION" go.mod; then return; fi
  log "generating hack/etcd/go.mod for etcd v$ETCD_VERSION"
  rm -f go.mod go.sum
  go mod init jobflow-controller.invalid/hack/etcd >/dev/null 2>&1
  go get -tool "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  go mod tidy
}

build_kube() {
  local ld="-s -w" date
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$date"
  done
  cd "$HACK/kube"
  go mod download
  for cmd in kube-apiserver kube-controller-manager; do
    if [ -x "$OUT/$cmd" ]; then continue; fi
    log "building $cmd v$K8S_VERSION"
    go build -mod=readonly -trimpath -buildvcs=false -tags=notest,grpcnotrace -ldflags="$ld" \
      -o "$OUT/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$OUT/$cmd.tmp" "$OUT/$cmd"
  done
}

build_etcd() {
  [ -x "$OUT/etcd" ] && return
  cd "$HACK/etcd"
  go mod download
  log "building etcd v$ETCD_VERSION"
  go build -mod=readonly -trimpath -buildvcs=false \
    -ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v$ETCD_VERSION" \
    -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

prepare_etcd_module
build_etcd
prepare_kube_module
build_kube

"$OUT/kube-apiserver" --version >&2
# awk reads all of it: with pipefail, `head -1` closing the pipe early would kill etcd with SIGPIPE (exit 141).
"$OUT/etcd" --version | awk 'NR == 1' >&2
log "done in $(( $(date +%s) - start ))s into $OUT"
echo "$OUT"
