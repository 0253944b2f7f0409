"""Secrets are redacted wherever they are written: the pure functions, the stored configuration, the log processor."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from culturebias.bootstrap.logging import configure_logging, redact_secrets
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.redaction import REDACTED, is_secret_name, redact_text, redact_value, url_secrets

R = REDACTED


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://user:KEY123@host:8000/v1", f"http://user:{R}@host:8000/v1"),
        ("postgresql://gov:pw@db.example:5432/results", f"postgresql://gov:{R}@db.example:5432/results"),
        ("postgresql://gov:p@ss/w0rd@db:5432/x", f"postgresql://gov:{R}@db:5432/x"),  # unencoded characters too
        ("postgresql://gov@db/x", "postgresql://gov@db/x"),  # a user name is no secret
        ("https://h/v1?api-key=abc&api-version=2024-06-01", f"https://h/v1?api-key={R}&api-version=2024-06-01"),
        ("https://h/x?key=AIzaSyA-123&access_token=zz&sig=q", f"https://h/x?key={R}&access_token={R}&sig={R}"),
        ("host=db user=gov password=hunter2 dbname=x", f"host=db user=gov password={R} dbname=x"),
        ("Authorization: Bearer abcdefghijklmnop", f"Authorization: Bearer {R}"),
        ("{'X-Api-Key': 'k1', 'Authorization': 'Basic dXNlcjpwYXNz'}", f"{{'X-Api-Key': '{R}', 'Authorization': 'Basic {R}'}}"),
        ('{"client_secret": "s", "max_tokens": 5}', f'{{"client_secret": "{R}", "max_tokens": 5}}'),
        ("key sk-proj-abcdefghijklmnopqrstuvwx leaked", f"key {R} leaked"),
        ("token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", f"token {R}"),
        # what is not a secret stays as it is
        ("n_tokens=3 max_tokens=64 api_key_env=OPENAI_API_KEY cache_key=ab12", None),
        ("served by http://127.0.0.1:8000/v1; mail me@example.org", None),
        ("giving up after 6 attempts: HTTP 503", None),
    ],
)
def test_redact_text(text, expected):
    assert redact_text(text) == (text if expected is None else expected)


def test_redaction_is_idempotent_and_hides_named_values():
    once = redact_text("http://u:pw@h/v1?token=t Bearer abcdefghij", secrets=["xyz-secret"])
    assert redact_text(once) == once
    assert redact_text("the server said xyz-secret", secrets=["xyz-secret"]) == f"the server said {R}"


def test_secret_names():
    for name in ("api_key", "API-KEY", "apikey", "x-api-key", "token", "access_token", "password", "client_secret", "Authorization", "sig"):
        assert is_secret_name(name), name
    for name in ("api_key_env", "api_key_file", "password_env", "password_file", "max_tokens", "n_tokens", "tokenizer", "cache_key", "path"):
        assert not is_secret_name(name), name


def test_url_secrets():
    assert url_secrets("http://u:p%40ss@h/v1?api-key=k1&api-version=2") == ["p@ss", "k1"]
    assert url_secrets("http://h/v1") == []


def test_redact_value_walks_mappings_and_lists():
    value = {"model": {"api_key": "sk-1", "api_base": "http://u:pw@h/v1"}, "list": ["password=x", 3], "n": 2, "flag": True}
    assert redact_value(value) == {
        "model": {"api_key": R, "api_base": f"http://u:{R}@h/v1"},
        "list": [f"password={R}", 3],
        "n": 2,
        "flag": True,
    }


def test_the_stored_configuration_holds_no_credential_wherever_it_was_written():
    settings = load_settings(
        None,
        [
            "model.backend=openai",
            "model.api_base=http://team:URLSECRET1@127.0.0.1:9/v1?api-key=QUERYSECRET2",
            "model.api_key=KEYSECRET3",
            "store.backend=postgres",
            "store.dsn=postgresql://gov:DSNSECRET4@db.example:5432/results",
        ],
    )
    text = json.dumps(settings.redacted())
    for secret in ("URLSECRET1", "QUERYSECRET2", "KEYSECRET3", "DSNSECRET4"):
        assert secret not in text
    assert json.dumps(settings.resume_identity()).count(R) >= 3
    config = settings.redacted()
    assert config["model"]["api_base"] == f"http://team:{R}@127.0.0.1:9/v1?api-key={R}"
    assert config["model"]["api_key_env"] == "OPENAI_API_KEY"


def test_no_setting_is_taken_for_a_secret_by_its_name_alone():
    """Every option that is redacted by name is one that holds a credential (no false positives)."""
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings import Settings

    names = set()
    for section in ("judge", "store", "data", "run"):
        names |= set(Settings.model_fields[section].annotation.model_fields)
    for group in (registry().backends, registry().benchmarks):
        for descriptor in group.all():
            if hasattr(descriptor, "options_model"):
                names |= set(descriptor.options_model().model_fields)
    assert {name for name in names if is_secret_name(name)} <= {"api_key", "password"}


def test_the_log_processor_redacts_every_value(capsys):
    configure_logging("json")
    try:
        structlog.get_logger("t").warning(
            "connecting to http://u:LOGSECRET@h/v1",
            api_key="sk-log",
            url="https://h/v1?token=TOK",
            error=ValueError("password=PW1"),
            n=3,
        )
    finally:
        structlog.reset_defaults()
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["event"] == f"connecting to http://u:{R}@h/v1"
    assert line["api_key"] == R and line["url"] == f"https://h/v1?token={R}" and line["error"] == f"password={R}"
    assert line["n"] == 3


def test_the_log_processor_alone():
    out = redact_secrets(None, "info", {"event": "x", "dsn": "postgresql://a:b@c/d", "exc_info": True})
    assert out == {"event": "x", "dsn": f"postgresql://a:{R}@c/d", "exc_info": True}


def test_console_logs_are_redacted_too():
    buffer = io.StringIO()
    configure_logging("console")
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=buffer))
    try:
        structlog.get_logger("t").info("api_base=http://u:CONSOLESECRET@h/v1")
    finally:
        structlog.reset_defaults()
    assert "CONSOLESECRET" not in buffer.getvalue() and R in buffer.getvalue()



def test_a_dsn_password_is_redacted_in_every_form_and_found_to_scrub():
    from culturebias.domain.redaction import REDACTED, dsn_secrets, redact_dsn

    assert redact_dsn("postgresql://me:s3cret@db:5432/x?password=two") == f"postgresql://me:{REDACTED}@db:5432/x?password={REDACTED}"
    assert redact_dsn("host=db password='s p' user=me") == f"host=db password={REDACTED} user=me"
    assert set(dsn_secrets("postgresql://me:s3cret@db/x?password=two")) == {"s3cret", "two"}
