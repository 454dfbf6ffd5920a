#!/usr/bin/env bash
# Build upstream Volcano's vc-controller-manager from a source tree, for bench/versus.py.
#
#   hack/build-upstream.sh SOURCE_DIR [VERSION]
#
# SOURCE_DIR is a checkout (or `git archive`) of github.com/volcano-sh/volcano at VERSION (default
# v1.13.0): the Go module proxy does not serve volcano.sh/volcano itself, only its dependencies.
# The binary and a wrapper that starts only the JobFlow and JobTemplate controllers go to
# ${JOBFLOW_CACHE:-~/.cache/jobflow-controller}/upstream/VERSION/; the wrapper's path is printed.
set -euo pipefail
src=${1:?usage: hack/build-upstream.sh SOURCE_DIR [VERSION]}
version=${2:-v1.13.0}
out=${JOBFLOW_CACHE:-$HOME/.cache/jobflow-controller}/upstream/$version
mkdir -p "$out"
if [ ! -x "$out/vc-controller-manager" ]; then
  (cd "$src" && go build -o "$out/vc-controller-manager" ./cmd/controller-manager)
fi
cat > "$out/jobflow-controllers" <<WRAPPER
#!/usr/bin/env bash
exec "$out/vc-controller-manager" --controllers=jobflow-controller,jobtemplate-controller "\$@"
WRAPPER
chmod +x "$out/jobflow-controllers"
echo "$out/jobflow-controllers"
