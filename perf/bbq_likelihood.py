"""KoBBQ likelihood mode: questions per second, the framework against one forward pass per option.

    python perf/bbq_likelihood.py [--items 40] [--prompts 1] [--model gpt2-small|tiny]
                                        [--batch-size 16] [--device cpu]

Both sides answer the same questions (the first ``--items`` KoBBQ test items ×
the chosen prompts × the three option orders, rendered with the model's chat
template) on the same random model from ``culturebias.testing.tiny_models``
(GPT-2 small's shape by default). The framework path is the KoBBQ service in
likelihood mode: the three option letters of a question are three
LoglikelihoodRequests sharing one context, and every request goes to the hf
scorer in one call (shared-prefix KV reuse, batching). The baseline is the
naive loop: for each option, tokenise prompt + letter and run one full forward
pass. It prints both rates, their ratio, and how often the two choose the same
option (they must agree everywhere but on exact ties).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def build_model(kind: str) -> Path:
    from culturebias.testing.tiny_models import cached_gpt2_small_shaped, cached_tiny_causal_lm

    return cached_gpt2_small_shaped() if kind == "gpt2-small" else cached_tiny_causal_lm()


def framework(model_path: Path, items: int, prompts: str, batch_size: int, device: str, workdir: Path):
    from culturebias.adapters.kobbq.files import KoBBQFiles
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.application.kobbq.service import KoBBQService
    from culturebias.domain.kobbq.options import KoBBQOptions
    from culturebias.testing.context import fake_context

    backend = create_backend(HFOptions(path=str(model_path), batch_size=batch_size, device=device), workdir)
    scorer, templater = backend.scorer(), backend.templater()  # load outside the timed region
    ctx = fake_context(scorer=scorer, templater=templater, run_id="bench")  # results kept in memory
    options = KoBBQOptions.model_validate({"mode": "likelihood", "prompts": prompts, "limit": items, "statistics": False})
    service = KoBBQService(options)
    plan = service.preflight(ctx)
    dataset = KoBBQFiles(None).load()
    start = time.perf_counter()
    outcome = service.run(ctx, dataset, plan)
    elapsed = time.perf_counter() - start
    questions = service.questions(dataset.items[:items], dataset)
    chosen = {}
    for line in outcome.details.predictions or []:
        sample_id, prompt_id, permutation, index, _ = line.split("|")
        chosen[(sample_id, prompt_id, int(permutation))] = int(index)
    return elapsed, questions, chosen, templater


def naive_loop(model_path: Path, questions, templater, device: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from culturebias.domain.requests import ChatMessage

    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    model = AutoModelForCausalLM.from_pretrained(str(model_path)).to(device).eval()
    chosen = {}
    start = time.perf_counter()
    with torch.inference_mode():
        for q in questions:
            context = templater.render([ChatMessage("user", q.turns[0])], add_generation_prompt=True)
            n_context = len(tokenizer(context, add_special_tokens=False)["input_ids"])
            scores = []
            for letter in q.letters:
                ids = tokenizer(context + letter, add_special_tokens=False)["input_ids"]
                logprobs = model(torch.tensor([ids], device=device)).logits[0].log_softmax(-1)
                scores.append(sum(float(logprobs[i - 1, ids[i]]) for i in range(n_context, len(ids))))
            chosen[(q.item.sample_id, q.prompt_id, q.permutation)] = q.order[max(range(3), key=scores.__getitem__)]
    return time.perf_counter() - start, chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--prompts", default="1")
    parser.add_argument("--model", choices=("gpt2-small", "tiny"), default="gpt2-small")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    model_path = build_model(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        fast, questions, ours, templater = framework(model_path, args.items, args.prompts, args.batch_size, args.device, Path(tmp))
    slow, theirs = naive_loop(model_path, questions, templater, args.device)
    n = len(questions)
    agree = sum(ours[k] == theirs[k] for k in theirs) / n
    print(f"model: {args.model} random weights ({model_path}), device {args.device}, batch size {args.batch_size}")
    print(f"questions: {n} ({args.items} items × prompts {args.prompts} × 3 option orders), 3 options each")
    print(f"framework (shared-context requests, one scorer call): {n / fast:8.2f} questions/s  ({fast:.2f} s)")
    print(f"naive loop (one forward pass per option):             {n / slow:8.2f} questions/s  ({slow:.2f} s)")
    print(f"speed-up: {slow / fast:.2f}x; same choice on {agree:.1%} of the questions")


if __name__ == "__main__":
    main()
