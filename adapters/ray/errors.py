"""What can go wrong on a Ray cluster, as typed errors (before any scoring, or when every replica is gone)."""

from __future__ import annotations

from culturebias.domain.errors import ConfigError, CultureBiasError


class RayClusterError(ConfigError):
    """``ray.address`` cannot be reached, or the cluster cannot provide the replicas' resources."""


class ReplicasLostError(CultureBiasError):
    """Every model replica died during a run; what they delivered is stored and ``--resume`` continues."""
