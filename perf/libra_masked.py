"""LIBRA on a masked LM: triplets per second, batched framework vs one masked copy per forward pass.

    python perf/libra_masked.py [--triplets 100] [--batch-size 16] [--hidden 256] [--layers 4] [--device cpu]

Both sides score the same triplets (the embedded New Zealand fixture, repeated
with numbered variants so no sentence repeats) on the same small BERT-shaped
random model from ``culturebias.testing.tiny_models``. The framework path is the
LIBRA service with ``scoring=masked`` and the knowledge boundary off: one
batched call through the recorded port into the hf masked scorer, which puts
every masked copy of a sentence (and of its neighbours) into one forward pass.
The baseline masks one token, runs one forward pass on that one sentence, and
repeats. It prints both rates, their ratio, and the largest difference in L
(which must be tiny).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def build_dataset(n_triplets: int):
    from culturebias.adapters.libra.files import LibraFiles
    from culturebias.domain.libra.triplets import LibraDataset

    base = LibraFiles(None).load().triplets
    triplets = []
    for i in range(n_triplets):
        t = base[i % len(base)]
        variant = i // len(base)
        right = t.right if variant == 0 else f"{t.right} (take {variant})"
        triplets.append(replace(t, id=f"{t.id}-{variant}", right=right))
    return LibraDataset(tuple(triplets))


def framework(dataset, model_path: str, batch_size: int, device: str, workdir: Path):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
    from culturebias.application.libra.service import LibraService
    from culturebias.domain.libra.options import LibraOptions
    from culturebias.domain.runs import RunManifest
    from culturebias.testing.context import fake_context

    options = HFOptions(path=model_path, kind="masked", batch_size=batch_size, device=device)
    scorer = create_backend(options, workdir / "cache").pseudo_scorer()  # load outside the timed region
    # A file store, as a real run has: storing every result is part of the measured cost.
    store = SQLiteResultStore(workdir / "bench.sqlite")
    store.create_run(RunManifest(run_id="bench", benchmark="libra", config={}, config_fingerprint="b", data_fingerprint="b"))
    ctx = fake_context(pseudo_scorer=scorer, store=store, run_id="bench", chunk_size=2048)
    service = LibraService(LibraOptions(scoring="masked", knowledge_boundary="off"))
    plan = service.preflight(ctx)
    start = time.perf_counter()
    outcome = service.run(ctx, dataset, plan)
    elapsed = time.perf_counter() - start
    columns = outcome.details.triplets
    values = [*columns.stereotyped, *columns.anti_stereotyped, *columns.unrelated]
    return elapsed, values


def one_mask_per_pass(dataset, model_path: str, device: str):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForMaskedLM.from_pretrained(model_path).to(device).eval()

    def pll(text: str, span_start: int) -> float:
        encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
        ids = encoded["input_ids"]
        total = 0.0
        for i, ((start, end), special) in enumerate(zip(encoded["offset_mapping"], encoded["special_tokens_mask"])):
            if special or end <= start or end <= span_start:
                continue
            masked = torch.tensor([ids], device=device)
            masked[0, i] = tokenizer.mask_token_id
            with torch.inference_mode():
                logits = model(input_ids=masked).logits[0, i]
            total += torch.log_softmax(logits.float(), -1)[ids[i]].item()
        return total

    start = time.perf_counter()
    by_kind = {kind: [] for kind in ("stereotyped", "anti_stereotyped", "unrelated")}
    for t in dataset.triplets:
        for kind in by_kind:
            by_kind[kind].append(pll(t.sentence(kind), len(t.left)))
    elapsed = time.perf_counter() - start
    return elapsed, [v for kind in by_kind for v in by_kind[kind]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--triplets", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    from culturebias.testing.tiny_models import cached_tiny_masked_lm

    model_path = str(cached_tiny_masked_lm(hidden=args.hidden, layers=args.layers, heads=args.heads))
    dataset = build_dataset(args.triplets)
    with tempfile.TemporaryDirectory() as tmp:
        fast_s, fast = framework(dataset, model_path, args.batch_size, args.device, Path(tmp))
    slow_s, slow = one_mask_per_pass(dataset, model_path, args.device)
    n = len(dataset.triplets)
    print(f"model: BERT-shaped random, hidden {args.hidden}, {args.layers} layers, device {args.device}")
    print(f"triplets: {n} (three sentences each)")
    print(f"framework (batched masked copies): {n / fast_s:8.1f} triplets/s  ({fast_s:.2f} s)")
    print(f"one mask per forward pass:         {n / slow_s:8.1f} triplets/s  ({slow_s:.2f} s)")
    print(f"speed-up: {slow_s / fast_s:.1f}x")
    print(f"largest |L| difference: {max(abs(a - b) for a, b in zip(fast, slow)):.2e}")


if __name__ == "__main__":
    main()
