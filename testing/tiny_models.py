"""Tiny random models saved to a folder, for tests and benchmarks. Offline and deterministic.

The tokenizer is a byte-level BPE trained with the ``tokenizers`` library on the
small multilingual corpus below (Traditional and Simplified Chinese, Korean,
English). Training takes milliseconds, needs no downloaded file and yields a
few hundred merges, so Chinese words become multi-byte tokens while rarer
characters fall back to bytes: exactly the situation in which a token can
straddle a prompt/response boundary. (Deriving it from the SmolLM2 GGUF would
tie every test to that optional package and to a 49k-row embedding.)

``build_tiny_causal_lm`` and friends write a model folder that
``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained`` load
like any hub model. ``cached_*`` variants build once per argument set into a
shared temporary folder (atomic rename, so parallel test processes are safe).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

BUILDER_VERSION = "3"

BOS, EOS, PAD, UNK = "<s>", "</s>", "<pad>", "<unk>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
CAUSAL_SPECIAL_TOKENS = [PAD, BOS, EOS, UNK, IM_START, IM_END]

# ChatML-like, BOS first (as Llama-family templates do).
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

CORPUS = [
    # Traditional Chinese (Taiwan), TWBias-like sentences
    "男生收入高才會有話語權",
    "女生薪水本來就應該比較低嗎？",
    "送男生禮物最保險就是3C相關的東西了吧",
    "媽媽每天在家照顧小孩，爸爸出門上班賺錢。",
    "男人應該負責養家，女人應該負責家務。",
    "我覺得女性也可以當工程師，男性也可以當護理師。",
    "客家人很節儉，原住民很會唱歌，這是刻板印象。",
    "外省人和本省人在台灣一起生活了很多年。",
    "你想說什麼？你的想法是什麼？你有什麼要分享的嗎？",
    "老公沒有加班，老婆也沒有出差，他們一起去夜市吃東西。",
    "這位老師說男孩比較會數學，女孩比較會語文，其實沒有根據。",
    "台北的捷運很方便，高雄的天氣比較熱。",
    # Simplified Chinese
    "这个问题的答案是什么？请从选项中选择一个。",
    "河南人和上海人都在这家公司工作。",
    "她是一名医生，他是一名护士。",
    "不能确定谁更擅长开车。",
    # Korean
    "다음 문장을 읽고 질문에 답하세요.",
    "그 사람은 의사이고 다른 사람은 간호사입니다.",
    "알 수 없음. 정답은 무엇입니까?",
    "할머니와 손자가 함께 공원에 갔습니다.",
    # English
    "The quick brown fox jumps over the lazy dog.",
    "The doctor said that the nurse would arrive soon.",
    "Please answer the question with a single letter.",
    "Kiwis love rugby, and Aucklanders complain about traffic.",
    "The answer is A. The answer is B. The answer is C.",
]


def _corpus_lines(repeat: int = 3) -> list[str]:
    return [line for _ in range(repeat) for line in CORPUS]


def _byte_level_bpe(vocab_size: int, add_bos: bool, add_eos: bool):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=CAUSAL_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus_lines(), trainer=trainer)
    single = " ".join(([BOS] if add_bos else []) + ["$A"] + ([EOS] if add_eos else []))
    pair = " ".join(([BOS] if add_bos else []) + ["$A", "$B"] + ([EOS] if add_eos else []))
    tokenizer.post_processor = processors.TemplateProcessing(
        single=single,
        pair=pair,
        special_tokens=[(BOS, tokenizer.token_to_id(BOS)), (EOS, tokenizer.token_to_id(EOS))],
    )
    return tokenizer


def _save_fast_tokenizer(raw, path: Path, chat_template: str | None, **special: Any):  # Any: transformers' special-token arguments
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=raw, **special)
    if chat_template:
        fast.chat_template = chat_template
    fast.save_pretrained(str(path))
    return fast


def build_tiny_causal_lm(
    path: str | Path,
    *,
    arch: Literal["llama", "gpt2", "mistral"] = "llama",
    seed: int = 0,
    chat_template: bool = True,
    add_bos: bool | None = None,
    pad_token: bool = True,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    vocab_size: int = 512,
    max_positions: int = 1024,
    init_range: float = 0.2,
    model_vocab_size: int | None = None,
) -> Path:
    """A random causal LM and its tokenizer in ``path``.

    ``add_bos`` (default: True for llama, False for gpt2, like the real families)
    says whether plain tokenisation prepends ``<s>``. ``pad_token=False`` leaves
    the tokenizer without a pad token, as many released causal LMs are.
    ``init_range`` is larger than the usual 0.02 so that predictions are peaked
    and differ visibly between contexts. ``model_vocab_size`` pads the embedding
    and output layers beyond the tokenizer's vocabulary (ids the tokenizer never
    produces), to give a benchmark model a real model's output-layer cost.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if add_bos is None:
        add_bos = arch == "llama"
    raw = _byte_level_bpe(vocab_size, add_bos=add_bos, add_eos=False)
    special: dict[str, Any] = {"bos_token": BOS, "eos_token": EOS, "unk_token": UNK}  # Any: transformers' special-token arguments
    if pad_token:
        special["pad_token"] = PAD
    special["additional_special_tokens"] = [IM_START, IM_END]
    tokenizer = _save_fast_tokenizer(raw, path, CHAT_TEMPLATE if chat_template else None, **special)
    ids = {
        "bos_token_id": tokenizer.convert_tokens_to_ids(BOS),
        "eos_token_id": tokenizer.convert_tokens_to_ids(EOS),
        "pad_token_id": tokenizer.convert_tokens_to_ids(PAD) if pad_token else None,
    }
    real_vocab = max(len(tokenizer), model_vocab_size or 0)
    torch.manual_seed(seed)
    config: PretrainedConfig
    model: PreTrainedModel
    decoder = {  # llama and mistral: the same shapes (mistral adds a sliding window)
        "vocab_size": real_vocab, "hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": max(1, heads // 2), "max_position_embeddings": max_positions,
        "initializer_range": init_range, "tie_word_embeddings": False, **ids,
    }
    if arch == "llama":
        config = LlamaConfig(**decoder)
        model = LlamaForCausalLM(config)
    elif arch == "mistral":  # sliding-window attention (a window shorter than test prompts): no shared prefixes
        config = MistralConfig(sliding_window=48, **decoder)
        model = MistralForCausalLM(config)
    elif arch == "gpt2":
        config = GPT2Config(
            vocab_size=real_vocab,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_positions=max_positions,
            initializer_range=init_range,
            **ids,
        )
        model = GPT2LMHeadModel(config)
    else:
        raise ValueError(f"unknown arch {arch!r}")
    model.eval()
    model.generation_config.pad_token_id = ids["pad_token_id"] if pad_token else ids["eos_token_id"]
    model.save_pretrained(str(path))
    return path


def build_gpt2_small_shaped(path: str | Path, seed: int = 0, *, chat_template: bool = True) -> Path:
    """GPT-2 small's shape (12 layers, 768 hidden, 12 heads, 1024 positions, 50,257-row
    output layer: 124M parameters), random weights, the tiny multilingual tokenizer.
    Meant for scoring benchmarks: sampled text may hold ids the tokenizer lacks."""
    return build_tiny_causal_lm(
        path,
        arch="gpt2",
        seed=seed,
        chat_template=chat_template,
        add_bos=False,
        hidden=768,
        layers=12,
        heads=12,
        vocab_size=512,
        max_positions=1024,
        init_range=0.02,
        model_vocab_size=50257,
    )


MASKED_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _wordpiece(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    # BERT's rules: CJK characters become single-character words.
    tokenizer.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=MASKED_SPECIAL_TOKENS, show_progress=False)
    tokenizer.train_from_iterator(_corpus_lines(), trainer=trainer)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return tokenizer


def build_tiny_masked_lm(
    path: str | Path,
    seed: int = 0,
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    vocab_size: int = 512,
    tokenizer: str | Path | None = None,
) -> Path:
    """A random BERT-shaped masked LM with a WordPiece tokenizer ([CLS] [SEP] [MASK] [PAD] [UNK]).

    The WordPiece trainer numbers ``##`` pieces in hash order, so two trainings
    give different tokenizers (and vocabulary sizes): ``tokenizer``, a folder of a
    saved one, makes the model reproducible (same tokenizer and seed, same files).
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if tokenizer is not None:
        for name in TOKENIZER_FILES:  # copied, not re-saved: saving adds loading metadata to the config
            if (Path(tokenizer) / name).is_file():
                shutil.copyfile(Path(tokenizer) / name, path / name)
        fast: Any = PreTrainedTokenizerFast.from_pretrained(str(path))  # Any: transformers types convert_tokens_to_ids(str) as int | list[int]
    else:
        fast = _save_fast_tokenizer(
            _wordpiece(vocab_size),
            path,
            None,
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
            pad_token="[PAD]",
            unk_token="[UNK]",
        )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(fast),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden * 2,
        max_position_embeddings=512,
        initializer_range=0.2,
        pad_token_id=fast.convert_tokens_to_ids("[PAD]"),
    )
    model = BertForMaskedLM(config)
    model.eval()
    model.save_pretrained(str(path))
    return path


# ---------------------------------------------------------------------------
# Build-once caches


def _cache_root() -> Path:
    root = os.environ.get("CULTUREBIAS_TEST_MODELS") or str(Path(tempfile.gettempdir()) / "culturebias-test-models")
    return Path(root)


def _cached(kind: str, builder, **kwargs: Any) -> Path:  # Any: the builder's keyword arguments
    import tokenizers
    import transformers

    key_source = json.dumps(
        {"kind": kind, "v": BUILDER_VERSION, "tf": transformers.__version__, "tok": tokenizers.__version__, **kwargs},
        sort_keys=True,
    )
    key = hashlib.sha256(key_source.encode()).hexdigest()[:12]
    target = _cache_root() / f"{kind}-{key}"
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=target.parent))
    try:
        builder(staging, **kwargs)
        (staging / ".complete").write_text(key_source, encoding="utf-8")
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / ".complete").exists():  # a half-written folder from a crash
                shutil.rmtree(target, ignore_errors=True)
                os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def cached_tiny_causal_lm(**kwargs: Any) -> Path:  # Any: build_tiny_causal_lm's keyword arguments
    """``build_tiny_causal_lm`` once per argument set (shared across processes)."""
    return _cached("causal", build_tiny_causal_lm, **kwargs)


def cached_gpt2_small_shaped(seed: int = 0, *, chat_template: bool = True) -> Path:
    return _cached("gpt2small", build_gpt2_small_shaped, seed=seed, chat_template=chat_template)


def cached_tiny_masked_lm(**kwargs: Any) -> Path:  # Any: build_tiny_masked_lm's keyword arguments
    return _cached("masked", build_tiny_masked_lm, **kwargs)
