"""What the exported graph takes beside the tokens: the scoring head's inputs and the 4-D additive attention mask.

Shared by the export (``export.py``, which checks the graph against torch) and the session (``runtime.py``).
"""

from __future__ import annotations

import numpy as np

SCORE_INPUTS = ["score_positions", "score_rows", "score_targets"]


def additive_mask(mask: np.ndarray, past_length: int, length: int, dtype) -> np.ndarray:
    """The ``[b, 1, t, p+t]`` additive attention mask the graph takes, from any mask transformers passes.

    A 2-D padding mask ``[b, p+t]`` becomes causal-and-padding; a 4-D boolean mask
    (True = may attend, as the hf scorer's token trees pass) or a 4-D additive
    mask is used as given.
    """
    blocked = np.finfo(dtype).min
    if mask.ndim == 4:
        if mask.dtype == np.bool_:
            return np.where(mask, 0, blocked).astype(dtype)
        return mask.astype(dtype, copy=False)
    keys = np.arange(past_length + length)[None, :]
    queries = np.arange(length)[:, None] + past_length
    allowed = (keys <= queries)[None, None, :, :] & (mask[:, None, None, :] != 0)
    return np.where(allowed, 0, blocked).astype(dtype)
