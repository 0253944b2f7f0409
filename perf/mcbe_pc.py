"""McBE preference computation: BEIs per second, batched framework vs one forward pass per sentence.

    python perf/mcbe_pc.py [--beis 300] [--batch-size 32] [--hidden 256] [--layers 4] [--device cpu]

Both sides score the same BEIs (the embedded fixture's PC categories, repeated
with numbered variants so no sentence repeats) on the same small random causal
LM from ``culturebias.testing.tiny_models``. The framework path is the McBE
service's PC task (one batched scorer call through the recorded port and the hf
scorer); the baseline is the released procedure's loop: ``tokenizer.encode`` and
``model(ids, labels=ids).loss`` for one sentence at a time. It prints both rates,
their ratio, and the largest score difference (which must be tiny).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def build_dataset(n_beis: int):
    from culturebias.adapters.mcbe.files import McBEFiles
    from culturebias.domain.mcbe.instances import McBEDataset

    base = [b for b in McBEFiles(None).load().instances if b.category != "worldview"]
    beis = []
    for i in range(n_beis):
        bei = base[i % len(base)]
        variant = i // len(base)
        sentence = bei.sentence if variant == 0 else f"{bei.sentence}（第{variant}次）"
        beis.append(replace(bei, sentence=sentence, row=10_000 + i))
    return McBEDataset(tuple(beis))


def framework_pc(dataset, model_path: str, batch_size: int, device: str, workdir: Path):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
    from culturebias.application.mcbe.service import McBEService
    from culturebias.domain.mcbe.options import McBEOptions
    from culturebias.testing.context import fake_context

    backend = create_backend(HFOptions(path=model_path, batch_size=batch_size, device=device), workdir / "cache")
    scorer = backend.scorer()  # load outside the timed region
    store = SQLiteResultStore(workdir / "bench.sqlite")
    ctx = fake_context(scorer=scorer, store=store, run_id="bench", chunk_size=2048)
    service = McBEService(McBEOptions.model_validate({"tasks": "pc"}))
    plan = service.preflight(ctx)
    start = time.perf_counter()
    outcome = service.run(ctx, dataset, plan)
    elapsed = time.perf_counter() - start
    items = outcome.details.items
    return elapsed, [_pc_score(items[b.item_id]) for b in dataset.instances]


def _pc_score(item) -> float:
    assert item.pc is not None and item.pc.score is not None, "every BEI here has at least two words"
    return item.pc.score


def loop_pc(dataset, model_path: str, device: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).to(device).eval()
    rate = 2 * math.e / 3
    scores = []
    start = time.perf_counter()
    with torch.no_grad():
        for bei in dataset.instances:
            losses = []
            for word in bei.words:
                ids = tokenizer.encode(bei.filled(word), return_tensors="pt").to(device)
                losses.append(model(ids, labels=ids).loss.item())
            mean = sum(losses) / len(losses)
            variance = sum((x - mean) ** 2 for x in losses) / len(losses)
            scores.append(100 * math.exp(-rate * variance))
    return time.perf_counter() - start, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beis", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    model_path = str(cached_tiny_causal_lm(arch="llama", hidden=args.hidden, layers=args.layers, heads=4))
    dataset = build_dataset(args.beis)
    sentences = sum(len(b.words) for b in dataset.instances)
    with tempfile.TemporaryDirectory() as tmp:
        fw_time, fw_scores = framework_pc(dataset, model_path, args.batch_size, args.device, Path(tmp))
    loop_time, loop_scores = loop_pc(dataset, model_path, args.device)
    diff = max(abs(a - b) for a, b in zip(fw_scores, loop_scores))
    n = len(dataset.instances)
    print(f"model: random llama, hidden {args.hidden}, {args.layers} layers, device {args.device}")
    print(f"BEIs: {n}, sentences scored: {sentences}")
    print(f"one forward per sentence : {n / loop_time:9.1f} BEIs/s ({loop_time:.2f} s)")
    print(f"culturebias PC (batch {args.batch_size:>3}): {n / fw_time:9.1f} BEIs/s ({fw_time:.2f} s, incl. result store)")
    print(f"speed-up: {loop_time / fw_time:.2f}x   largest score difference: {diff:.2e}")


if __name__ == "__main__":
    main()
