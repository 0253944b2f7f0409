"""``model.*`` options of the ``onnx`` backend (ONNX Runtime; the model is exported once from torch)."""

from __future__ import annotations

from culturebias.adapters.model_options import LocalModelOptions


class OnnxOptions(LocalModelOptions):
    backend: str = "onnx"
