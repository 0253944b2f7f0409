"""TWBias scoring speed: the hf scorer vs the authors' one-forward-per-sentence loop vs lm-eval.

Scores the TWBias gender set (every original sentence and each of its
replacements, origin term -> the row-aligned reference term of target_gender.csv)
under ONE prompt type in a chat template, with a GPT-2-small-shaped random model
(124M parameters), three ways in one process:

1. culturebias' ``hf`` scorer (length-sorted batches, shared-prefix KV reuse);
2. the authors' way: one forward pass per sentence with the prompt masked to -100;
3. lm-evaluation-harness ``HFLM.loglikelihood`` on the identical (context, continuation) pairs.

Methods 1 (with and without reuse) and 3 run in turns, ``--repeat`` times (best
counts), after an untimed warm-up each; each prints its forward passes' achieved
FLOP/s against a peak measured in the same run (``perf/flops.py``).

Throughput is counted in the same tokens for all three: the tokens of
``context + continuation`` of every request, as a one-sequence-per-request
scorer has to feed them. The naive loop is slow, so it runs on the first
``--loop-limit`` requests only (a rate is a rate). Also checked: the scores agree
(the framework with ``boundary_rule=authors`` counts prompt tokens as lm-eval and
the authors do).

    /work/venv/bin/python perf/twbias_scoring.py --limit 400
    /work/venv/bin/python perf/twbias_scoring.py --limit 0      # all ~3,500 requests

lm-eval is a benchmark-only dependency: ``pip install lm_eval`` (``culturebias[bench]``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/flops.py
DEFAULT_DATA = REPO.parent / "shared" / "data" / "twbias"


def gender_sentences(data: Path) -> list[str]:
    """Originals and replacements, as ``culturebias run twbias`` builds them: the project's
    loader, the gender specifications (male T1 -> T2, then female T2 -> T1) and their term
    replacement. Repeats are kept: the scorer is expected to deduplicate them."""
    from culturebias.adapters.twbias.files import TWBiasFiles
    from culturebias.domain.twbias.specification import gender_specifications, replace_terms

    specs = {spec.key: spec for spec in gender_specifications(TWBiasFiles(str(data)).load().axes["gender"])}
    texts: list[str] = []
    for key in ("male", "female"):
        for sentence in specs[key].sentences.sentences:
            texts.append(sentence.text)
            texts.extend(replace_terms(sentence.text, specs[key].term_pairs))
    return texts


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the twbias data folder")
    parser.add_argument("--limit", type=int, default=400, help="requests to score (0 = all)")
    parser.add_argument("--loop-limit", type=int, default=60, help="requests for the slow one-at-a-time loop")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--prompt", default="1", help="TWBias prompt type (key of prompts.json)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    parser.add_argument("--skip-lm-eval", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each method, in turns; the best counts")
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.scorer import HFScorer
    from culturebias.testing.tiny_models import cached_gpt2_small_shaped
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest

    if args.threads:
        torch.set_num_threads(args.threads)
    if not (args.data / "gender" / "target_gender.csv").is_file():
        print(f"TWBias data not found at {args.data} (use --data)", file=sys.stderr)
        return 2
    texts = gender_sentences(args.data)
    print(f"TWBias gender: {len(texts)} sentences (originals + replacements)")
    if args.limit:
        texts = texts[: args.limit]
    model_dir = cached_gpt2_small_shaped(seed=0)
    prompt = json.loads((args.data / "prompts.json").read_text(encoding="utf-8"))[args.prompt]

    backend = create_backend(HFOptions(path=str(model_dir), batch_size=args.batch_size), Path(tempfile.gettempdir()))
    context = backend.templater().render([ChatMessage("user", prompt)])
    requests = [LoglikelihoodRequest(context, t) for t in texts]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    n_tokens = [len(tokenizer(context + t, add_special_tokens=False)["input_ids"]) for t in texts]
    total = sum(n_tokens)
    print(
        f"scoring {len(requests)} requests, {total} tokens (context {len(tokenizer(context)['input_ids'])} tokens), "
        f"GPT-2-small-shaped random model, batch size {args.batch_size}, {torch.get_num_threads()} torch threads"
    )
    rows: list[tuple[str, float, int, int]] = []  # name, seconds, requests, tokens
    from flops import ForwardMeter, peak_flops

    loaded = backend.loaded()
    peak, timed_shape = peak_flops(loaded.model)
    print(f"peak: {peak / 1e9:.1f} GFLOP/s ({timed_shape}, the model's largest weight matrix, best of 20)")
    scorer = backend.scorer()
    no_prefix = HFScorer(loaded, HFOptions(path=str(model_dir), batch_size=args.batch_size, prefix_cache=False))
    ours_meter = ForwardMeter(loaded.model)
    runs = {
        "culturebias hf (prefix reuse)": (lambda: scorer.loglikelihood(requests), ours_meter),
        "culturebias hf (no prefix reuse)": (lambda: no_prefix.loglikelihood(requests), ours_meter),
    }
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    instances: list = []
    if not args.skip_lm_eval:
        try:
            from lm_eval.api.instance import Instance
            from lm_eval.models.huggingface import HFLM
        except ImportError:
            print("lm-eval is not installed (pip install lm_eval): skipping it", file=sys.stderr)
        else:
            lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=args.batch_size, max_length=1024)
            instances = [
                Instance(request_type="loglikelihood", doc={}, arguments=(r.context, r.continuation), idx=i)
                for i, r in enumerate(requests)
            ]
            runs["lm-eval HFLM.loglikelihood"] = (lambda: lm.loglikelihood(instances, disable_tqdm=True), ForwardMeter(model))
    # Methods in turns, best of --repeat, after an untimed warm-up each.
    scorer.loglikelihood(requests[:4])
    no_prefix.loglikelihood(requests[:4])
    if instances:
        lm.loglikelihood(instances[:4], disable_tqdm=True)
    best: dict[str, float] = {}
    outputs: dict = {}
    lines: dict[str, str] = {}
    for _ in range(max(1, args.repeat)):
        for name, (run, meter) in runs.items():
            meter.reset()
            outputs[name], seconds = timed(run)
            if seconds <= best.get(name, seconds):
                lines[name] = meter.line(peak, seconds)
            best[name] = min(best.get(name, seconds), seconds)
    for name in runs:
        rows.append((name, best[name], len(requests), total))
    ours, plain = outputs["culturebias hf (prefix reuse)"], outputs["culturebias hf (no prefix reuse)"]
    worst = max(abs(a.logprob - b.logprob) / abs(b.logprob) for a, b in zip(ours, plain))
    print(f"  prefix reuse vs none: max relative difference {worst:.2e}")

    loop_requests = requests[: args.loop_limit]

    def authors_loop() -> list[float]:
        out = []
        with torch.no_grad():
            for request in loop_requests:
                ids = tokenizer(request.context + request.continuation, add_special_tokens=False, return_tensors="pt")["input_ids"]
                n_prompt = len(tokenizer(request.context, add_special_tokens=False)["input_ids"])
                labels = ids.clone()
                labels[0, :n_prompt] = -100
                loss = model(input_ids=ids, labels=labels).loss.item()
                out.append(-loss * (ids.shape[1] - n_prompt))
        return out

    loop_scores, seconds = timed(authors_loop)
    rows.append(("authors' loop (1 forward/sentence)", seconds, len(loop_requests), sum(n_tokens[: len(loop_requests)])))
    authors_rule = HFScorer(loaded, HFOptions(path=str(model_dir), batch_size=args.batch_size, boundary_rule="authors"))
    check = authors_rule.loglikelihood(loop_requests)
    worst = max(abs(a.logprob - b) / abs(b) for a, b in zip(check, loop_scores))
    print(f"  framework (authors' boundary rule) vs authors' loop: max relative difference {worst:.2e}")
    if instances:
        theirs = outputs["lm-eval HFLM.loglikelihood"]
        # lm-eval moves the context's trailing whitespace (the template's "\n") into the
        # continuation, then counts context tokens alone: the same pairs, scored our way.
        moved = [
            LoglikelihoodRequest(r.context.rstrip(), r.context[len(r.context.rstrip()) :] + r.continuation)
            for r in requests
        ]
        ours_authors = authors_rule.loglikelihood(moved)
        worst = max(abs(a.logprob - b[0]) / abs(b[0]) for a, b in zip(ours_authors, theirs))
        print(f"  framework (authors' boundary rule) vs lm-eval: max relative difference {worst:.2e}")
    print(f"  tokens through the model (culturebias hf, prefix reuse): {scorer.tokens_run // (max(1, args.repeat) + 1):,} per run of {total:,}")

    print()
    print(f"{'method':38} {'requests':>8} {'seconds':>9} {'req/s':>8} {'tokens/s':>9} {'vs lm-eval':>10} {'vs loop':>8}")
    rate = {name: tokens / seconds for name, seconds, _, tokens in rows}
    baseline = rate.get("lm-eval HFLM.loglikelihood")
    loop = rate["authors' loop (1 forward/sentence)"]
    for name, seconds, count, tokens in rows:
        versus = f"{rate[name] / baseline:9.2f}x" if baseline else f"{'-':>10}"
        print(
            f"{name:38} {count:8d} {seconds:9.2f} {count / seconds:8.1f} {rate[name]:9.0f} {versus} {rate[name] / loop:7.1f}x"
        )
        if name in lines:
            print(f"    {lines[name]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
