#!/usr/bin/env python3
"""Write the CRDs and the CEL-rules patch (or check that the committed files are up to date).

Everything is built by the crdgen package beside this script, from the Volcano types written out there
and the Kubernetes 1.36 OpenAPI schemas shipped in kubernetes-validate (for the embedded
PodTemplateSpec and PersistentVolumeClaimSpec), and written to:

    manifests/crds/flow.volcano.sh_jobflows.yaml         upstream's JobFlow CRD (no CEL rules)
    manifests/crds/flow.volcano.sh_jobtemplates.yaml     upstream's JobTemplate CRD
    manifests/crd-validation/jobflow-validation.yaml     the optional Component's JSON patch (the rules)
    hack/local-crds/batch.volcano.sh_jobs.yaml           Volcano's Job CRD, for the local control plane
    hack/local-crds/bus.volcano.sh_commands.yaml         Volcano's Command CRD, likewise

The output is deterministic: the same inputs give byte-identical files, and
tests/unit/manifests/test_manifests_crds_generated.py fails when the committed files differ from
what this writes.

    .venv/bin/python hack/gen_crds.py            # (re)write the files
    .venv/bin/python hack/gen_crds.py --check    # exit 1 if a committed file is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script, its own directory (hack/) is on sys.path, and with it the crdgen package.
import crdgen

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository to write into")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args(argv)

    stale: list[str] = []
    for name, text in crdgen.generated_files().items():
        path = args.root / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(text.encode())} bytes)")
    if stale:
        print("stale (run hack/gen_crds.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
