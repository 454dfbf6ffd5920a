# syntax=docker/dockerfile:1
#
# The jobflow-controller image:
#
#   docker build -t jobflow-controller:0.1.0 .
#
# Not built in this repository's CI or tests: the machines that run them have no container engine.
# It is kept correct by reading; tests/unit/manifests/test_manifests_deploy.py checks that it agrees
# with manifests/deployment.yaml (user id, entry point) and leaves out the local control plane.
#
# Two stages on the same base. The first builds wheels for the project and every dependency; the
# second installs them offline (--no-index) and holds no compiler, no source tree and no wheel
# files: they are bind-mounted for the one RUN that installs them (BuildKit, the default builder
# since Docker 23).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Only what the wheel is built from (see .dockerignore): the metadata, the README it names, and the
# three top-level packages, without jobflow_controller/local.
COPY pyproject.toml README.md ./
COPY jobflow_controller ./jobflow_controller
COPY informers ./informers
COPY workqueue ./workqueue
# Wheels of the project and its runtime dependencies (no extras). Every dependency publishes
# manylinux wheels; pip fetches those rather than building anything.
RUN python -m pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="jobflow-controller" \
      org.opencontainers.image.description="Volcano's JobFlow and JobTemplate controllers, in Python" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
# Unbuffered logs reach `kubectl logs` at once; no .pyc writes at run time, as the root filesystem
# is read-only (pip has compiled the installed modules already).
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# The runtime set only: no extras, so neither cryptography nor kubernetes-validate (test and local
# tooling) is in the image; the third command fails the build should a dependency bring either in.
# The local control plane is not either (.dockerignore keeps jobflow_controller/local out of the
# build context, so out of the wheel), nor the kubectl plugin (kubectl_jobflow/, a client tool: the
# context holds only the three runtime packages); the last two commands fail the build should either
# be importable.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links=/wheels jobflow-controller \
    && jobflow-controller --version \
    && python -c "import importlib.util as u, sys; bad = [m for m in ('cryptography', 'kubernetes_validate', 'pydantic') if u.find_spec(m)]; sys.exit(f'not runtime dependencies, yet installed: {bad}' if bad else 0)" \
    && python -c "import importlib.util as u, sys; sys.exit('the local control plane is in the image: jobflow_controller.local' if u.find_spec('jobflow_controller.local') else 0)" \
    && python -c "import importlib.util as u, sys; sys.exit('the kubectl plugin is in the image: kubectl_jobflow' if u.find_spec('kubectl_jobflow') else 0)" \
    && python -c "import importlib.util as u, sys; sys.exit('the SDK is in the image: jobflow_sdk' if u.find_spec('jobflow_sdk') else 0)"
# The uid/gid manifests/deployment.yaml runs as (runAsUser/runAsGroup 65532), without a home or a
# login shell.
RUN groupadd --system --gid 65532 jobflow \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin jobflow
USER 65532:65532
# 8081: /metrics (--listen-address); 11251: /healthz, /livez, /readyz (--healthz-address).
EXPOSE 8081 11251
ENTRYPOINT ["jobflow-controller"]
