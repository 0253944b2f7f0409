"""LIBRA dataset building (PROTOCOLS §4 construction): the replaceable components of its steps.

Each step's default adapter can be swapped by configuration for a stronger one
(an LLM, a larger embedding model). Every component is deterministic for the
same inputs and ``seed``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.topics import TopicClusters
from culturebias.ports.generation import Generator

# The Generator port of a model named as ``model.path`` names one: what a build's LLM steps ask (the host opens it).
GeneratorOf = Callable[[str], Generator]


@runtime_checkable
class KeywordExpander(Protocol):
    """Step 2: more keywords per group, found in the corpus from the seeds."""

    def describe(self) -> str: ...

    def expand(self, sentences: Sequence[str], seeds: Sequence[SeedGroup], *, seed: int = 0) -> list[ExpandedKeyword]:
        """New keywords only (the seeds themselves are not repeated), best first within a group."""
        ...


@runtime_checkable
class TopicClusterer(Protocol):
    """Step 3: topic clusters of the sentences, noise re-clustered, each summarised and mapped to a group."""

    def describe(self) -> str: ...

    def cluster(
        self, sentences: Sequence[str], groups: Mapping[str, Sequence[str]], *, seed: int = 0
    ) -> TopicClusters:
        """``groups``: each social group's keywords so far (the mapping step names one of these groups or none)."""
        ...


class DatasetBuilder(Protocol):
    """``culturebias build NAME``: what a benchmark descriptor's ``builder`` names (a plugin may ship one)."""

    def add_parser(self, kinds: Any, name: str) -> None:  # Any: argparse's sub-parsers action
        """Add the benchmark's sub-command ``name`` to ``build``'s sub-parsers ``kinds``."""
        ...

    def build_command(self, args: Any, generators: GeneratorOf) -> int:  # Any: argparse's Namespace
        """Run the parsed command; ``generators`` opens a model the build asks (an LLM step). The exit code."""
        ...
