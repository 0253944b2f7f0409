"""The replicas of one run and the dispatch of shards to them, with retries when a replica dies.

Each free replica takes the next shard (two in flight per replica, so none idles
while the driver stores results). Results reach ``on_result`` on the driver, in
the order shards finish; the caller stores them. A replica that dies has its
unfinished shards put back at the front of the queue, for another replica or for
itself once Ray has restarted it (``ray.max_restarts`` times); a shard is handed
to ``on_result`` once only, so nothing is stored twice. When every replica is
gone, ``ReplicasLostError``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

from culturebias.adapters.ray.errors import RayClusterError, ReplicasLostError
from culturebias.adapters.ray.replica import Computed, Failure, PortInfo, Replica
from culturebias.domain.errors import ModelLoadError

IN_FLIGHT = 2  # shards per replica at once


@dataclass
class _Member:
    number: int
    handle: Any  # Any: a Ray actor handle
    deaths: int = 0
    generation: int = 0  # bumped at each death seen, so several failed calls of one death count once
    gone: bool = False
    busy: int = 0
    pids: list[int] = field(default_factory=list)  # every process that computed a shard, in order


@dataclass(frozen=True)
class PoolSettings:
    replicas: int
    cpus: float
    gpus: float
    max_restarts: int
    start_timeout: float


class ReplicaPool:
    """``replicas`` actors, each holding ``factory(options, cache_dir)``; each loads its model before the pool is returned."""

    def __init__(self, factory: Callable[..., Any], options: Any, cache_dir: str, settings: PoolSettings):  # Any: the registry's backend factory and its options model, shipped to the replicas
        self.settings = settings
        actor = ray.remote(Replica).options(
            num_cpus=settings.cpus, num_gpus=settings.gpus, max_restarts=settings.max_restarts, max_task_retries=0
        )
        self.members = [_Member(n, actor.remote(factory, options, cache_dir)) for n in range(settings.replicas)]
        self.infos: dict[str, PortInfo] = self._prepare()
        self.retried = 0  # shards sent again after their replica died

    def _prepare(self) -> dict[str, PortInfo]:
        refs = [m.handle.prepare.remote() for m in self.members]
        try:
            answers = ray.get(refs, timeout=self.settings.start_timeout)
        except GetTimeoutError:
            self.close()
            raise RayClusterError(
                f"the {len(self.members)} model replicas did not start within ray.start_timeout={self.settings.start_timeout:g}s "
                f"(each asks for {self.settings.cpus:g} CPUs and {self.settings.gpus:g} GPUs; free now: "
                f"{ray.available_resources().get('CPU', 0):g} CPUs, {ray.available_resources().get('GPU', 0):g} GPUs)"
            ) from None
        except RayActorError as error:
            self.close()
            raise ModelLoadError(f"a model replica died while loading the model: {error}") from None
        for member, answer in zip(self.members, answers):
            if isinstance(answer, Failure):
                self.close()
                raise answer.exception(f"model replica {member.number} could not load the model: ")
        return answers[0]

    @property
    def alive(self) -> list[_Member]:
        return [m for m in self.members if not m.gone]

    def pids(self) -> list[int]:
        """The process id of every live replica (each actor reports its own)."""
        return ray.get([m.handle.pid.remote() for m in self.alive])

    def any_live(self) -> Any:  # Any: a Ray actor handle
        alive = self.alive
        if not alive:
            raise ReplicasLostError("every model replica is gone; what they delivered is stored: continue with --resume")
        return alive[0].handle

    def run(self, port: str, shards: Sequence[Sequence[Any]], on_result: Callable[[int, list[Any]], None]) -> None:  # Any: requests and results of any port
        """Compute every shard (a list of requests) on some replica; ``on_result(shard number, results)`` once each."""
        queue: deque[int] = deque(range(len(shards)))
        flying: dict[Any, tuple[_Member, int, int]] = {}  # ref -> (member, shard, generation at submission); Any: Ray object refs
        while queue or flying:
            for member in self.alive:
                while queue and member.busy < IN_FLIGHT:
                    shard = queue.popleft()
                    flying[member.handle.compute.remote(port, list(shards[shard]))] = (member, shard, member.generation)
                    member.busy += 1
            if not flying:
                raise ReplicasLostError(
                    f"every model replica is gone ({len(queue)} of {len(shards)} shards of this call unfinished); "
                    "what they delivered is stored: continue with --resume"
                )
            ready, _ = ray.wait(list(flying), num_returns=1)
            for ref in ready:
                member, shard, generation = flying.pop(ref)
                member.busy -= 1
                try:
                    computed: Computed = ray.get(ref)
                except ActorUnavailableError:  # restarting (a death already counted) or unreachable for a moment
                    queue.appendleft(shard)
                    self.retried += 1
                    continue
                except RayActorError:
                    queue.appendleft(shard)
                    self.retried += 1
                    self._died(member, generation)
                    continue
                member.pids.append(computed.pid)
                if computed.failure is not None:
                    self._drain(flying)
                    raise computed.failure.exception()
                on_result(shard, computed.results or [])

    def _died(self, member: _Member, generation: int) -> None:
        if generation != member.generation:
            return  # another call of the same death was counted already
        member.generation += 1
        member.deaths += 1
        if member.deaths > self.settings.max_restarts:
            member.gone = True
            ray.kill(member.handle, no_restart=True)

    def _drain(self, flying: dict[Any, Any]) -> None:  # Any: Ray object refs
        """Let the other shards of a failed call finish (their results are dropped), so the replicas are free."""
        if flying:
            ray.wait(list(flying), num_returns=len(flying), timeout=self.settings.start_timeout)
            for member, _, _ in flying.values():
                member.busy = max(0, member.busy - 1)
            flying.clear()

    def render(self, messages: Sequence[Any], add_generation_prompt: bool) -> str:  # Any: chat messages, as the templater port takes them
        return self._on_any(lambda handle: handle.render.remote(list(messages), add_generation_prompt))

    def check_render(self) -> None:
        """The replicas' templater's ``check_render`` (asked of one live replica)."""
        self._on_any(lambda handle: handle.check_render.remote())

    def _on_any(self, call: Callable[[Any], Any]) -> Any:  # Any: a Ray actor handle and the call's result
        while True:
            handle = self.any_live()
            member = next(m for m in self.members if m.handle is handle)
            generation = member.generation
            try:
                answer = ray.get(call(handle))
            except RayActorError:
                self._died(member, generation)
                continue
            if isinstance(answer, Failure):
                raise answer.exception()
            return answer

    def close(self) -> None:
        if not ray.is_initialized():
            return  # the cluster ended first, and the replicas with it (ray.kill would start a new one)
        for member in self.members:
            try:
                ray.kill(member.handle, no_restart=True)
            except Exception:  # noqa: BLE001  already gone
                pass
            member.gone = True
