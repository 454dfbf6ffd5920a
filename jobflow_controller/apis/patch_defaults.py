"""The defaults the JobFlow CRD gives `patch.jobSpec`, which `apis.patch` must not take for the user's.

The CRD gives `patch.jobSpec` the full JobSpec schema with its defaults, so the API server writes
`maxRetry: 3` and `queue: "default"` into every patch it stores. This is the table of them, by field
pattern; a unit test compares it with manifests/crds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["CRD_DEFAULTS"]

#: A container's fields that the CRD defaults (Kubernetes' `+default` markers), relative to it.
_CONTAINER_DEFAULTS: Final[Mapping[str, Any]] = {
    "env[].valueFrom.configMapKeyRef.name": "",
    "env[].valueFrom.fileKeyRef.optional": False,
    "env[].valueFrom.secretKeyRef.name": "",
    "envFrom[].configMapRef.name": "",
    "envFrom[].secretRef.name": "",
    "livenessProbe.grpc.service": "",
    "ports[].protocol": "TCP",
    "readinessProbe.grpc.service": "",
    "startupProbe.grpc.service": "",
}
#: A pod volume's fields that the CRD defaults, relative to it.
_VOLUME_DEFAULTS: Final[Mapping[str, Any]] = {
    "azureDisk.fsType": "ext4",
    "azureDisk.readOnly": False,
    "cephfs.secretRef.name": "",
    "cinder.secretRef.name": "",
    "configMap.name": "",
    "csi.nodePublishSecretRef.name": "",
    "flexVolume.secretRef.name": "",
    "iscsi.iscsiInterface": "default",
    "iscsi.secretRef.name": "",
    "projected.sources[].configMap.name": "",
    "projected.sources[].secret.name": "",
    "rbd.keyring": "/etc/ceph/keyring",
    "rbd.pool": "rbd",
    "rbd.secretRef.name": "",
    "rbd.user": "admin",
    "scaleIO.fsType": "xfs",
    "scaleIO.secretRef.name": "",
    "scaleIO.storageMode": "ThinProvisioned",
    "storageos.secretRef.name": "",
}
_POD: Final = "tasks[].template.spec"
#: Every default of the JobFlow CRD's `patch.jobSpec` schema, by field pattern (`[]`: any entry of a
#: list), as manifests/crds has them (a unit test compares). The API server writes each into a
#: stored patch wherever the object holding it is present, so a patch value equal to its field's
#: default says nothing of what the user meant and `apply_patch` ignores it. Entries of a list that
#: is replaced, not merged (`envFrom`, `imagePullSecrets`, `projected.sources`), are taken as written.
CRD_DEFAULTS: Final[Mapping[str, Any]] = {
    "maxRetry": 3,
    "queue": "default",
    "networkTopology.mode": "hard",
    "tasks[].partitionPolicy.minPartitions": 0,
    "tasks[].partitionPolicy.networkTopology.mode": "hard",
    f"{_POD}.imagePullSecrets[].name": "",
    **{
        f"{_POD}.{containers}[].{name}": default
        for containers in ("containers", "initContainers", "ephemeralContainers")
        for name, default in _CONTAINER_DEFAULTS.items()
    },
    **{f"{_POD}.volumes[].{name}": default for name, default in _VOLUME_DEFAULTS.items()},
}
