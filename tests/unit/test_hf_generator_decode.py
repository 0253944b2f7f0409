"""HFGenerator._decode: a reply cut at max_new_tokens inside a multi-byte character loses the half character."""

from __future__ import annotations

from culturebias.adapters.hf.generator import HFGenerator


class BytesTokenizer:
    """Each token is one UTF-8 byte, decoded as a byte-level BPE tokenizer decodes: bad bytes become U+FFFD."""

    def decode(self, tokens: list[int], skip_special_tokens: bool = True) -> str:
        return bytes(t for t in tokens if t < 256).decode("utf-8", errors="replace")


def generator() -> HFGenerator:
    made = object.__new__(HFGenerator)
    made._tokenizer = BytesTokenizer()
    made._eos_ids = {999}
    return made


def test_a_reply_cut_inside_a_chinese_character_drops_the_half_character_only():
    whole = list("说明：来自非一线城市".encode())
    assert generator()._decode(whole[:-1], ()) == "说明：来自非一线城"  # the cut 市 was U+FFFD
    assert generator()._decode(whole, ()) == "说明：来自非一线城市"
    assert generator()._decode([*whole, 999, 65], ()) == "说明：来自非一线城市"  # cut at the end-of-sequence token
    assert generator()._decode(list("A\ufffd B".encode()), ()) == "A\ufffd B"  # one inside the reply stays
