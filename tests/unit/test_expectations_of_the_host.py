"""What the probe is told of an image: the catalog's declaration; for the local interpreter,
which nobody catalogued, that it is the host, so that its torch build is described, not held
to the built-in entry's "cpu"."""

from orchestrator.catalog.core import HOST_IMAGE
from orchestrator.executors.base import expectations
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

HOST = HostSpec(name="vm")


def test_the_host_interpreter_is_marked_as_undeclared():
    task = Task(image=HOST_IMAGE, suite=SuiteRef(name="smoke"), host=HOST, checks=())
    assert expectations(task) == {"backend": "cpu", "host": "1"}


def test_a_catalogued_image_carries_its_declaration_only():
    image = ImageSpec(
        alias="c", reference="valorch/test:pip-torch", backend="cpu", components={"pytorch": "2.13"}
    )
    task = Task(image=image, suite=SuiteRef(name="smoke"), host=HOST, checks=())
    assert expectations(task) == {"pytorch": "2.13", "backend": "cpu"}
