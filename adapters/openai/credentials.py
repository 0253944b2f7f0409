"""Where the API key comes from: ``model.api_key``, a secrets file, or an environment variable.

The key is held as a ``SecretStr`` from here on, so a stray ``repr`` or log line
prints ``**********`` instead of the key.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import SecretStr

from culturebias.domain.errors import ConfigError


def resolve_api_key(api_key: SecretStr | None, api_key_file: str | None, api_key_env: str) -> SecretStr | None:
    """The first of: the explicit key, the first line of ``api_key_file``, ``$api_key_env``; else None.

    None is legitimate: local servers (vLLM, llama.cpp) usually need no key.
    """
    if api_key is not None and api_key.get_secret_value():
        return api_key
    if api_key_file:
        path = Path(api_key_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"model.api_key_file {path} cannot be read: {error.strerror}") from None
        key = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not key:
            raise ConfigError(f"model.api_key_file {path} is empty")
        return SecretStr(key)
    from_env = os.environ.get(api_key_env, "").strip()
    return SecretStr(from_env) if from_env else None
