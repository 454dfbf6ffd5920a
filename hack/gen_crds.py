#!/usr/bin/env python3
"""Write the CRDs to manifests/crds/ (or check that the committed files are up to date).

The CRDs are built by jobflow_controller/local/crds.py, from the Volcano types written out there
and the Kubernetes 1.37 OpenAPI schemas shipped in kubernetes-validate (for the embedded
PodTemplateSpec and PersistentVolumeClaimSpec). The output is deterministic: the same inputs give
byte-identical files, and tests/unit/manifests/test_manifests_crds_generated.py fails when the
committed files differ from what this writes.

    .venv/bin/python hack/gen_crds.py                   # (re)write manifests/crds/*.yaml
    .venv/bin/python hack/gen_crds.py --check           # exit 1 if a committed file is stale
    .venv/bin/python hack/gen_crds.py --without-rules -  # the JobFlow CRD without CEL rules, to stdout
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jobflow_controller.local import crds  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=ROOT / "manifests" / "crds", help="directory to write to")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    parser.add_argument(
        "--without-rules",
        metavar="FILE",
        help="write only the JobFlow CRD without its CEL rules and bounds to FILE ('-' for stdout)",
    )
    args = parser.parse_args(argv)

    if args.without_rules is not None:
        text = crds.render_crd(crds.jobflow_crd(with_rules=False))
        if args.without_rules == "-":
            sys.stdout.write(text)
        else:
            Path(args.without_rules).write_text(text, encoding="utf-8")
        return 0

    stale: list[str] = []
    for name, text in crds.crd_files().items():
        path = args.output / name
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
