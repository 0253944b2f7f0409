"""``model.chat_template``: keywords, the built-in plain template, Jinja files, typed errors, the identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.adapters.hf.chat_templates import BUILTIN, ChatTemplateError, install, resolve, validate_setting
from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.errors import DataError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def plain_tokenizer_path() -> Path:
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    return cached_tiny_causal_lm(chat_template=False)


@pytest.fixture
def tokenizer(plain_tokenizer_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(plain_tokenizer_path))


def render(tokenizer, content: str) -> str:
    return tokenizer.apply_chat_template([{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True)


def test_the_builtin_renders_the_authors_plain_user_assistant_form(tokenizer):
    assert not tokenizer.chat_template
    template = install(tokenizer, "twbias-plain")
    assert template is not None and template.name == "twbias-plain"
    assert tokenizer.chat_template == BUILTIN["twbias-plain"]
    # As the authors' released templates write it (prompt_template_speaking/twllm_2.json), after BOS.
    assert render(tokenizer, "你想說什麼？") == "<s>USER: 你想說什麼？ ASSISTANT:"
    assert render(tokenizer, "") == "<s>USER: ASSISTANT:"


def test_the_inst_builtin_renders_table_10s_inst_form(tokenizer):
    template = install(tokenizer, "twbias-inst")
    assert template is not None and template.name == "twbias-inst"
    assert tokenizer.chat_template == BUILTIN["twbias-inst"]
    # As the authors' released templates write it (prompt_template_speaking/llama2.json), after BOS.
    assert render(tokenizer, "你想說什麼？") == "<s>[INST] 你想說什麼？ [/INST]"
    assert render(tokenizer, "") == "<s>[INST] [/INST]"
    # Table 10: "[INST] {user prompt} [/INST] {bias sentence}": the response follows the prompt.
    messages = [{"role": "user", "content": "說點什麼吧！"}, {"role": "assistant", "content": "句子"}]
    whole = tokenizer.apply_chat_template(messages, tokenize=False)
    assert whole.startswith(render(tokenizer, "說點什麼吧！") + " 句子")


def test_auto_and_none_leave_the_tokenizer_alone(tokenizer):
    assert install(tokenizer, "auto") is None and install(tokenizer, "none") is None
    assert not tokenizer.chat_template


def test_a_jinja_file_is_installed(tokenizer, tmp_path):
    file = tmp_path / "mine.jinja"
    file.write_text("{% for m in messages %}Q: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}A:{% endif %}", encoding="utf-8")
    template = install(tokenizer, validate_setting(str(file)))
    assert template is not None and template.name == str(file) and len(template.fingerprint) == 16
    assert render(tokenizer, "你好") == "Q: 你好\nA:"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("{% for m in messages %}\n{{ m['content'] }\n{% endfor %}", 2, "TemplateSyntaxError"),
        ("fine\n{% if true %}\n{{ raise_exception('only system turns') }}{% endif %}", 3, "only system turns"),
        ("a\nb\n{{ messages[0]['content'] + 1 }}", 3, "TypeError"),
        ("{% for m in messages %}{{ m['content'] }}", 1, "TemplateSyntaxError"),  # unclosed block
    ],
)
def test_a_file_that_does_not_render_names_the_file_the_line_and_jinjas_error(tokenizer, tmp_path, text, line, words):
    file = tmp_path / "broken.jinja"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ChatTemplateError) as error:
        install(tokenizer, str(file))
    assert isinstance(error.value, DataError)  # exit code 3, like any bad input file
    assert error.value.file == str(file) and error.value.field == "model.chat_template"
    assert error.value.row == line or (line == 1 and error.value.row is not None)
    message = str(error.value)
    assert str(file) in message and f"template line {error.value.row}" in message and words in message
    assert not tokenizer.chat_template  # nothing installed


def test_an_empty_file_is_refused(tmp_path):
    file = tmp_path / "empty.jinja"
    file.write_text("  \n", encoding="utf-8")
    with pytest.raises(ChatTemplateError, match="empty"):
        resolve(str(file))


def test_the_option_accepts_keywords_builtins_and_existing_files_only(tmp_path):
    assert HFOptions().chat_template == "auto"
    assert HFOptions(chat_template="none").chat_template == "none"
    assert HFOptions(chat_template="twbias-plain").chat_template == "twbias-plain"
    file = tmp_path / "t.jinja"
    file.write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    assert HFOptions(chat_template=str(file)).chat_template == str(file)
    with pytest.raises(ValueError, match="twbias-plain"):
        HFOptions(chat_template=str(tmp_path / "missing.jinja"))


def test_onnx_keeps_one_export_and_takes_the_template_into_its_identity(plain_tokenizer_path, tmp_path):
    pytest.importorskip("onnxruntime")
    from culturebias.adapters.onnx.backend import load_onnx_model
    from culturebias.adapters.onnx.options import OnnxOptions

    own = load_onnx_model(OnnxOptions(path=str(plain_tokenizer_path)), tmp_path, "causal")
    plain = load_onnx_model(OnnxOptions(path=str(plain_tokenizer_path), chat_template="twbias-plain"), tmp_path, "causal")
    assert plain.tokenizer.chat_template == BUILTIN["twbias-plain"] and not own.tokenizer.chat_template
    assert own.identity.tokenizer != plain.identity.tokenizer and own.identity.cache_key() != plain.identity.cache_key()
    exports = [p for p in tmp_path.rglob("causal-*") if p.is_dir()]
    assert len(exports) == 1  # a template is no part of the exported graph: one export serves both


def test_hf_takes_the_template_into_its_identity_and_renders_it(plain_tokenizer_path, tmp_path):
    from culturebias.adapters.hf.backend import create_backend

    own = create_backend(HFOptions(path=str(plain_tokenizer_path)), tmp_path)
    plain = create_backend(HFOptions(path=str(plain_tokenizer_path), chat_template="twbias-plain"), tmp_path)
    assert not own.templater().has_chat_template and plain.templater().has_chat_template
    assert own.loaded().identity.cache_key() != plain.loaded().identity.cache_key()
    from culturebias.domain.requests import ChatMessage

    assert plain.templater().render([ChatMessage("user", "說點什麼吧！")]) == "<s>USER: 說點什麼吧！ ASSISTANT:"
