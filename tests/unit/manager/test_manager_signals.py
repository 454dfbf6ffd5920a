"""SIGTERM/SIGINT reach `stop` through the wakeup pipe (manager/signals.py), never from a handler
running on the main thread while that thread holds a lock the handler needs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

from jobflow_controller.manager.signals import watch_signals

#: A child that installs the handlers, then holds `stop`'s own lock on the main thread (as
#: `Event.wait` does between its timeouts) while SIGTERM arrives. A handler that set the Event from
#: the main thread would wait for that lock forever; through the pipe, another thread sets it later.
CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from jobflow_controller.manager.signals import install_signal_handlers
    stop = threading.Event()
    install_signal_handlers(stop)
    with stop._cond:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.3)  # the signal is delivered while the lock is held
    print("set" if stop.wait(5) else "not set", flush=True)
    """
)


def test_a_sigterm_while_the_main_thread_holds_stops_lock_still_stops() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=30, check=False)
    assert (out.returncode, out.stdout.splitlines()[-1:]) == (0, ["set"]), out.stderr[-2000:]
    assert "received signal, shutting down" in out.stdout  # logged by the watcher thread


def test_a_second_signal_exits_1_at_once() -> None:
    child = CHILD.replace('print("set" if stop.wait(5) else "not set", flush=True)', "")
    child += "\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\nprint('still here', flush=True)\n"
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 1 and "still here" not in out.stdout, out.stderr[-2000:]


def test_other_signals_on_the_pipe_do_not_stop() -> None:
    read_fd, write_fd = os.pipe()
    stop = threading.Event()
    watcher = threading.Thread(target=watch_signals, args=(read_fd, stop), daemon=True)
    watcher.start()
    os.write(write_fd, bytes([signal.SIGUSR2]))
    time.sleep(0.1)
    assert not stop.is_set()
    os.write(write_fd, bytes([signal.SIGTERM]))
    assert stop.wait(2)
    os.close(write_fd)  # the pipe closed: the watcher returns
    watcher.join(2)
    assert not watcher.is_alive()
