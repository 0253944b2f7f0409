"""One model replica: a Ray actor holding the configured backend, built by the registry's factory as a local run's.

The actor's methods never let an exception escape: a backend's typed error is
sent back as its class and message (``Failure``) and raised again on the driver,
so a ``CapabilityError`` or ``ModelLoadError`` reads the same as in a local run
(Ray would otherwise wrap it, and errors with their own constructor arguments
do not survive pickling).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance

# port name -> the method computing it
PORT_METHODS = {"scorer": "loglikelihood", "pseudo_scorer": "pseudo_loglikelihood", "generator": "generate"}


@dataclass(frozen=True)
class Failure:
    """An exception raised on a replica, carried back as its class path and message."""

    error_class: str
    message: str
    trace: str = ""

    @staticmethod
    def of(error: BaseException) -> "Failure":
        cls = type(error)
        return Failure(f"{cls.__module__}:{cls.__qualname__}", str(error), traceback.format_exc())

    def exception(self, prefix: str = "") -> BaseException:
        """The same exception type with the same message (its constructor is not called)."""
        import importlib

        module, _, name = self.error_class.partition(":")
        try:
            cls: Any = importlib.import_module(module)  # Any: a class imported by its dotted name
            for part in name.split("."):
                cls = getattr(cls, part)
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                raise TypeError(name)
            error = cls.__new__(cls)
        except Exception:  # a class the driver cannot import: a plain RuntimeError says the same
            return RuntimeError(f"{prefix}{self.error_class}: {self.message}")
        error.args = (prefix + self.message,)
        return error


@dataclass(frozen=True)
class PortInfo:
    """What the driver needs of one port without asking the replica again: or why the port is missing."""

    identity: ModelIdentity | None = None
    provenance: ScoreProvenance | None = None
    has_chat_template: bool = False
    template_use: ChatTemplateUse | None = None
    failure: Failure | None = None  # a CapabilityError: raised when the run asks for this port


@dataclass(frozen=True)
class Computed:
    """A shard's results and the process that computed them (a restarted replica has a new pid)."""

    pid: int
    results: list[Any] | None = None  # Any: results of any port
    failure: Failure | None = None


class Replica:
    """The actor's body (``ray.remote`` is applied by the pool, with the replica's resources)."""

    def __init__(self, factory: Callable[..., Any], options: Any, cache_dir: str):  # Any: the registry's backend factory and its options model
        self._factory = factory  # the registered backend's factory, resolved on the driver
        self._options = options
        self._cache_dir = Path(cache_dir)
        self._backend: Any = None  # Any: the model backend the factory builds
        self._ports: dict[str, Any] = {}  # Any: each port by name

    def pid(self) -> int:
        return os.getpid()

    def _model(self) -> Any:  # Any: the model backend the factory builds
        if self._backend is None:
            self._backend = self._factory(self._options, self._cache_dir)
        return self._backend

    def _port(self, port: str) -> Any:  # Any: the port named
        if port not in self._ports:
            self._ports[port] = getattr(self._model(), port)()
        return self._ports[port]

    def prepare(self) -> dict[str, PortInfo] | Failure:
        """Build the backend and every port it has (a local model loads here); capability errors are kept per port."""
        try:
            infos: dict[str, PortInfo] = {}
            for port in (*PORT_METHODS, "templater"):
                try:
                    built = self._port(port)
                    if port == "scorer":
                        built.check_loglikelihood()
                except CapabilityError as error:
                    infos[port] = PortInfo(failure=Failure.of(error))
                    continue
                infos[port] = PortInfo(
                    identity=getattr(built, "identity", None),
                    provenance=getattr(built, "provenance", None),
                    has_chat_template=bool(getattr(built, "has_chat_template", False)),
                    template_use=getattr(built, "template_use", None),
                )
            return infos
        except Exception as error:  # noqa: BLE001  carried to the driver, raised there
            return Failure.of(error)

    def compute(self, port: str, requests: Sequence[Any]) -> Computed:  # Any: requests of any port
        try:
            method = getattr(self._port(port), PORT_METHODS[port])
            return Computed(os.getpid(), results=list(method(requests)))
        except Exception as error:  # noqa: BLE001
            return Computed(os.getpid(), failure=Failure.of(error))

    def check_render(self) -> None | Failure:
        try:
            self._port("templater").check_render()
            return None
        except Exception as error:  # noqa: BLE001
            return Failure.of(error)

    def render(self, messages: Sequence[Any], add_generation_prompt: bool) -> str | Failure:  # Any: chat messages, as the templater port takes them
        try:
            return self._port("templater").render(messages, add_generation_prompt=add_generation_prompt)
        except Exception as error:  # noqa: BLE001
            return Failure.of(error)
