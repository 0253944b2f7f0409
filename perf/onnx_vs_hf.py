"""TWBias gender scoring throughput: ``onnx`` (ONNX Runtime, CPU) against ``hf`` (PyTorch eager, CPU).

The same GPT-2-small-shaped random model (124M parameters, float32) scores the
TWBias gender set (every original sentence and its replacements, as in
``twbias_scoring.py``) under the chosen prompt types: ``0`` (the sentence alone)
and chat-template types, whose shared prompt the scorers reuse as a key/value
prefix. Both backends run the same hf scorer code above the forward pass, so
the ratio measures ONNX Runtime against torch eager. Two torch rows: the hf
scorer as it runs (its split head applies the output embedding itself, chunk by
chunk) and the same scorer taking the model's full logits, as the onnx scorer
does; the second row compares the runtimes on an equal footing. The backends take turns
``--repeat`` times and the best time of each counts (the machine is shared); CPU
seconds (all threads) are shown beside wall seconds, as they suffer less from
other processes competing for the cores.
The export to ONNX happens once, before timing, and is reported separately.

    /work/venv/bin/python perf/onnx_vs_hf.py --limit 300
    /work/venv/bin/python perf/onnx_vs_hf.py --limit 0 --prompts 0,00,1,2   # the full gender set
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twbias_scoring import DEFAULT_DATA, gender_sentences  # noqa: E402  (speed scripts share their data reader)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the twbias data folder")
    parser.add_argument("--limit", type=int, default=300, help="sentences per prompt type (0 = all)")
    parser.add_argument("--prompts", default="0,1", help="TWBias prompt types: 0, 00, or keys of prompts.json")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "culturebias-bench")
    args = parser.parse_args(argv)

    import onnxruntime
    import torch
    from transformers import AutoTokenizer

    from culturebias.adapters.hf.backend import create_backend as hf_backend
    from culturebias.adapters.hf.scorer import HFScorer
    from culturebias.testing.tiny_models import cached_gpt2_small_shaped
    from culturebias.adapters.onnx.backend import create_backend as onnx_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.onnx.options import OnnxOptions
    from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest

    if not (args.data / "gender" / "target_gender.csv").is_file():
        print(f"TWBias data not found at {args.data} (use --data)", file=sys.stderr)
        return 2
    texts = gender_sentences(args.data)
    if args.limit:
        texts = texts[: args.limit]
    prompts = json.loads((args.data / "prompts.json").read_text(encoding="utf-8"))
    model_dir = str(cached_gpt2_small_shaped(seed=0))
    common = {"path": model_dir, "device": "cpu", "batch_size": args.batch_size}
    hf = hf_backend(HFOptions(backend="hf", **common), args.cache_dir)
    onnx = onnx_backend(OnnxOptions(backend="onnx", **common), args.cache_dir)

    contexts = []
    for prompt_type in args.prompts.split(","):
        if prompt_type == "0":
            contexts.append("")
        else:
            user = "" if prompt_type == "00" else prompts[prompt_type]
            contexts.append(hf.templater().render([ChatMessage("user", user)]))
    requests = [LoglikelihoodRequest(c, t) for c in contexts for t in texts]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokens = sum(len(tokenizer(r.context + r.continuation, add_special_tokens=False)["input_ids"]) for r in requests)

    start = time.perf_counter()
    onnx_scorer = onnx.scorer()
    setup = time.perf_counter() - start
    hf_scorer = hf.scorer()
    hf_logits = HFScorer(hf.loaded(), hf.options, split_head=False)
    print(
        f"TWBias gender: {len(texts)} sentences x prompt types {args.prompts} = {len(requests)} requests, {tokens} tokens; "
        f"GPT-2-small-shaped random model, float32, batch size {args.batch_size}"
    )
    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), onnxruntime {onnxruntime.__version__} "
        f"({onnx_scorer.provenance.device}); onnx export + session set-up {setup:.1f} s (cached afterwards)"
    )
    scorers = (("hf", hf_scorer), ("hf-logits", hf_logits), ("onnx", onnx_scorer))
    for _, scorer in scorers:
        scorer.loglikelihood(requests[:4])  # warm-up

    best = {name: float("inf") for name, _ in scorers}
    cpu = {name: float("inf") for name, _ in scorers}  # CPU seconds of all threads: less sensitive to other load
    results = {}
    for _ in range(args.repeat):
        for name, scorer in scorers:
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = scorer.loglikelihood(requests)
            best[name] = min(best[name], time.perf_counter() - start)
            cpu[name] = min(cpu[name], time.process_time() - start_cpu)
    worst = max(abs(a.logprob - b.logprob) / max(abs(b.logprob), 1e-12) for a, b in zip(results["onnx"], results["hf"]))
    print(f"onnx vs hf: max relative difference of log-likelihoods {worst:.1e}")
    print()
    print(f"{'backend':24} {'seconds':>8} {'req/s':>8} {'tokens/s':>9} {'vs hf':>7} {'vs full':>7} {'CPU s':>8} {'vs hf':>7}")
    labels = (("hf", "hf (PyTorch eager)"), ("hf-logits", "hf, full logits"), ("onnx", "onnx (ONNX Runtime CPU)"))
    for name, label in labels:
        seconds = best[name]
        print(
            f"{label:24} {seconds:8.2f} {len(requests) / seconds:8.1f} {tokens / seconds:9.0f} {best['hf'] / seconds:6.2f}x"
            f" {best['hf-logits'] / seconds:6.2f}x"
            f" {cpu[name]:8.2f} {cpu['hf'] / cpu[name]:6.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
