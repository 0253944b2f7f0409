"""``ray.*``: the typed settings of ``run.executor=ray`` (pure: bootstrap validates them without ray installed)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RayOptions(BaseModel):
    """``run.executor=ray``: model replicas as Ray actors, requests sharded across them (adapters/ray)."""

    model_config = ConfigDict(extra="forbid")

    # ``local`` starts a cluster in this process (or uses the one already started); else an
    # existing cluster's address: ``host:port`` of its head, ``ray://host:10001``, or ``auto``.
    address: str = "local"
    replicas: int = Field(1, ge=1)  # model replicas, each a Ray actor holding the configured backend
    cpus: float = Field(1.0, ge=0)  # per replica (and per sweep pair)
    gpus: float = Field(0.0, ge=0)  # per replica (and per sweep pair): 1 = one replica per GPU
    batch_size: int = Field(32, ge=1)  # requests per shard sent to a replica (requests sharing a context travel together)
    max_restarts: int = Field(1, ge=0)  # times Ray restarts a replica that died before it counts as gone
    connect_timeout: float = Field(10.0, gt=0)  # seconds to reach ray.address
    start_timeout: float = Field(600.0, gt=0)  # seconds for every replica to load its model
