"""``run.executor=ray`` on a real local Ray cluster (one per module): replicas, identity with the local
executor, faults, sweeps as Ray tasks, and bad input refused before anything is stored."""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from culturebias.adapters.kobbq.files import KoBBQFiles  # noqa: E402
from culturebias.adapters.ray.errors import RayClusterError, ReplicasLostError  # noqa: E402
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore  # noqa: E402
from culturebias.bootstrap.api import make_settings, run_evaluation, sweep  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.bootstrap.container import SharedModel  # noqa: E402
from culturebias.bootstrap.settings import load_settings  # noqa: E402
from culturebias.domain.bbq.answer_order import shown_order  # noqa: E402
from culturebias.domain.errors import ConfigError, ModelLoadError  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

KOBBQ = {"mode": "likelihood", "prompts": "1", "permutations": "0", "statistics": False, "limit": 8}
TWBIAS = {"groups": "gender", "prompt_types": "0,1,2", "limit": 4}
# No bootstrap intervals: over 4 items a resampled effect size is a near-discontinuous function of the scores,
# so its interval ends move far more than the float32 last bits that move the point estimates.
BOOTSTRAP = ["run.bootstrap_resamples=0"]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster for the module: 4 logical CPUs (2 replicas, sweep tasks), no dashboard."""
    ray.init(num_cpus=4, include_dashboard=False, logging_level="warning", log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def _replicas_end_with_their_run():
    yield
    gc.collect()  # a finished run's backend, and with it its replica actors, goes now


@pytest.fixture(scope="module")
def model() -> str:
    return str(cached_tiny_causal_lm())


def settings(model: str, executor: str, *assignments: str, options: dict | None = None, data: Any = None):
    base = load_settings(
        None,
        [f"run.executor={executor}", "ray.replicas=2", "ray.batch_size=4", "run.commit_seconds=0", "model.batch_size=8", *assignments, *BOOTSTRAP],
    )
    return make_settings(
        settings=base,
        model={"backend": "hf", "path": model, "device": "cpu"},
        options=options if options is not None else KOBBQ,
        data=data,
    )


class WatchedStore:
    """A real SQLite store that counts every log-likelihood key saved, and calls ``on_save`` at the first save."""

    def __init__(self, path: Path, on_save: Callable[[], None] | None = None):
        self.inner = SQLiteResultStore(path)
        self.saved: Counter[str] = Counter()
        self.on_save = on_save

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def save_results(self, run_id, stage, results, progress=None):
        self.inner.save_results(run_id, stage, results, progress=progress)
        if stage == "loglikelihood":
            self.saved.update(list(results))
            hook, self.on_save = self.on_save, None
            if hook is not None:
                hook()


def scores(store: Any, run_id: str) -> dict[str, dict]:
    return store.load_results(run_id, "loglikelihood")


def assert_same_scores(ray_scores: dict[str, dict], local_scores: dict[str, dict]) -> None:
    """Each log-likelihood to 1e-6 relative: a float32 sum over a sequence differs in its last bits with the batch it
    was computed in (the local executor with another batch size differs as much); token counts and greediness exactly."""
    assert ray_scores.keys() == local_scores.keys() and ray_scores
    for key, local in local_scores.items():
        assert ray_scores[key]["logprob"] == pytest.approx(local["logprob"], rel=1e-6, abs=1e-6), key
        assert (ray_scores[key]["n_tokens"], ray_scores[key]["is_greedy"]) == (local["n_tokens"], local["is_greedy"])


@pytest.fixture(scope="module")
def local_kobbq(model, tmp_path_factory):
    store = SQLiteResultStore(tmp_path_factory.mktemp("local") / "results.sqlite")
    outcome = run_evaluation("kobbq", settings(model, "local"), store=store)
    return outcome, scores(store, outcome.run_id)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-4, abs=1e-6, nan_ok=True)
    return a == b


@pytest.mark.parametrize(
    "numerics",
    [["model.batch_size=1", "model.prefix_cache=false"], []],
    ids=["one-sequence-per-pass:exact", "prefix-reuse-batches-of-8:float32-last-bits"],
)
def test_twbias_and_kobbq_on_two_replicas_equal_the_local_executor(model, tmp_path, twbias_data, numerics):
    """Scored one sequence per forward pass, every number is bitwise the local one; with prefix reuse and
    batches, each log-likelihood agrees to 1e-6 relative: float32 sums differ in their last bits with the batch a
    sequence was computed in (two local runs with another run.chunk_size differ as much), and statistics of
    differences between near-equal perplexities (t, d, p) amplify that to about 1e-6, checked to 1e-4."""
    exact = bool(numerics)
    local_store, ray_store = SQLiteResultStore(tmp_path / "local.sqlite"), SQLiteResultStore(tmp_path / "ray.sqlite")
    jobs = (("twbias", TWBIAS, twbias_data), ("kobbq", KOBBQ, None))
    local = {
        name: run_evaluation(name, settings(model, "local", *numerics, options=options, data=data), store=local_store)
        for name, options, data in jobs
    }
    shared = SharedModel()  # one set of replicas for both benchmarks
    on_ray = {
        name: run_evaluation(name, settings(model, "ray", *numerics, options=options, data=data), store=ray_store, shared_model=shared)
        for name, options, data in jobs
    }
    for name, _, _ in jobs:
        ray_scores, local_scores = scores(ray_store, on_ray[name].run_id), scores(local_store, local[name].run_id)
        if exact:
            assert {k: v["logprob"] for k, v in ray_scores.items()} == {k: v["logprob"] for k, v in local_scores.items()}
        assert_same_scores(ray_scores, local_scores)
        if exact:
            assert on_ray[name].summary.metrics == local[name].summary.metrics, name
        else:
            assert _close(on_ray[name].summary.metrics.model_dump(), local[name].summary.metrics.model_dump()), name
        assert on_ray[name].summary.model == local[name].summary.model, "same identity and provenance: the runs resume each other"
    pool = shared._owner.model_backend().pool
    assert all(member.pids for member in pool.members), "both replicas computed shards"
    assert len({pid for member in pool.members for pid in member.pids} | {os.getpid()}) == 3, "each in its own process"


@pytest.mark.parametrize("restarts", [1, 0], ids=["restarted-by-ray", "gone:the-other-replica-takes-over"])
def test_a_replica_killed_mid_run_has_its_shards_retried_and_nothing_is_lost_or_stored_twice(model, local_kobbq, tmp_path, restarts):
    shared = SharedModel()
    killed: list[int] = []

    def kill_replica_0():
        pool = shared._owner.model_backend().pool
        killed.append(ray.get(pool.members[0].handle.pid.remote()))
        os.kill(killed[0], signal.SIGKILL)

    store = WatchedStore(tmp_path / "results.sqlite", kill_replica_0)
    outcome = run_evaluation("kobbq", settings(model, "ray", f"ray.max_restarts={restarts}"), store=store, shared_model=shared)
    assert killed, "the replica was killed during the run"
    assert set(store.saved.values()) == {1}, "every result stored once"
    assert_same_scores(scores(store, outcome.run_id), local_kobbq[1])
    assert outcome.summary.metrics == local_kobbq[0].summary.metrics
    pool = shared._owner.model_backend().pool
    replica_0, replica_1 = pool.members
    if restarts:
        assert any(pid != killed[0] for pid in replica_0.pids), "replica 0 was restarted by Ray and computed shards again"
    else:
        assert replica_0.gone and not replica_1.gone and pool.retried >= 1, "replica 0's unfinished shards went to replica 1"
        assert all(pid == killed[0] for pid in replica_0.pids)


def test_every_replica_gone_stops_with_a_clear_error_and_resume_rescores_nothing_stored(model, local_kobbq, tmp_path):
    shared = SharedModel()

    def kill_every_replica():
        for pid in shared._owner.model_backend().pool.pids():
            os.kill(pid, signal.SIGKILL)

    store = WatchedStore(tmp_path / "results.sqlite", kill_every_replica)
    with pytest.raises(ReplicasLostError, match="--resume"):
        run_evaluation("kobbq", settings(model, "ray", "ray.max_restarts=0"), store=store, shared_model=shared)
    [failed] = store.find_runs()
    assert failed.status == "failed" and "ReplicasLostError" in (failed.failure or "")
    first = Counter(store.saved)
    assert first and len(scores(store, failed.run_id)) == len(first), "what was delivered before the loss is stored"
    del shared
    gc.collect()

    store.saved.clear()
    resumed = run_evaluation("kobbq", settings(model, "ray"), store=store, resume=True)
    assert resumed.run_id == failed.run_id
    assert not set(store.saved) & set(first), "a resumed run re-scores nothing that is stored"
    assert_same_scores(scores(store, resumed.run_id), local_kobbq[1])
    assert resumed.summary.metrics == local_kobbq[0].summary.metrics


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "assignments, error, message",
    [
        ([f"ray.address=127.0.0.1:{_closed_port()}", "ray.connect_timeout=2"], RayClusterError, "cannot reach the Ray head"),
        (["ray.gpus=1"], RayClusterError, "no node can hold one replica"),
        (["ray.replicas=3", "ray.cpus=2"], RayClusterError, "only 2 fit"),
        (["model.path={broken}"], ModelLoadError, "model replica 0 could not load the model"),
    ],
    ids=["unreachable-address", "no-gpu", "too-many-cpus", "model-cannot-load"],
)
def test_bad_input_is_refused_before_anything_is_written(model, tmp_path, assignments, error, message):
    broken = tmp_path / "not-a-model"
    broken.mkdir()
    (broken / "config.json").write_text("{}", encoding="utf-8")
    given = settings(model, "ray", *[a.format(broken=broken) for a in assignments if not a.startswith("model.")])
    if any(a.startswith("model.") for a in assignments):
        given = make_settings(settings=given, model={"path": str(broken)})
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    with pytest.raises(error, match=message):
        run_evaluation("kobbq", given, out=tmp_path / "out", store=store)
    assert store.find_runs() == [], "no run stored"
    assert not (tmp_path / "out").exists(), "no output folder"


def test_the_cli_reports_an_unreachable_cluster_as_a_configuration_error(model, tmp_path, capsys):
    args = ["run", "kobbq", "--out", str(tmp_path / "out"), "--set", f"model.path={model}", "--set", "run.executor=ray"]
    args += ["--set", f"ray.address=127.0.0.1:{_closed_port()}", "--set", "ray.connect_timeout=2"]
    code = main(args)
    assert code == 2, capsys.readouterr().err
    assert "cannot reach the Ray head" in capsys.readouterr().err
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_without_ray_installed_the_executor_names_the_install_command(model, monkeypatch):
    from culturebias.bootstrap.container import build_executor_backend

    monkeypatch.setitem(sys.modules, "ray", None)  # find_spec: not importable
    given = settings(model, "ray")
    with pytest.raises(ConfigError, match=r"run.executor=ray needs ray.*pip install -e '\.\[ray\]' in the culturebias clone"):
        build_executor_backend(given, given.model.backend_options(), Path("."))


def _replay(path: Path, policy: str, limit: int = 4) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item in KoBBQFiles(None).load().items[:limit]:
            chosen = item.unknown_index if policy == "unknown" or item.biased_index is None else item.biased_index
            letter = "ABC"[shown_order(3, 0).index(chosen)]
            handle.write(json.dumps({"sample_id": item.sample_id, "prompt_id": 1, "permutation": 0, "raw": letter}) + "\n")
    return path


def test_a_sweep_runs_each_pair_as_a_ray_task_with_the_local_sweeps_results(tmp_path):
    plan = {
        "benchmarks": ["kobbq"],
        "models": [
            {"name": "stereotyper", "backend": "replay", "path": str(_replay(tmp_path / "b.jsonl", "biased"))},
            {"name": "broken", "backend": "replay", "path": str(tmp_path / "missing.jsonl")},
            {"name": "cautious", "backend": "replay", "path": str(_replay(tmp_path / "u.jsonl", "unknown"))},
        ],
        "protocol": {"kobbq": {"prompts": "1", "permutations": "0", "limit": 4, "statistics": False}},
        "run": {"progress": "never"},
        "ray": {"cpus": 1},
    }
    local = sweep(plan, out=tmp_path / "local")
    on_ray = sweep({**plan, "run": {"progress": "never", "executor": "ray"}}, out=tmp_path / "ray")
    assert [(p.model, p.status) for p in on_ray.pairs] == [(p.model, p.status) for p in local.pairs]
    assert [p.status for p in on_ray.pairs] == ["finished", "failed", "finished"]
    assert "missing.jsonl" in (on_ray.pair("broken", "kobbq").error or "")
    workers = {p.worker for p in on_ray.pairs}
    assert None not in workers and all(not w.startswith(f"{os.getpid()}@") for w in workers), "each pair ran in a Ray task"
    for name in ("stereotyper", "cautious"):
        ray_summary = json.loads((tmp_path / "ray" / name / "kobbq" / "summary.json").read_text(encoding="utf-8"))
        local_summary = json.loads((tmp_path / "local" / name / "kobbq" / "summary.json").read_text(encoding="utf-8"))
        assert ray_summary["metrics"] == local_summary["metrics"]
        assert (tmp_path / "ray" / name / "kobbq" / "report.md").is_file()
    assert [c.status for c in on_ray.comparisons] == ["written"]
    store = SQLiteResultStore(tmp_path / "ray" / "results.sqlite")
    # A replay file that does not exist fails before the pair writes anything: sweep.json alone records it.
    assert sorted(m.status for m in store.find_runs()) == ["finished", "finished"], "one store, written by the driver"
    assert on_ray.pair("broken", "kobbq").run_id is None and not (tmp_path / "ray" / "broken" / "kobbq").exists()

    # The broken model's answers arrive: --resume runs only that pair, continuing its failed run.
    _replay(tmp_path / "missing.jsonl", "biased")
    resumed = sweep({**plan, "run": {"progress": "never", "executor": "ray"}}, out=tmp_path / "ray", resume=True)
    assert [p.status for p in resumed.pairs] == ["finished"] * 3
    kept = [p.run_id for p in on_ray.pairs if p.run_id is not None]
    assert [p.run_id for p in resumed.pairs if p.model != "broken"] == kept, "finished pairs keep their runs"
    assert resumed.pair("broken", "kobbq").run_id not in (None, *kept), "the broken pair gets a run of its own"
    assert resumed.pair("stereotyper", "kobbq").worker == on_ray.pair("stereotyper", "kobbq").worker, "a finished pair is not run again"
    assert sorted(m.status for m in store.find_runs()) == ["finished"] * 3


def test_importing_culturebias_does_not_import_ray():
    import subprocess

    code = (
        "import sys, culturebias, culturebias.bootstrap.container, culturebias.application.sweep, culturebias.bootstrap.cli\n"
        "print('ray' in sys.modules)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def _backend(factory, options, tmp_path, **ray_options):
    from culturebias.adapters.ray.backend import RayBackend, RayOptions

    return RayBackend(factory, options, tmp_path / "cache", RayOptions(replicas=2, batch_size=3, **ray_options))


def test_the_pseudo_scorer_and_the_generator_shard_too_and_an_openai_backend_runs_in_replicas(tmp_path):
    """Masked-LM pseudo-log-likelihoods and greedy replies from hf replicas, and an openai backend (a real HTTP
    server on 127.0.0.1) held by replicas: each equals the same backend called here."""
    from culturebias.adapters.hf.backend import create_backend as hf_backend
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.openai.backend import create_backend as openai_backend
    from culturebias.adapters.openai.options import OpenAIOptions
    from culturebias.domain.requests import (
        ChatMessage,
        GenerationParams,
        GenerationRequest,
        LoglikelihoodRequest,
        PseudoLoglikelihoodRequest,
    )
    from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer
    from culturebias.testing.tiny_models import cached_tiny_masked_lm

    texts = ["男生收入高才會有話語權", "女生收入高才會有話語權", "The nurse said she would help.", "그 사람은 의사입니다."]
    masked = HFOptions(backend="hf", path=str(cached_tiny_masked_lm()), kind="masked", device="cpu", batch_size=4)
    pseudo = [PseudoLoglikelihoodRequest(t, s, e) for t in texts for s, e in ((0, len(t)), (2, 9))]
    on_ray = _backend(hf_backend, masked, tmp_path)
    got = on_ray.pseudo_scorer().pseudo_loglikelihood(pseudo)
    assert on_ray.pseudo_scorer().identity == hf_backend(masked, tmp_path / "cache").pseudo_scorer().identity
    want = hf_backend(masked, tmp_path / "cache").pseudo_scorer().pseudo_loglikelihood(pseudo)
    assert [g.n_tokens for g in got] == [w.n_tokens for w in want]
    assert [g.logprob for g in got] == pytest.approx([w.logprob for w in want], rel=1e-6, abs=1e-6)
    on_ray.close()

    causal = HFOptions(backend="hf", path=str(cached_tiny_causal_lm()), device="cpu", batch_size=4)
    local = hf_backend(causal, tmp_path / "cache")
    server = OpenAITestServer("tiny", HFTokenSource(str(cached_tiny_causal_lm())), local.generator()).start()
    try:
        api = OpenAIOptions(backend="openai", api_base=server.api_base, path="tiny", chat_template="none", cache="off")
        on_ray = _backend(openai_backend, api, tmp_path)
        requests = [LoglikelihoodRequest(c, s) for c in ("", "問題：", "hello ") for s in texts]
        direct = openai_backend(api, tmp_path / "direct")
        for have, expected in zip(on_ray.scorer().loglikelihood(requests), direct.scorer().loglikelihood(requests), strict=True):
            assert (have.n_tokens, have.is_greedy) == (expected.n_tokens, expected.is_greedy)
            assert have.logprob == pytest.approx(expected.logprob, abs=1e-6)
        replies = [GenerationRequest.chat([ChatMessage("user", t)], GenerationParams(max_new_tokens=6)) for t in texts]
        assert on_ray.generator().generate(replies) == local.generator().generate(replies)
        assert len({m.pids[0] for m in on_ray.pool.members if m.pids}) == 2, "both openai replicas sent requests"
        on_ray.close()
    finally:
        server.stop()


def test_a_sweep_on_an_unreachable_cluster_is_refused_before_it_writes_anything(tmp_path):
    plan = {
        "benchmarks": ["kobbq"],
        "models": [{"name": "stereotyper", "backend": "replay", "path": str(_replay(tmp_path / "b.jsonl", "biased"))}],
        "run": {"executor": "ray"},
        "ray": {"address": f"127.0.0.1:{_closed_port()}", "connect_timeout": 2},
    }
    with pytest.raises(RayClusterError, match="cannot reach the Ray head"):
        sweep(plan, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()
