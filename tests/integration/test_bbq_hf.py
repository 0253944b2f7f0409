"""KoBBQ and CBBQ end to end on a tiny random HF model (chat template, byte-level BPE).

Likelihood mode must choose what a naive one-forward-per-option loop with
transformers chooses; generate mode must run through the HF generator and
account for every answer (chosen or out-of-choice).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from culturebias.adapters.kobbq.files import KoBBQFiles  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.domain.bbq.answer_order import shown_order  # noqa: E402

LIMIT = 8  # two samples of age-001 (versions a and b): every context type


@pytest.fixture(scope="module")
def model_path() -> Path:
    return cached_tiny_causal_lm(seed=3)


def run(out: Path, benchmark: str, model: Path, *assignments: str) -> dict:
    args = ["run", benchmark, "--out", str(out), "--set", "model.backend=hf", "--set", f"model.path={model}"]
    args += ["--set", "model.device=cpu", "--set", "run.progress=false"]
    if benchmark == "kobbq":
        args += ["--set", "protocol.statistics=false"]
    for assignment in assignments:
        args += ["--set", assignment]
    assert main(args) == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


@functools.cache
def load(model_path: Path):
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_path))
    return tokenizer, transformers.AutoModelForCausalLM.from_pretrained(str(model_path)).eval()


def naive_choice(model_path: Path, text: str, letters: tuple[str, ...]) -> int:
    """One full forward per option: chat-rendered prompt + letter, summed letter log-probability."""
    tokenizer, model = load(model_path)
    context = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False)
    scores = []
    for letter in letters:
        prefix = tokenizer(context, add_special_tokens=False)["input_ids"]
        full = tokenizer(context + letter, add_special_tokens=False)["input_ids"]
        start = len(prefix)
        while start > 0 and full[:start] != prefix[:start]:
            start -= 1  # a token straddling the boundary belongs to the continuation
        with torch.no_grad():
            logits = model(torch.tensor([full])).logits[0].log_softmax(-1)
        scores.append(sum(float(logits[i - 1, full[i]]) for i in range(start, len(full))))
    return max(range(len(letters)), key=lambda i: scores[i])


def test_kobbq_likelihood_mode_matches_a_naive_per_option_loop(tmp_path, model_path):
    summary = run(tmp_path / "out", "kobbq", model_path, "protocol.mode=likelihood", "protocol.prompts=1,3", f"protocol.limit={LIMIT}")
    assert summary["metrics"]["mode"] == "likelihood" and summary["metrics"]["chat_template"] is True
    assert summary["counts"]["answers"] == LIMIT * 2 * 3 and summary["counts"]["out_of_choice"] == 0
    for key in ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"):
        assert 0 <= abs(summary["metrics"]["overall"][key]["mean"]) <= 1
    data = KoBBQFiles(None).load()
    items = {i.sample_id: i for i in data.items[:LIMIT]}
    checked_ids = {i.sample_id for i in data.items[2:6]}  # two disambiguated and two ambiguous questions
    checked = 0
    for line in summary["details"]["predictions"]:
        sample_id, prompt_id, permutation, chosen, _ = line.split("|")
        if prompt_id != "1" or sample_id not in checked_ids:
            continue
        prompt = data.prompts[prompt_id]
        item = items[sample_id].with_unknown_wording(prompt.unknown)
        order = shown_order(3, int(permutation))
        text = prompt.render(item.context, item.question, tuple(item.options[i] for i in order))
        assert order[naive_choice(model_path, text, prompt.letters)] == int(chosen), line
        checked += 1
    assert checked == 4 * 3


def test_kobbq_generate_mode_accounts_for_every_answer(tmp_path, model_path):
    summary = run(
        tmp_path / "out",
        "kobbq",
        model_path,
        "protocol.mode=generate",
        "protocol.prompts=2",
        "protocol.permutations=0",
        f"protocol.limit={LIMIT}",
        "protocol.max_new_tokens=4",
    )
    counts = summary["counts"]
    assert summary["metrics"]["mode"] == "generate"
    assert counts["answers"] == LIMIT
    ooc = summary["metrics"]["overall"]["ooc_ratio"]["per_prompt"]["2"]
    assert ooc == pytest.approx(counts["out_of_choice"] / LIMIT)
    assert summary["model"]["generator"]["backend"] == "hf"


def test_cbbq_chain_of_thought_on_the_tiny_model(tmp_path, model_path):
    summary = run(
        tmp_path / "out",
        "cbbq",
        model_path,
        "protocol.mode=likelihood",
        "protocol.condition=q,q_if_cot",
        "protocol.categories=gender",
        "protocol.limit=2",
        "protocol.max_new_tokens=3",
        "protocol.reasoning_max_new_tokens=5",
    )
    metrics = summary["metrics"]
    assert metrics["mode"] == "likelihood" and metrics["conditions"] == ["q", "q_if_cot"]
    assert set(metrics["by_condition"]) == {"q", "q_if_cot"}
    assert summary["counts"]["answers"] == 2 * 4  # 2 ambiguous + 2 disambiguated, two conditions
    assert "generator" in summary["model"] and "scorer" in summary["model"]  # reasoning generated, letters scored
    assert (tmp_path / "out" / "report.md").is_file()
