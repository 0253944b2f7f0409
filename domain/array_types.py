"""The numpy array types the domain's numeric code is annotated with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]
# Numbers a metric accepts: a list, or an array it reads as floats.
FloatsLike = Sequence[float] | Floats
