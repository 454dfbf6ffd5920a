"""Client configuration the way client-go's `BuildConfigFromFlags` resolves it.

`--kubeconfig` and `--master` both empty: in-cluster first (the service-account token and CA a
Deployment gets), then the default loading rules (`$KUBECONFIG`, `~/.kube/config`). A `--master`
overrides the kubeconfig's server URL, as it does for every Kubernetes binary.
"""

from __future__ import annotations

import os

import yaml

from jobflow_controller.kube.client_library import ConfigException
from jobflow_controller.kube.client_library import client as k8s_client
from jobflow_controller.kube.client_library import config as k8s_config


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


#: Where a pod finds its own namespace (the service-account volume), as clientcmd reads it.
IN_CLUSTER_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def build_client_config(
    kubeconfig: str | None = None, context: str | None = None
) -> tuple[k8s_client.Configuration, str]:
    """What kubectl resolves from `--kubeconfig` and `--context`: a configuration and a namespace.

    clientcmd's deferred loading rules, which a kubectl plugin is expected to follow (kubectl hands
    a plugin its arguments, not a resolved config): an explicit `--kubeconfig`, else every file of
    `$KUBECONFIG` merged, else `~/.kube/config`; only when none exists, the in-cluster config. The
    namespace is the chosen context's, else "default" (in a pod: `$POD_NAMESPACE` or the
    service-account namespace). This differs from `build_config` on purpose: a controller prefers
    its pod's identity, a command-line tool the user's kubeconfig.
    """
    if kubeconfig:
        if not os.path.exists(kubeconfig):
            raise ConfigError(f"stat {kubeconfig}: no such file or directory")
        paths = [kubeconfig]
    else:
        listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
        paths = [p for p in listed or [os.path.expanduser("~/.kube/config")] if os.path.exists(p)]
    configuration = k8s_client.Configuration()
    if not paths:
        if context:
            raise ConfigError(f'context "{context}" does not exist')
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)
        except ConfigException as err:
            raise ConfigError(
                "no configuration: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, and not in a cluster"
            ) from err
        return configuration, _in_cluster_namespace()
    contexts, current = _contexts(paths)
    context = context or current
    if not context:
        raise ConfigError("no configuration: no current-context in the kubeconfig and no --context")
    if context not in contexts:
        raise ConfigError(f'context "{context}" does not exist')
    joined = os.pathsep.join(paths)
    try:
        k8s_config.load_kube_config(config_file=joined, context=context, client_configuration=configuration)
    except (ConfigException, OSError, KeyError, TypeError) as err:
        raise ConfigError(f"invalid kubeconfig {joined}: {err}") from err
    return configuration, contexts[context] or "default"


def _contexts(paths: list[str]) -> tuple[dict[str, str], str | None]:
    """Each context's namespace, and the current context, merged as clientcmd merges files: the
    first file to name a context or set current-context wins (the Python client's own merger lets
    the last current-context win, so it is not asked)."""
    contexts: dict[str, str] = {}
    current: str | None = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                loaded = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as err:
            raise ConfigError(f"invalid kubeconfig {path}: {err}") from err
        if not isinstance(loaded, dict):
            continue
        for entry in loaded.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") and entry["name"] not in contexts:
                body = entry.get("context")
                namespace = body.get("namespace") if isinstance(body, dict) else None
                contexts[str(entry["name"])] = str(namespace or "")
        current = current or (str(loaded["current-context"]) if loaded.get("current-context") else None)
    return contexts, current


def _in_cluster_namespace() -> str:
    from_env = os.environ.get("POD_NAMESPACE")
    if from_env:
        return from_env
    try:
        with open(IN_CLUSTER_NAMESPACE_FILE, encoding="utf-8") as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"
