"""Secrets out of everything culturebias writes: configurations, summaries, stores, logs, error messages.

Pure text functions; what they hide:

* the password of URL userinfo (``http://user:KEY@host/v1``, DSNs such as
  ``postgresql://user:pw@host/db``); the user name stays, it says who connected;
* values of query parameters, ``name=value`` / ``name: value`` pairs and mapping
  entries whose name is a secret's (``api_key``, ``token``, ``password``,
  ``authorization``, ``x-api-key``, ``sig``, ...), libpq keyword DSNs
  (``host=db password=pw``) included;
* credentials of an ``Authorization`` header (``Bearer ...``, ``Basic ...``);
* tokens in well-known key formats (``sk-...``, ``hf_...``, ``ghp_...``, ``AKIA...``);
* any value the caller names in ``secrets``.

Names are matched whole (``max_tokens`` or ``api_key_env`` are not secrets), so
what is redacted is a credential's value and nothing else.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

REDACTED = "**redacted**"

_SECRET_WORDS = frozenset(
    {
        "apikey",
        "api_key",
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "sig",
        "signature",
        "bearer",
        "cookie",
        "session",
    }
)
# A name ending in one of these (after "_") is a secret's: access_token, client_secret, x_api_key ...
_SECRET_SUFFIXES = ("_key", "_token", "_secret", "_password", "_passwd", "_apikey", "_credential", "_credentials", "_signature")
# ... unless it names where a secret comes from rather than the secret.
_NOT_SECRET_SUFFIXES = ("_env", "_file", "_path", "_name", "_id", "_type", "_kind", "_count", "_len", "_length")
_NOT_SECRET = frozenset({"cache_key", "request_key", "sort_key", "model_key", "primary_key", "key_text", "n_tokens", "max_tokens"})


def is_secret_name(name: str) -> bool:
    """Whether a field, header, parameter or mapping key named ``name`` holds a secret."""
    normal = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")
    if not normal or normal in _NOT_SECRET or normal.endswith(_NOT_SECRET_SUFFIXES):
        return False
    return normal in _SECRET_WORDS or normal.endswith(_SECRET_SUFFIXES)


# scheme://user:password@
# (to the last "@" before a space or quote: a password with a raw "/" or "@" is hidden whole, at worst with more)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s\"'<>]*)@")
# Authorization: Bearer xxx / Basic xxx (also without the header name)
_AUTH_SCHEME = re.compile(r"(?i)\b(?P<scheme>bearer|basic)(?P<space>\s+)(?P<value>[A-Za-z0-9._~+/=\-]{8,})")
# name=value, name: value, "name": "value". Only a name ending in a secret's word starts a match
# (is_secret_name has the last word), so no other pair can swallow the text a secret hides in.
_SECRET_WORD = (
    r"api[_\-]?key|key|token|secret|password|passwd|pwd|pass|passphrase|authorization|auth"
    r"|credentials?|sig|signature|bearer|cookie|session"
)
_PAIR = re.compile(
    r"(?i)(?P<name>(?<![A-Za-z0-9_.\-])(?:[A-Za-z0-9]+[_.\-])*(?:" + _SECRET_WORD + r")(?![A-Za-z0-9_.\-]))"
    r"""(?P<close>["'])?(?P<sep>\s*[=:]\s*)(?!//)(?P<quote>["'])?(?P<value>(?(quote)[^"'\n]*|[^\s&;,"'\)\]\}]+))"""
)
_KNOWN_FORMATS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{20,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35})"
)


def _pair(match: re.Match[str]) -> str:
    name, value = match.group("name"), match.group("value")
    # A value already hidden, or an auth scheme (its credential is handled apart).
    if (
        not is_secret_name(name.rsplit(".", 1)[-1])
        or value in ("", REDACTED)
        or value.lower() in ("bearer", "basic")
    ):
        return match.group(0)
    scheme = re.match(r"(?i)(bearer|basic)\s+", value)  # quoted "Bearer xyz": keep the scheme's name
    kept = scheme.group(0) if scheme else ""
    quote = match.group("quote") or ""
    return f"{name}{match.group('close') or ''}{match.group('sep')}{quote}{kept}{REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    user, colon, password = match.group("userinfo").partition(":")
    if not colon or not password or password == REDACTED:
        return match.group(0)
    return f"{match.group('scheme')}{user}:{REDACTED}@"


def _auth_scheme(match: re.Match[str]) -> str:
    if match.group("value") == REDACTED:
        return match.group(0)
    return f"{match.group('scheme')}{match.group('space')}{REDACTED}"


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential it holds replaced by ``**redacted**``."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(_userinfo, text)
    text = _AUTH_SCHEME.sub(_auth_scheme, text)
    text = _PAIR.sub(_pair, text)
    return _KNOWN_FORMATS.sub(REDACTED, text)


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:  # JSON boundary: any JSON-like value, returned in kind
    """A copy of a JSON-like value with every string redacted and every secret-named entry hidden."""
    known = tuple(secrets)
    if isinstance(value, str):
        return redact_text(value, known)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and is_secret_name(key) and isinstance(item, str) and item not in ("", REDACTED):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item, known)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(item, known) for item in value)
    return value


def url_secrets(url: str) -> list[str]:
    """The credentials written into a URL (userinfo password, secret-named query values), to scrub wherever they echo."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
        found = [unquote(parts.password)] if parts.password else []
    except ValueError:
        return []
    found += [value for name, value in parse_qsl(parts.query) if value and is_secret_name(name)]
    return found


_URL_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:@/?#]*:)(?P<secret>[^@/?#]*)(?=@)")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<secret>[^&#]*)", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|[^\s']+)", re.IGNORECASE)


def redact_dsn(dsn: str) -> str:
    """The DSN with any password in it (URL userinfo, ``?password=``, ``password=...``) replaced."""
    if "://" in dsn:
        dsn = _URL_PASSWORD.sub(lambda m: m["head"] + REDACTED, dsn)
        return _QUERY_PASSWORD.sub(lambda m: m["head"] + REDACTED, dsn)
    return _KEYWORD_PASSWORD.sub(lambda m: m["head"] + REDACTED, dsn)


def dsn_secrets(dsn: str) -> list[str]:
    """The password values written into a DSN, to scrub from any message that might echo them."""
    found: list[str] = []
    for pattern in (_URL_PASSWORD, _QUERY_PASSWORD, _KEYWORD_PASSWORD):
        found.extend(m["secret"].strip("'") for m in pattern.finditer(dsn))
    return [s for s in found if s]
