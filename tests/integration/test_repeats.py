"""run.repeats and seeded sampling end to end: a tiny hf model, the CLI with a preset, a killed repeated run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.testing.scripted import ScriptedGenerator
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import main
from culturebias.domain.mcbe.instances import BEI, McBEDataset, split_words
from culturebias.domain.requests import GenerationParams, GenerationRequest
from culturebias.domain.sampling import SamplingSettings
from culturebias.testing.context import run_with_fakes

PROMPTS = ["The answer is", "男生收入", "這個問題", "她是一名医生", "The doctor said that"]


def _beis(n: int) -> McBEDataset:
    return McBEDataset(
        tuple(
            BEI("gender", "那天，", "[PLH]说了一句话。", tuple(split_words(f"甲{i}，乙{i}")), "子类", "解释。", 6, "g.xlsx", 2 + i)
            for i in range(n)
        )
    )


def test_a_sampled_reply_depends_on_its_seed_and_prompt_not_on_its_batch(tmp_path):
    pytest.importorskip("torch")
    from culturebias.adapters.hf.backend import HFBackend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    path = str(cached_tiny_causal_lm(arch="llama"))
    alone_backend = HFBackend(HFOptions(path=path, device="cpu", batch_size=1), tmp_path)
    batched_backend = HFBackend(HFOptions(path=path, device="cpu", batch_size=4), tmp_path)

    def requests(params: GenerationParams) -> list[GenerationRequest]:
        return [GenerationRequest(prompt=p, params=params) for p in PROMPTS]

    sampled = SamplingSettings(temperature=1.5, top_k=40).params(10, seed=1)
    alone = [alone_backend.generator().generate([r])[0].text for r in requests(sampled)]
    batched = [r.text for r in batched_backend.generator().generate(requests(sampled))]
    reordered = [r.text for r in batched_backend.generator().generate(requests(sampled)[::-1])][::-1]
    assert alone == batched == reordered
    other_seed = [r.text for r in batched_backend.generator().generate(requests(SamplingSettings(temperature=1.5, top_k=40).params(10, seed=2)))]
    greedy = [r.text for r in batched_backend.generator().generate(requests(GenerationParams(max_new_tokens=10)))]
    assert other_seed != alone and greedy != alone  # a hot temperature on a random model wanders off
    # The tiny model's generation_config does not sample: its own decoding ("model") is greedy.
    own = [r.text for r in batched_backend.generator().generate(requests(SamplingSettings(strategy="model").params(10, seed=1)))]
    assert own == greedy


def test_mcbe_paper_preset_runs_four_repeats_through_the_cli(tmp_path):
    pytest.importorskip("torch")
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    out = tmp_path / "out"
    argv = [
        "run", "mcbe", "--out", str(out), "--preset", "mcbe-paper",
        "--set", f"model.path={cached_tiny_causal_lm(arch='llama')}", "--set", "model.device=cpu",
        "--set", "run.progress=false", "--set", f"run.cache_dir={tmp_path / 'cache'}",
        # SC always has a score (a random tiny model's ratings hold no number: BS would have none, nor the overall)
        "--set", "protocol.tasks=sc", "--set", "protocol.limit=1", "--set", "protocol.sc_max_new_tokens=4",
        "--set", "protocol.categories=gender",
        "--set", "model.sampling.temperature=1.5", "--set", "run.seed=7",  # --set wins over the preset
    ]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["model"]["sampling"]["strategy"] == "model" and summary["config"]["run"]["repeats"] == 4
    block = summary["repeats"]
    assert block["n"] == 4 and [r["seed"] for r in block["runs"]] == [7, 8, 9, 10]
    assert block["headline"]["overall"]["n"] == 4 and block["sampling"].startswith("model (temperature=1.5")
    report = (out / "report.md").read_text(encoding="utf-8")
    stat = block["headline"]["overall"]
    assert "**4 repeats**" in report and f"| overall | {stat['mean']:.3f} ± {stat['std']:.3f} | 4 |" in report


class _KilledAt:
    """A scripted model that rates with its seed's last digit and is killed the first time it sees ``seed``."""

    def __init__(self, kill_seed: int | None):
        self.kill_seed = kill_seed
        self.asked: list[int] = []

    def __call__(self, request: GenerationRequest, prompt: str) -> str:
        if request.params.seed == self.kill_seed:
            self.kill_seed = None
            raise KeyboardInterrupt("killed")
        self.asked.append(request.params.seed)
        return str(request.params.seed % 10)


def _run(store_path: Path, model: _KilledAt, resume: bool = False):
    return run_with_fakes(
        "mcbe",
        options={"tasks": "bs"},
        dataset=_beis(3),
        store=SQLiteResultStore(store_path),
        generator=ScriptedGenerator(model, name="model"),
        repeats=3,
        sampling=SamplingSettings(temperature=0.7, seed=4),
        resume=resume,
    )


def test_a_killed_repeated_run_resumes_without_regenerating_a_stored_reply(tmp_path):
    killed = _KilledAt(kill_seed=6)  # repeat 3 (seeds 4, 5, 6)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path / "r.sqlite", killed)
    assert killed.asked == [4, 4, 4, 5, 5, 5]  # three BEIs per repeat, repeats 1 and 2 stored
    resumed_model = _KilledAt(kill_seed=None)
    resumed = _run(tmp_path / "r.sqlite", resumed_model, resume=True)
    assert resumed_model.asked == [6, 6, 6]
    whole = _run(tmp_path / "fresh.sqlite", _KilledAt(kill_seed=None))
    assert resumed.summary.repeats == whole.summary.repeats
    assert [r.headline["overall"] for r in whole.summary.repeats.runs] == [80.0, 90.0, 100.0]
