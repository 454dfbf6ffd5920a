"""Client configuration the way client-go's `BuildConfigFromFlags` resolves it.

`--kubeconfig` and `--master` both empty: in-cluster first (the service-account token and CA a
Deployment gets), then the default loading rules (`$KUBECONFIG`, `~/.kube/config`). A `--master`
overrides the kubeconfig's server URL, as it does for every Kubernetes binary.
"""

from __future__ import annotations

import os

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException


class ConfigError(RuntimeError):
    """No usable client configuration; the message says what was tried."""


def build_config(kubeconfig: str | None = None, master: str | None = None) -> k8s_client.Configuration:
    configuration = k8s_client.Configuration()
    if not kubeconfig and not master:
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)
            return configuration
        except ConfigException:
            pass  # not in a pod: fall through to the default loading rules, as client-go does
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None
    if path is None:
        default = os.path.expanduser("~/.kube/config")
        path = default if os.path.exists(default) else None
    if path is not None:
        try:
            k8s_config.load_kube_config(config_file=path, client_configuration=configuration)
        except (ConfigException, OSError) as err:
            raise ConfigError(f"invalid kubeconfig {path}: {err}") from err
    elif not master:
        raise ConfigError("no configuration: not in a cluster, no --kubeconfig, $KUBECONFIG or ~/.kube/config")
    if master:
        configuration.host = master.rstrip("/")
    return configuration
