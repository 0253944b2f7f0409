"""KoBBQ (generation and likelihood) and CBBQ (generation): culturebias hf against lm-evaluation-harness.

    python perf/bbq_generation.py [--kobbq-items 4] [--cbbq-items 24] [--batch-size 16]
                                  [--threads 2] [--repeat 3] [--model PATH] [--skip-lm-eval]

The requests are those the KoBBQ and CBBQ services send (default options, chat
template): ``--kobbq-items`` items spread evenly over the bundled split × the five
prompts × three option orders; CBBQ ``--cbbq-items`` items spread evenly ×
condition ``q`` × one order (its default). They are captured
from the services once, then each method answers the same ones, in turns,
``--repeat`` times; the best wall time counts:

| method | what it runs |
| --- | --- |
| culturebias hf | the defaults: the hf generator (shared prompt prefixes prefilled once in merged chunks on one buffer, greedy decoding with prompt-lookup drafts) / the hf scorer (its shared prefixes on the same buffered prefill) |
| culturebias hf, prefix_cache=false | ``model.generate`` on whole prompts, longest first (the previous path) / the scorer without reuse |
| lm-eval | ``HFLM.generate_until`` (same prompt text, ``max_gen_toks``, stops) / ``HFLM.loglikelihood`` (same pairs) |

Same model (default: the embedded SmolLM2-135M-Instruct, float32), batch size and
torch threads for all. It prints the prompt tokens that went through the model
against all prompt tokens and the distinct-token bound (the nodes of the prompts'
token trie), and how many replies agree with the previous path and with lm-eval;
and each method's forward passes' achieved FLOP/s against a peak measured in the
same run (``perf/flops.py``: the model's largest weight matrix on 512 positions,
same threads).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/flops.py


class CapturingGenerator:
    """Records the generation requests a service sends and answers "A" (the run's numbers are not wanted)."""

    def __init__(self, identity):
        self.identity = identity
        self.requests = []

    def generate(self, requests, progress=None):
        from culturebias.domain.requests import GenerationResult

        self.requests.extend(requests)
        return [GenerationResult("A") for _ in requests]


class CapturingScorer:
    def __init__(self, identity, provenance):
        self.identity, self.provenance = identity, provenance
        self.requests = []

    def check_loglikelihood(self):
        return None

    def loglikelihood(self, requests, progress=None):
        from culturebias.domain.requests import LoglikelihoodResult

        self.requests.extend(requests)
        return [LoglikelihoodResult(-1.0, 1, False) for _ in requests]


def spread(items, n):
    step = max(1, len(items) // n)
    return tuple(items[::step][:n])


def capture(backend, benchmark: str, mode: str, n_items: int):
    """The requests the benchmark's service sends for ``n_items`` items spread over its data set."""
    from culturebias.testing.context import fake_context

    if benchmark == "kobbq":
        from culturebias.adapters.kobbq.files import KoBBQFiles
        from culturebias.application.kobbq.service import KoBBQService
        from culturebias.domain.kobbq.options import KoBBQOptions

        service, dataset = KoBBQService(KoBBQOptions.model_validate({"mode": mode, "statistics": False})), KoBBQFiles(None).load()
    else:
        from culturebias.adapters.cbbq.files import CBBQFiles
        from culturebias.application.cbbq.service import CBBQService
        from culturebias.domain.cbbq.options import CBBQOptions

        service, dataset = CBBQService(CBBQOptions.model_validate({"mode": mode})), CBBQFiles(None).load()
    dataset = dataclasses.replace(dataset, items=spread(dataset.items, n_items))
    scorer = backend.scorer()
    generator = CapturingGenerator(scorer.identity)
    capturing_scorer = CapturingScorer(scorer.identity, scorer.provenance)
    ctx = fake_context(scorer=capturing_scorer, generator=generator, templater=backend.templater(), run_id="capture")
    try:
        service.run(ctx, dataset, service.preflight(ctx))
    except Exception:  # noqa: BLE001 - the placeholder answers may not aggregate; the requests are captured
        pass
    return generator.requests if mode == "generate" else capturing_scorer.requests


def lm_eval_model(path: str, batch_size: int):
    from lm_eval.models.huggingface import HFLM

    return HFLM(pretrained=path, backend="causal", batch_size=batch_size, device="cpu", dtype="float32")


def lm_eval_generate(lm, generator, requests):
    from lm_eval.api.instance import Instance

    instances = []
    for k, r in enumerate(requests):
        text, _ = generator.render(r)
        kwargs = {"until": list(r.params.stop), "max_gen_toks": r.params.max_new_tokens, "do_sample": False}
        instances.append(Instance("generate_until", {}, (text, kwargs), k))
    return lm.generate_until(instances, disable_tqdm=True)


def lm_eval_loglikelihood(lm, requests):
    from lm_eval.api.instance import Instance

    instances = [Instance("loglikelihood", {}, (r.context, r.continuation), k) for k, r in enumerate(requests)]
    return lm.loglikelihood(instances, disable_tqdm=True)


METERS: dict = {}  # method name -> ForwardMeter of the model it runs
SEEN: dict = {}  # method name -> the meter's line of its best run


def best_of(runs: dict, repeat: int, warm_up: dict, peak: float = 0.0) -> dict:
    """Each method ``repeat`` times, in turns, after one untimed warm-up call each (the first forward passes
    page the weights in and set up the kernels); (best seconds, last output) per method. The FLOP/s line
    of each method's best run goes to ``SEEN``."""
    for run in warm_up.values():
        run()
    best, outputs = {}, {}
    for _ in range(repeat):
        for name, run in runs.items():
            meter = METERS.get(name)
            if meter is not None:
                meter.reset()
            start = time.perf_counter()
            outputs[name] = run()
            elapsed = time.perf_counter() - start
            if elapsed <= best.get(name, elapsed) and meter is not None and peak:
                SEEN[name] = meter.line(peak, elapsed)
            best[name] = min(best.get(name, elapsed), elapsed)
    return {name: (best[name], outputs[name]) for name in runs}


def report(title: str, n: int, timed: dict, baseline: str | None) -> None:
    print(f"\n{title}: {n} requests")
    for name, (seconds, _) in timed.items():
        ratio = f"  {timed[baseline][0] / seconds:5.2f}x lm-eval" if baseline in timed else ""
        print(f"  {name:38s} {seconds:8.2f} s  {n / seconds:7.2f} requests/s{ratio}")
        if name in SEEN:
            print(f"    {SEEN[name]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kobbq-items", type=int, default=4)
    parser.add_argument("--cbbq-items", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", default=None, help="a model folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--skip-lm-eval", action="store_true")
    parser.add_argument("--only", default="kobbq-generate,cbbq-generate,kobbq-likelihood")
    args = parser.parse_args()

    import torch

    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.domain.run_plan import trie_nodes

    torch.set_num_threads(args.threads)
    from culturebias.bootstrap.container import default_cache_dir
    from culturebias.bootstrap.settings import Settings

    cache = default_cache_dir(Settings())  # where runs keep the converted embedded model
    shared = create_backend(HFOptions(path=args.model, batch_size=args.batch_size), cache)  # the defaults
    whole = create_backend(HFOptions(path=args.model, batch_size=args.batch_size, prefix_cache=False), cache)
    path = shared.loaded().source.location
    lm = None if args.skip_lm_eval else lm_eval_model(path, args.batch_size)
    from flops import ForwardMeter, peak_flops

    peak, timed_shape = peak_flops(shared.loaded().model)
    print(f"peak: {peak / 1e9:.1f} GFLOP/s ({timed_shape}, the model's largest weight matrix, best of 20)")
    ours_meter, old_meter = ForwardMeter(shared.loaded().model), ForwardMeter(whole.loaded().model)
    METERS.update({"culturebias hf": ours_meter, "culturebias hf, shared_generation=false": old_meter,
                   "culturebias hf, prefix_cache=false": old_meter})
    if lm is not None:
        lm_meter = ForwardMeter(lm.model)
        METERS.update({"lm-eval HFLM.generate_until": lm_meter, "lm-eval HFLM.loglikelihood": lm_meter})
    print(f"model {path}, float32, batch size {args.batch_size}, {args.threads} threads, best of {args.repeat}, "
          f"load average {os.getloadavg()[0]:.1f}")

    for task in args.only.split(","):
        benchmark, mode = task.split("-")
        n_items = args.kobbq_items if benchmark == "kobbq" else args.cbbq_items
        requests = capture(shared, benchmark, "generate" if mode == "generate" else "likelihood", n_items)
        if mode == "generate":
            ours, old = shared.generator(), whole.generator()
            prompts = [ours._encode(*ours.render(r)) for r in requests]
            few = requests[:2]
            warm_up = {"ours": lambda: ours.generate(few), "old": lambda: old.generate(few)}
            runs = {"culturebias hf": lambda: [r.text for r in ours.generate(requests)],
                    "culturebias hf, prefix_cache=false": lambda: [r.text for r in old.generate(requests)]}
            if lm is not None:
                runs["lm-eval HFLM.generate_until"] = lambda: lm_eval_generate(lm, ours, requests)
                warm_up["lm-eval"] = lambda: lm_eval_generate(lm, ours, few)
            best_of({}, 0, warm_up)
            before = ours.prompt_tokens_run
            timed = best_of(runs, args.repeat, {}, peak)
            through = (ours.prompt_tokens_run - before) // args.repeat
        else:
            scorer, plain = shared.scorer(), whole.scorer()
            tokenizer = shared.loaded().tokenizer
            prompts = [tokenizer(r.context + r.continuation, add_special_tokens=False)["input_ids"] for r in requests]
            runs = {"culturebias hf": lambda: [r.logprob for r in scorer.loglikelihood(requests)],
                    "culturebias hf, prefix_cache=false": lambda: [r.logprob for r in plain.loglikelihood(requests)]}
            if lm is not None:
                runs["lm-eval HFLM.loglikelihood"] = lambda: [lp for lp, _ in lm_eval_loglikelihood(lm, requests)]
            few = requests[:3]
            warm_up = {"ours": lambda: scorer.loglikelihood(few), "old": lambda: plain.loglikelihood(few)}
            if lm is not None:
                warm_up["lm-eval"] = lambda: lm_eval_loglikelihood(lm, few)
            best_of({}, 0, warm_up)
            before = scorer.tokens_run
            timed = best_of(runs, args.repeat, {}, peak)
            through = (scorer.tokens_run - before) // args.repeat
        baseline = next((name for name in timed if name.startswith("lm-eval")), None)
        report(f"{benchmark} {mode}", len(requests), timed, baseline)
        total = sum(len(p) for p in prompts)
        print(f"  tokens through the model (culturebias hf{', prompts' if mode == 'generate' else ''}): {through:,} "
              f"of {total:,}; distinct-token bound {trie_nodes(prompts):,}")
        outputs = {name: out for name, (_, out) in timed.items()}
        mine = outputs["culturebias hf"]
        for name, other in outputs.items():
            if name == "culturebias hf":
                continue
            if mode == "generate":
                same = sum(a == b for a, b in zip(mine, other))
                print(f"  replies identical to {name}: {same} of {len(mine)}")
            elif name.startswith("lm-eval"):  # it moves the context's trailing newline into the continuation
                choices = [max(range(3), key=scores[k : k + 3].__getitem__) for scores in (mine, other) for k in range(0, len(mine), 3)]
                half = len(choices) // 2
                same = sum(a == b for a, b in zip(choices[:half], choices[half:]))
                print(f"  same option chosen as {name}: {same} of {half} questions")
            else:
                worst = max(abs(a - b) for a, b in zip(mine, other))
                print(f"  largest log-probability difference to {name}: {worst:.2e}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
