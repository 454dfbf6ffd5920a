"""`python -m jobflow_controller.local up|down|status|simulate`: a control plane for a person.

`up` starts etcd, kube-apiserver and kube-controller-manager in the background, installs the CRDs
and prints the `export KUBECONFIG=...` line; `down` stops them and removes their state; `status`
says whether they run; `simulate` runs the Volcano job simulator in the foreground.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

from jobflow_controller.local.controlplane import ControlPlane, ControlPlaneError
from jobflow_controller.local.processes import stop_process_group


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(os.environ.get("JOBFLOW_LOCAL_DIR") or Path(base) / "jobflow-controller" / "local")


def _state_file() -> Path:
    return state_dir() / "state.json"


def _read_state() -> dict[str, object] | None:
    try:
        state: dict[str, object] = json.loads(_state_file().read_text())
        return state
    except (FileNotFoundError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cmd_up(args: argparse.Namespace) -> int:
    state = _read_state()
    if state and all(_alive(int(p)) for p in dict(state["pids"]).values()):  # type: ignore[call-overload]
        print(f"already running\nexport KUBECONFIG={state['kubeconfig']}")
        return 0
    cmd_down(args)
    root = state_dir()
    root.mkdir(parents=True, exist_ok=True)
    plane = ControlPlane(root_dir=root)
    try:
        plane.start()
    except ControlPlaneError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    pids = {name: proc.pid for name, proc in plane.processes.items()}
    _state_file().write_text(
        json.dumps({"kubeconfig": str(plane.kubeconfig_path), "server": plane.server, "pids": pids})
    )
    from jobflow_controller.local.kubectl import install_crds, kubectl

    # Where a Volcano install keeps its controllers, and where `jobflow-controller` takes its lease.
    kubectl(plane.kubeconfig_path, "create", "namespace", "volcano-system")
    if not args.no_crds:
        install_crds(plane.kubeconfig_path)
    print(f"control plane up at {plane.server} (logs in {root})")
    print(f"export KUBECONFIG={plane.kubeconfig_path}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    state = _read_state()
    if state:
        for pid in dict(state["pids"]).values():  # type: ignore[call-overload]
            stop_process_group(int(pid))
        print("control plane stopped")
    shutil.rmtree(state_dir(), ignore_errors=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state = _read_state()
    if not state:
        print("not running")
        return 1
    pids = dict(state["pids"])  # type: ignore[call-overload]
    for name, pid in pids.items():
        print(f"{name}: pid {pid} {'running' if _alive(int(pid)) else 'exited'}")
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0 if all(_alive(int(p)) for p in pids.values()) else 1


def cmd_simulate(args: argparse.Namespace) -> int:
    from jobflow_controller.kube.clientset import Clientset
    from jobflow_controller.kube.config import build_config
    from jobflow_controller.kube.event_sink import KubeEventSink
    from jobflow_controller.kube.rest import RestClient
    from jobflow_controller.local.simulator import COMPONENT, JobSimulator
    from jobflow_controller.record import EventBroadcaster

    kubeconfig = args.kubeconfig or os.environ.get("KUBECONFIG")
    rest = RestClient(build_config(kubeconfig), qps=200, burst=400, user_agent="volcano-job-simulator")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(KubeEventSink.from_rest_client(rest))
    recorder = broadcaster.new_recorder(COMPONENT)
    JobSimulator(Clientset(rest), recorder=recorder, namespace=args.namespace).run(stop)
    broadcaster.shutdown(timeout=5.0)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobflow_controller.local", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a control plane in the background and install the CRDs")
    up.add_argument("--no-crds", action="store_true", help="do not install the CRDs")
    up.set_defaults(func=cmd_up)
    sub.add_parser("down", help="stop the control plane and delete its state").set_defaults(func=cmd_down)
    sub.add_parser("status", help="show whether the control plane runs").set_defaults(func=cmd_status)
    sim = sub.add_parser("simulate", help="run the Volcano job simulator until Ctrl-C")
    sim.add_argument("--kubeconfig", help="defaults to $KUBECONFIG")
    sim.add_argument("--namespace", help="only Jobs of this namespace (default: all)")
    sim.set_defaults(func=cmd_simulate)
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
