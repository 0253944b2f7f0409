"""Speed of ``run.executor=ray`` against the local executor, on the same scoring job and the same model.

One job: ``--contexts`` chat prompts × ``--sentences`` continuations (TWBias-like: many continuations share a
prompt), scored by

* local: the hf backend in this process (the baseline);
* ray x1 / ray x2: the same backend in 1 and 2 replicas on a local Ray cluster, shards of ``--shard`` requests.

Methods alternate, best of ``--repeats``; replicas start once per method (their start-up is printed
apart). The per-shard overhead is measured on requests with an empty continuation (nothing to compute:
a round trip to a replica, the sharding, the delivery to the sink), divided by the number of shards.

    python perf/ray_executor.py                      # defaults: 24 x 40 = 960 requests
    python perf/ray_executor.py --hidden 256 --layers 4 --shard 64
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=24)
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--shard", type=int, default=40, help="ray.batch_size: requests per shard")
    parser.add_argument("--batch-size", type=int, default=16, help="model.batch_size")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--overhead-shards", type=int, default=200)
    args = parser.parse_args()

    import ray

    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.ray.backend import RayBackend, RayOptions
    from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest
    from culturebias.testing.tiny_models import CORPUS, cached_tiny_causal_lm

    model = str(cached_tiny_causal_lm(hidden=args.hidden, layers=args.layers, heads=4, vocab_size=512))
    options = HFOptions(backend="hf", path=model, device="cpu", batch_size=args.batch_size)
    cache = Path(tempfile.mkdtemp(prefix="culturebias-perf-ray-"))
    local = create_backend(options, cache)
    templater = local.templater()
    contexts = [templater.render([ChatMessage("user", f"{CORPUS[c % len(CORPUS)]} ({c})")]) for c in range(args.contexts)]
    sentences = [f"{CORPUS[s % len(CORPUS)]}{s}" for s in range(args.sentences)]
    job = [LoglikelihoodRequest(c, s) for c in contexts for s in sentences]
    empty = [LoglikelihoodRequest(f"context {n}", "") for n in range(args.overhead_shards)]

    # One logical CPU per replica (1 + 2 held at once; each replica's torch then runs one thread per process).
    ray.init(num_cpus=3, include_dashboard=False, logging_level="error", log_to_driver=False)
    backends = {"local": local}
    for replicas in (1, 2):
        started = time.perf_counter()
        backends[f"ray x{replicas}"] = RayBackend(
            create_backend, options, cache, RayOptions(replicas=replicas, cpus=1, batch_size=args.shard)
        )
        print(f"ray x{replicas}: replicas started and model loaded in {time.perf_counter() - started:.2f} s")
    print(f"job: {len(job)} requests ({args.contexts} prompts x {args.sentences} sentences), shards of {args.shard}, "
          f"model hidden={args.hidden} layers={args.layers}, {os.cpu_count()} CPUs")

    best: dict[str, float] = {}
    reference = None
    for _ in range(args.repeats):
        for name, backend in backends.items():  # alternating
            started = time.perf_counter()
            scores = backend.scorer().loglikelihood(job)
            elapsed = time.perf_counter() - started
            best[name] = min(best.get(name, float("inf")), elapsed)
            reference = reference or [s.logprob for s in scores]
            worst = max(abs(a - s.logprob) / max(1.0, abs(a)) for a, s in zip(reference, scores))
            assert worst < 1e-6, f"{name} differs from local by {worst:g} (relative)"
    for name, elapsed in best.items():
        print(f"{name:8s} {elapsed:7.3f} s  {len(job) / elapsed:8.1f} requests/s  time / local {elapsed / best['local']:.2f}")
    print(f"speed-up ray x2 over ray x1: {best['ray x1'] / best['ray x2']:.2f}")

    overhead = {}
    for name in ("ray x1", "ray x2"):
        scorer = backends[name].scorer()
        # one shard per request: an empty continuation needs no forward pass
        backends[name].pool.run("scorer", [[r] for r in empty[:5]], lambda *_: None)  # warm
        runs = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            backends[name].pool.run("scorer", [[r] for r in empty], lambda *_: None)
            runs.append(time.perf_counter() - started)
        overhead[name] = min(runs) / len(empty)
        del scorer
    started = time.perf_counter()
    for request in empty:
        local.scorer().loglikelihood([request])
    local_call = (time.perf_counter() - started) / len(empty)
    for name, seconds in overhead.items():
        print(f"per-shard overhead {name}: {seconds * 1e3:.2f} ms (local call on the same empty request: {local_call * 1e3:.2f} ms)")
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
