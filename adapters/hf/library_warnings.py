"""The libraries' deprecation notices a culturebias user cannot act on, filtered in this one place.

transformers 5 renamed the key/value cache argument and output from ``past_key_values`` to
``cache``. culturebias's scorer and scoring heads still pass and read ``past_key_values``
(their shared-prefix code works on either name: ``shared_prefill.py`` picks ``cache`` where a
model's ``forward`` takes it), so every run printed two notices about our call, not the
user's: transformers' logger line "`past_key_values`/`cache_params` are deprecated" and a
``FutureWarning`` "`past_key_values` is deprecated and will be removed in version …",
attributed to torch's ``Module.__call__``. The filters below match those messages only (by
category and module for the warning, by logger and message for the line), so any other
warning of torch or transformers still shows. Called when the hf backend loads a model;
calling it again adds nothing. Remove it once no call site uses ``past_key_values``.
"""

from __future__ import annotations

import logging
import warnings

CACHE_RENAME = r"`(past_key_values|cache_params)` is deprecated"
CACHE_RENAME_LOG = "`past_key_values`/`cache_params` are deprecated"
# The FutureWarning's frame: transformers' deprecation wrapper warns with stacklevel=2, inside torch's
# Module.__call__ (torch.nn.modules.module) or a transformers module calling a submodule.
WARNING_MODULES = r"(torch\.nn\.modules\.module|transformers\..*)"
TRANSFORMERS_LOGGER = "transformers.utils.generic"


class _CacheRenameNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(CACHE_RENAME_LOG)


def silence_library_deprecations() -> None:
    """Filter the cache-rename notices (idempotent)."""
    warnings.filterwarnings("ignore", message=CACHE_RENAME, category=FutureWarning, module=WARNING_MODULES)
    logger = logging.getLogger(TRANSFORMERS_LOGGER)
    if not any(isinstance(f, _CacheRenameNotice) for f in logger.filters):
        logger.addFilter(_CacheRenameNotice())
