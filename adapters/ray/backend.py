"""``run.executor=ray``: a model backend whose ports shard their requests across model replicas on a Ray cluster.

It offers what a local backend offers (``scorer()``, ``pseudo_scorer()``,
``generator()``, ``templater()``), so the recorded ports, the protocols and the
store see no difference. Each call's distinct requests not already stored
(``BatchSink.known``) are cut into shards (``sharding``); every finished shard
is delivered to the run's sink at once, so the driver commits in proportion to
progress and a resumed run re-scores nothing stored.

Construction connects to the cluster, checks its resources and waits until every
replica has loaded the model: every bad input fails before the run is stored.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

from culturebias.adapters.ray.cluster import check_resources, connect
from culturebias.domain.ray_options import RayOptions
from culturebias.adapters.ray.pool import PoolSettings, ReplicaPool
from culturebias.adapters.ray.replica import PortInfo
from culturebias.adapters.ray.sharding import plan_shards
from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import ChatMessage
from culturebias.ports.recording import BatchSink


class _ShardedPort:
    def __init__(self, pool: ReplicaPool, port: str, info: PortInfo, batch_size: int):
        self._pool = pool
        self._port = port
        self._info = info
        self._batch_size = batch_size

    @property
    def identity(self) -> ModelIdentity:
        assert self._info.identity is not None
        return self._info.identity

    @property
    def provenance(self) -> ScoreProvenance:
        assert self._info.provenance is not None
        return self._info.provenance

    def _call(self, requests: Sequence[Any], progress: Any) -> list[Any]:  # Any: requests and results of any port; a ProgressTask or BatchSink
        sink = progress if isinstance(progress, BatchSink) else None
        position: dict[Any, int] = {}  # Any: requests of any port
        owners: dict[int, list[int]] = defaultdict(list)
        unique: list[Any] = []  # Any: requests of any port
        for r, request in enumerate(requests):
            index = position.setdefault(request, len(unique))
            if index == len(unique):
                unique.append(request)
            owners[index].append(r)
        results: list[Any] = [None] * len(unique)  # Any: results of any port
        if sink is not None:
            for i, members in owners.items():
                results[i] = sink.known(members[0])
        todo = [i for i in range(len(unique)) if results[i] is None]
        shards = [[todo[j] for j in shard.members] for shard in plan_shards([unique[i] for i in todo], self._batch_size)]

        def finished(number: int, computed: list[Any]) -> None:  # Any: results of any port
            members = shards[number]
            for i, result in zip(members, computed, strict=True):
                results[i] = result
            if progress is not None:
                progress.advance(sum(len(owners[i]) for i in members))
            if sink is not None:
                sink.deliver({r: results[i] for i in members for r in owners[i]})

        self._pool.run(self._port, [[unique[i] for i in members] for members in shards], finished)
        return [results[position[request]] for request in requests]


class RayScorer(_ShardedPort):
    def check_loglikelihood(self) -> None:
        return None  # checked on the replicas when they started (a failure there is kept as this port's error)

    def loglikelihood(self, requests, progress=None):
        return self._call(requests, progress)


class RayPseudoScorer(_ShardedPort):
    def pseudo_loglikelihood(self, requests, progress=None):
        return self._call(requests, progress)


class RayGenerator(_ShardedPort):
    @property
    def provenance(self) -> ScoreProvenance | None:  # type: ignore[override]  # a generator has no score provenance
        return self._info.provenance

    def generate(self, requests, progress=None):
        return self._call(requests, progress)


class RayTemplater:
    """The replicas' chat template: each distinct rendering is asked once."""

    def __init__(self, pool: ReplicaPool, info: PortInfo):
        self._pool = pool
        self._has = info.has_chat_template
        self._use = info.template_use
        self._rendered: dict[tuple[tuple[ChatMessage, ...], bool], str] = {}

    @property
    def has_chat_template(self) -> bool:
        return self._has

    @property
    def template_use(self) -> ChatTemplateUse | None:
        return self._use

    def check_render(self) -> None:
        self._pool.check_render()

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        key = (tuple(messages), add_generation_prompt)
        if key not in self._rendered:
            self._rendered[key] = self._pool.render(messages, add_generation_prompt)
        return self._rendered[key]


_PORTS: dict[str, Callable[..., Any]] = {"scorer": RayScorer, "pseudo_scorer": RayPseudoScorer, "generator": RayGenerator}  # Any: the sharded port classes


class RayBackend:
    """``ray.replicas`` replicas of the ``model.backend`` that ``factory`` builds, behind the usual backend methods."""

    def __init__(self, factory: Callable[..., Any], model: Any, cache_dir: Path, options: RayOptions):  # Any: the registry's backend factory and its options model
        connect(options.address, options.connect_timeout)
        check_resources(options.replicas, options.cpus, options.gpus)
        self.options = options
        self.pool = ReplicaPool(
            factory,
            model,
            str(cache_dir),
            PoolSettings(options.replicas, options.cpus, options.gpus, options.max_restarts, options.start_timeout),
        )
        self._ports: dict[str, Any] = {}  # Any: each port by name
        # The replicas end with the backend (Ray would end them with their last handle too).
        self._finalizer = weakref.finalize(self, self.pool.close)

    def _port(self, name: str) -> Any:  # Any: the port named
        info = self.pool.infos[name]
        if info.failure is not None:
            raise info.failure.exception()
        if name not in self._ports:
            self._ports[name] = RayTemplater(self.pool, info) if name == "templater" else _PORTS[name](self.pool, name, info, self.options.batch_size)
        return self._ports[name]

    def scorer(self) -> RayScorer:
        return self._port("scorer")

    def pseudo_scorer(self) -> RayPseudoScorer:
        return self._port("pseudo_scorer")

    def generator(self) -> RayGenerator:
        return self._port("generator")

    def templater(self) -> RayTemplater:
        return self._port("templater")

    def close(self) -> None:
        self._finalizer()
