"""Reaching the cluster named by ``ray.address`` and checking that it can hold the replicas, before anything runs."""

from __future__ import annotations

import logging
import os
import socket

from culturebias.adapters.ray.errors import RayClusterError

LOCAL = "local"


def _host_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of an address that names one (``ray://host:port`` or ``host:port``); None for ``auto``."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float) -> None:
    """A TCP connection to the head, so an unreachable address fails in seconds (Ray itself retries for minutes)."""
    target = _host_port(address)
    if target is None:
        if address != "auto":
            raise RayClusterError(f"ray.address={address!r} is not 'local', 'auto', 'host:port' nor 'ray://host:port'")
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            pass
    except OSError as error:
        raise RayClusterError(
            f"ray.address={address!r}: cannot reach the Ray head at {target[0]}:{target[1]} within {timeout:g}s "
            f"({error.strerror or error}); start the cluster (ray start --head) or correct ray.address"
        ) from None


def connect(address: str, timeout: float) -> None:
    """Connect this process to the cluster (``local``: the one already started here, else a new one on this machine)."""
    import ray

    if address != LOCAL:
        check_reachable(address, timeout)
    if ray.is_initialized():
        # One cluster per process: a second run, or a host that started it, reuses it.
        current = _host_port(ray.get_runtime_context().gcs_address)
        named = _host_port(address)
        if named is not None and not address.startswith("ray://") and current is not None and named != current:
            raise RayClusterError(f"ray.address={address!r}: this process is already connected to the Ray cluster at {current[0]}:{current[1]}")
        return
    try:
        if address == LOCAL:
            ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RayClusterError(f"ray.address={address!r}: cannot connect to the Ray cluster ({error})") from None


def check_resources(replicas: int, cpus: float, gpus: float, what: str = "replica") -> None:
    """Every replica must fit on one node, and all of them in the cluster (else Ray would wait for ever)."""
    import ray

    nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    fits = [n for n in nodes if n.get("CPU", 0.0) >= cpus and n.get("GPU", 0.0) >= gpus]
    total_cpus = sum(n.get("CPU", 0.0) for n in nodes)
    total_gpus = sum(n.get("GPU", 0.0) for n in nodes)
    ask = f"{replicas} {what}(s) of ray.cpus={cpus:g}, ray.gpus={gpus:g}"
    have = f"the cluster has {len(nodes)} node(s), {total_cpus:g} CPUs and {total_gpus:g} GPUs in all"
    if not fits:
        raise RayClusterError(f"{ask}: no node can hold one {what} ({have}); lower ray.cpus / ray.gpus or add nodes")
    # How many fit, node by node (a replica never spans nodes).
    room = sum(
        int(min(n.get("CPU", 0.0) / cpus if cpus else replicas, n.get("GPU", 0.0) / gpus if gpus else replicas) + 1e-9)
        for n in fits
    )
    if room < replicas:
        raise RayClusterError(f"{ask}: only {room} fit ({have}); lower ray.replicas, ray.cpus or ray.gpus")
