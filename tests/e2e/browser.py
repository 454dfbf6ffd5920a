"""A real headless browser for the UI's end-to-end tests: Debian's Chromium driven by its own
chromedriver through Selenium. Nothing is downloaded: Selenium Manager is kept offline and handed
both paths. Without Chromium the tests are skipped, saying how to install it (`make test` does, as
root, when apt is there)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: Where the UI tests write their screenshots (the repository's .test-artifacts/ui/).
ARTIFACTS = Path(__file__).resolve().parents[2] / ".test-artifacts" / "ui"
INSTALL_HINT = "apt-get install -y chromium chromium-driver (make test does it when run as root)"


def chromium_paths() -> tuple[str, str]:
    """(browser, driver) from PATH, or skip the test saying what is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        missing = " and ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if p is None)
        pytest.skip(f"UI browser test skipped: {missing} not found on PATH; install Debian's: {INSTALL_HINT}")
    return browser, driver


@contextmanager
def headless_chromium(width: int = 1440, height: int = 900) -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("UI browser test skipped: selenium is not installed (pip install -e '.[test]')")
    browser, driver_path = chromium_paths()
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a browser or a driver
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    profile = tempfile.mkdtemp(prefix="jobflow-ui-chromium-")
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in a container has no user namespaces for the sandbox
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    return path


def wait_js(driver: Any, script: str, what: str, timeout: float = 30.0) -> Any:
    """Poll a JavaScript expression (`return ...`) until it is truthy; fail saying `what`."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    last: list[Any] = [None]

    def check(d: Any) -> Any:
        last[0] = d.execute_script(script)
        return last[0]

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(check)
    except TimeoutException as err:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last[0]!r}") from err


def node_phases(driver: Any) -> dict[str, str]:
    """The DAG's nodes as drawn: flow name -> the phase its box shows."""
    script = (
        "var out = {}; document.querySelectorAll('#dag g.node').forEach(function (g) {"
        " out[g.getAttribute('data-flow')] = g.getAttribute('data-phase'); }); return out;"
    )
    result: dict[str, str] = driver.execute_script(script)
    return result


def phases_become(driver: Any, expected: dict[str, str], timeout: float = 60.0) -> None:
    """Wait until the drawn phases of the named flows are `expected`."""
    script = (
        "var want = arguments[0], ok = true; Object.keys(want).forEach(function (k) {"
        " var g = document.querySelector('#dag g.node[data-flow=\"' + k + '\"]');"
        " if (!g || g.getAttribute('data-phase') !== want[k]) ok = false; }); return ok;"
    )
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: d.execute_script(script, expected))
    except TimeoutException as err:
        raise AssertionError(f"the DAG never showed {expected}; it shows {node_phases(driver)}") from err
