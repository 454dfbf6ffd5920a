"""Controllers register as upstream's pkg/controllers/framework: the manager builds what the registry holds.

Upstream's `RegisterController` / `ForeachController` and `Controller` (`Name`, `Initialize`, `Run`):
a controller registers itself, is built from the one `ControllerOption`, and a fourth needs no
change to the manager but an import.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Self, Unpack

import pytest

from jobflow_controller import framework
from jobflow_controller.cronjobflow import CronJobFlowController
from jobflow_controller.framework import ControllerOption, Stops, register_controller, registered_controllers
from jobflow_controller.jobflow import JobFlowController
from jobflow_controller.jobflowtrigger import JobFlowTriggerController
from jobflow_controller.jobtemplate import JobTemplateController
from jobflow_controller.manager import config, controllers
from jobflow_controller.manager.options import Options


class FourthController:
    """What a fourth controller needs to be run by the manager: a name, `initialize`, `run`."""

    name = "fourth-controller"

    def __init__(self, opt: ControllerOption) -> None:
        self.opt = opt

    @classmethod
    def initialize(cls, opt: ControllerOption) -> Self:
        return cls(opt)

    def run(self, stop: threading.Event, workers: int = 1, **stops: Unpack[Stops]) -> None:
        stop.wait()


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's registry, restored after the test."""
    monkeypatch.setattr(framework, "_REGISTRY", dict(framework._REGISTRY))
    yield


def build(names: str) -> list[Any]:
    opt = controllers.controller_option(None, None, None, Options(), lambda: None, None)  # type: ignore[arg-type,return-value]
    return controllers.build_controllers(opt, names.split(","))


def test_the_four_controllers_are_registered_under_their_names() -> None:
    registered = {controller.name: controller for controller in registered_controllers()}
    assert registered == {
        "jobflow-controller": JobFlowController,
        "jobtemplate-controller": JobTemplateController,
        "cronjobflow-controller": CronJobFlowController,
        "jobflowtrigger-controller": JobFlowTriggerController,
    }


def test_a_second_controller_of_a_registered_name_is_refused(registry: None) -> None:
    class Impostor(FourthController):
        name = "jobflow-controller"

    with pytest.raises(ValueError, match="already registered"):
        register_controller(Impostor)


def test_registering_the_same_class_again_is_harmless(registry: None) -> None:
    assert register_controller(JobTemplateController) is JobTemplateController
    assert len(list(registered_controllers())) == 4


def test_the_manager_builds_only_the_enabled_ones_in_upstreams_order(registry: None) -> None:
    class Fake(FourthController):
        name = "jobtemplate-controller"

    # Built from the registry, not from names the manager knows: a stand-in under the same name is what runs.
    framework._REGISTRY["jobtemplate-controller"] = Fake
    framework._REGISTRY["jobflow-controller"] = type("FakeFlow", (FourthController,), {"name": "jobflow-controller"})
    built = build("*,-cronjobflow-controller,-jobflowtrigger-controller")
    assert [c.name for c in built] == ["jobflow-controller", "jobtemplate-controller"]


def test_a_fourth_controller_registered_is_built_from_the_same_option(
    registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in config.known_controllers():
        framework._REGISTRY[name] = type(name, (FourthController,), {"name": name})
    register_controller(FourthController)
    built = build("*")
    assert "fourth-controller" in [c.name for c in built]
    assert all(c.opt is built[0].opt for c in built)  # one options object for all


def test_the_controllers_flag_knows_the_registered_names(registry: None) -> None:
    """--controllers selects by the registry's names (no list kept by hand): a controller registered is
    known to it, and the JobFlow controller comes first."""
    assert config.known_controllers()[0] == "jobflow-controller"
    assert set(config.known_controllers()) == {c.name for c in registered_controllers()}
    register_controller(FourthController)
    assert "fourth-controller" in config.known_controllers()
    assert config.unknown_controllers(["fourth-controller", "job-controller", "+nope"]) == ["+nope"]
