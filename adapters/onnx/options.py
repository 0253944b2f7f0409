"""``model.*`` options of the ``onnx`` backend (ONNX Runtime; the model is exported once from torch)."""

from __future__ import annotations

from typing import Literal

from culturebias.adapters.hf.model_options import LocalModelOptions


class OnnxOptions(LocalModelOptions):
    backend: str = "onnx"
    dtype: Literal["float32", "float16"] = "float32"  # float16 on the CUDA execution provider only
