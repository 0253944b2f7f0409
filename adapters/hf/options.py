"""``model.*`` options of the ``hf`` backend (transformers + PyTorch)."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from culturebias.adapters.hf.model_options import LocalModelOptions


class HFOptions(LocalModelOptions):
    # accelerate places the layers over every GPU there is (then CPU memory, then disk), for a
    # model larger than one device; model.device must stay auto. Unset: the whole model on model.device.
    device_map: Literal["auto", "balanced", "balanced_low_0", "sequential"] | None = None

    @model_validator(mode="after")
    def _placement_is_one_setting(self) -> "HFOptions":
        if self.device_map is not None and self.device != "auto":
            raise ValueError(
                f"model.device_map={self.device_map} places the model itself: leave model.device=auto "
                f"(it is {self.device!r}), or unset model.device_map"
            )
        return self
