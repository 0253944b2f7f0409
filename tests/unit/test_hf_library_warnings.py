"""The hf backend filters the libraries' cache-rename notices in one place, and nothing else."""

from __future__ import annotations

import logging
import warnings

from culturebias.adapters.hf.library_warnings import TRANSFORMERS_LOGGER, silence_library_deprecations


def _emitted(message: str, category: type[Warning], module: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        silence_library_deprecations()  # inside: catch_warnings puts the filters back afterwards
        warnings.warn_explicit(message, category, "module.py", 1789, module=module)
    return [str(w.message) for w in caught]


def test_the_cache_rename_future_warning_is_filtered_where_torch_and_transformers_raise_it():
    rename = "`past_key_values` is deprecated and will be removed in version 5.40.0 for `LlamaModel.forward`. Use `cache` instead."
    assert _emitted(rename, FutureWarning, "torch.nn.modules.module") == []
    assert _emitted(rename, FutureWarning, "transformers.models.llama.modeling_llama") == []


def test_other_warnings_still_show():
    assert _emitted("`foo` is deprecated and will be removed", FutureWarning, "torch.nn.modules.module")
    rename = "`past_key_values` is deprecated and will be removed in version 5.40.0"
    assert _emitted(rename, FutureWarning, "my_own_code")  # a user's own call: theirs to act on
    assert _emitted(rename, UserWarning, "torch.nn.modules.module")


def test_the_transformers_log_line_is_dropped_once_and_other_lines_pass(caplog):
    silence_library_deprecations()
    silence_library_deprecations()
    logger = logging.getLogger(TRANSFORMERS_LOGGER)
    assert len([f for f in logger.filters if type(f).__name__ == "_CacheRenameNotice"]) == 1
    with caplog.at_level(logging.WARNING, logger=TRANSFORMERS_LOGGER):
        logger.warning("`past_key_values`/`cache_params` are deprecated. Use `cache` instead.")
        logger.warning("something else")
    assert [r.getMessage() for r in caplog.records if r.name == TRANSFORMERS_LOGGER] == ["something else"]
