"""``mlflow.evaluate(..., evaluators="culturebias")``: a culturebias benchmark as an MLflow model evaluator.

Registered through the entry point ``culturebias`` in the group ``mlflow.model_evaluator``
(pyproject), so MLflow finds it once culturebias is installed::

    result = mlflow.evaluate(
        data=pandas.DataFrame({"benchmark": ["kobbq"]}),   # MLflow requires data; the benchmark reads its own
        model_type="text",                                  # MLflow requires a model type
        evaluators="culturebias",
        evaluator_config={"benchmark": "kobbq", "model": {"path": "/models/m"}, "options": {"limit": 50}},
    )
    result.metrics["diff_bias_amb"], result.metrics["diff_bias_amb_ci_high"]

The model is culturebias's own model section (``evaluator_config["model"]``: a path or hub id,
a backend, as ``culturebias.evaluate`` takes it), since a benchmark asks the model
log-likelihoods or chat generations that an MLflow pyfunc does not offer; ``model`` must be
None. Further keys: ``options`` (``protocol.*``), ``data``, ``judge``, ``run``. The run is
logged into MLflow's run (``mlflow_tracking.log_run``) and returned as an ``EvaluationResult``.
This module is the entry point's composition root: it calls the public API.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from mlflow.exceptions import MlflowException
from mlflow.models.evaluation.artifacts import JsonEvaluationArtifact, TextEvaluationArtifact
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

CONFIG_KEYS = ("benchmark", "model", "options", "data", "judge", "run")


class CultureBiasEvaluator(ModelEvaluator):
    @classmethod
    def can_evaluate(cls, *, model_type: Any, evaluator_config: Any, **kwargs: Any) -> bool:  # Any: MLflow's evaluator plugin signature
        return isinstance(evaluator_config, dict) and "benchmark" in evaluator_config

    def evaluate(self, *, model_type: Any, dataset: Any, run_id: str, evaluator_config: dict[str, Any],  # Any: MLflow's evaluator plugin signature
                 model: Any = None, **kwargs: Any) -> EvaluationResult:  # Any: MLflow's evaluator plugin signature
        from mlflow import MlflowClient

        import culturebias
        from culturebias.bootstrap.governance import exported_run

        unknown = sorted(set(evaluator_config) - set(CONFIG_KEYS) - {"col_mapping"})
        if unknown:
            raise MlflowException(f"culturebias evaluator_config keys are {', '.join(CONFIG_KEYS)}; unknown: {', '.join(unknown)}")
        if model is not None:
            raise MlflowException(
                "culturebias runs the model of evaluator_config['model'] (a path or hub id, as culturebias.evaluate "
                "takes it): pass model=None"
            )
        with tempfile.TemporaryDirectory(prefix="culturebias-mlflow-") as tmp:
            out = Path(tmp) / "run"
            culturebias.evaluate(
                evaluator_config["benchmark"],
                **{key: evaluator_config[key] for key in ("model", "options", "data", "judge", "run") if key in evaluator_config},
                out=out,
            )
            from culturebias.adapters.governance.mlflow_tracking import log_run

            run = exported_run(out)
            client = MlflowClient()
            metrics, paths = log_run(client, run_id, run)
            base = client.get_run(run_id).info.artifact_uri.rstrip("/")
            artifacts = {  # read from the tracking store when their content is asked for
                name: (JsonEvaluationArtifact if path.endswith(".json") else TextEvaluationArtifact)(uri=f"{base}/{path}")
                for name, path in paths.items()
            }
        return EvaluationResult(metrics=metrics, artifacts=artifacts, run_id=run_id)
