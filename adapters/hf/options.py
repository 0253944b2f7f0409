"""``model.*`` options of the ``hf`` backend (transformers + PyTorch)."""

from __future__ import annotations

from culturebias.adapters.model_options import LocalModelOptions


class HFOptions(LocalModelOptions):
    pass
