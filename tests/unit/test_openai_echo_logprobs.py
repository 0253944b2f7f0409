"""Boundary placement from echo-logprobs replies (text_offset against len(context)), hand-built replies."""

from __future__ import annotations

import math

import pytest

from culturebias.adapters.openai.client import InvalidReply, MalformedReply
from culturebias.adapters.openai.echo_logprobs import (
    LogprobsCutShort,
    NoPromptLogprobs,
    OffsetMismatch,
    check_echo,
    continuation_start,
    prompt_tokens,
    score_tokens,
)


def reply(tokens, logprobs, offsets, top=None, prompt_tokens_used=None):
    block = {"tokens": tokens, "token_logprobs": logprobs, "text_offset": offsets}
    if top is not None:
        block["top_logprobs"] = top
    out = {"choices": [{"text": "".join(tokens), "logprobs": block}]}
    if prompt_tokens_used is not None:
        out["usage"] = {"prompt_tokens": prompt_tokens_used, "completion_tokens": len(tokens) - prompt_tokens_used}
    return out


def score(context, continuation, r):
    tokens = prompt_tokens(r, context + continuation)
    return score_tokens(tokens, continuation_start(tokens, len(context)))


def test_tokens_after_the_context_are_summed():
    # "ab|cd": tokens a, b, c, d; the continuation is c, d.
    r = reply(["a", "b", "c", "d"], [None, -1.0, -2.0, -0.5], [0, 1, 2, 3])
    result = score("ab", "cd", r)
    assert result.logprob == pytest.approx(-2.5)
    assert result.n_tokens == 2


def test_a_token_straddling_the_boundary_belongs_to_the_continuation():
    # "ab|c": token "bc" spans the boundary at 2.
    r = reply(["a", "bc"], [None, -3.0], [0, 1])
    result = score("ab", "c", r)
    assert (result.logprob, result.n_tokens) == (-3.0, 1)


def test_generated_tokens_are_dropped_using_usage():
    # max_tokens=1 appends a generated token "x" after the prompt "abc".
    r = reply(["a", "bc", "x"], [None, -1.5, -9.0], [0, 1, 3], prompt_tokens_used=2)
    result = score("a", "bc", r)
    assert (result.logprob, result.n_tokens) == (-1.5, 1)


def test_empty_context_scores_tokens_two_to_n():
    r = reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2])
    result = score("", "abc", r)
    assert (result.logprob, result.n_tokens) == (-3.0, 2)


def test_a_server_added_bos_counted_in_the_offsets_is_undone():
    # vLLM counts "<s>" (3 characters) before the prompt; the prompt "ab|c" is unchanged.
    r = reply(["<s>", "a", "b", "c", "!"], [None, -0.5, -1.0, -2.0, -7.0], [0, 3, 4, 5, 6], prompt_tokens_used=4)
    result = score("ab", "c", r)
    assert (result.logprob, result.n_tokens) == (-2.0, 1)
    # with an empty context BOS is context and every prompt token is scored given it
    empty = score("", "abc", r)
    assert (empty.logprob, empty.n_tokens) == (-3.5, 3)


def test_partial_byte_tokens_end_with_the_character_they_complete():
    # "台" is split in two byte tokens: "" (incomplete) then "台"; context "a", continuation "台".
    r = reply(["a", "", "台"], [None, -1.0, -2.0], [0, 1, 1])
    result = score("a", "台", r)
    assert (result.logprob, result.n_tokens) == (-3.0, 2)
    # and wholly inside the context they stay there
    r2 = reply(["", "台", "b"], [None, -1.0, -2.0], [0, 0, 1])
    assert score("台", "b", r2).n_tokens == 1


def test_offsets_that_do_not_add_up_to_the_prompt_raise():
    # tokens decoded one by one: two replacement characters for one Chinese character
    r = reply(["a", "\ufffd", "\ufffd"], [None, -1.0, -2.0], [0, 1, 2], prompt_tokens_used=3)
    with pytest.raises(OffsetMismatch, match="boundary cannot be placed"):
        prompt_tokens(r, "a台")


def test_greedy_needs_every_continuation_token_to_be_the_top_token():
    top_hit = [None, {"b": -1.0}, {"c": -2.0}]
    assert score("a", "bc", reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2], top=top_hit)).is_greedy
    top_miss = [None, {"b": -1.0}, {"z": -0.1}]
    assert not score("a", "bc", reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2], top=top_miss)).is_greedy
    # without top_logprobs greediness is unknown, reported False rather than guessed
    assert not score("a", "bc", reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2])).is_greedy


def test_a_missing_logprob_inside_the_continuation_is_malformed():
    r = reply(["a", "b", "c"], [None, None, -2.0], [0, 1, 2])
    with pytest.raises(MalformedReply, match="no log-probability"):
        score("a", "bc", r)


def test_missing_logprobs_block_is_malformed():
    with pytest.raises(MalformedReply, match="no prompt log-probabilities"):
        prompt_tokens({"choices": [{"text": "ab", "logprobs": None}]}, "ab")
    with pytest.raises(MalformedReply, match="differ in length"):
        prompt_tokens(reply(["a", "b"], [None], [0, 1]), "ab")


@pytest.mark.parametrize("bad", [-math.inf, math.inf, math.nan, "-1.0", True])
def test_a_log_probability_that_is_not_a_finite_number_is_invalid(bad):
    r = reply(["a", "b"], [None, bad], [0, 1])
    with pytest.raises(InvalidReply, match="prompt token 1 \\('b'\\)"):
        score("a", "b", r)


def test_a_null_log_probability_anywhere_after_the_first_token_is_invalid():
    # in the context too: one cached reply serves every split of the same text
    r = reply(["a", "b", "c"], [None, None, -2.0], [0, 1, 2])
    with pytest.raises(InvalidReply, match="prompt token 1 \\('b'\\) has no log-probability"):
        score("ab", "c", r)


def test_log_probabilities_cut_short_are_invalid_and_say_so():
    # the server stopped after "ab" of "abcd"
    r = reply(["a", "b"], [None, -1.0], [0, 1])
    with pytest.raises(LogprobsCutShort, match="end at character 2 of a prompt of 4: its log-probabilities are cut short"):
        score("ab", "cd", r)
    # with a server-added BOS the offsets of a cut reply can end where the prompt does; usage tells
    bos = reply(["<s>", "a"], [None, -1.0], [0, 3], prompt_tokens_used=5)
    with pytest.raises(LogprobsCutShort, match="log-probabilities for 2 tokens and counts 5 prompt tokens"):
        score("ab", "cd", bos)


def test_the_reply_check_validates_against_the_request_prompt():
    good = reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2])
    check_echo({"prompt": "abc"}, good)
    with pytest.raises(LogprobsCutShort):
        check_echo({"prompt": "abcdef"}, good)
    with pytest.raises(NoPromptLogprobs):
        check_echo({"prompt": "abc"}, {"choices": [{"text": "abc", "logprobs": None}]})


def test_unusable_top_logprobs_make_greediness_unknown_not_an_error():
    top = [None, {"b": "x"}, {"c": math.nan}]
    result = score("a", "bc", reply(["a", "b", "c"], [None, -1.0, -2.0], [0, 1, 2], top=top))
    assert (result.logprob, result.n_tokens, result.is_greedy) == (-3.0, 2, False)


# -- coverage of the whole prompt where texts and offsets do not place the boundary ----------------------

from culturebias.adapters.openai.echo_logprobs import (  # noqa: E402
    counted_prompt_tokens,
    echoed_prompt_tokens,
    spells_prompt,
)


@pytest.mark.parametrize(
    "texts, prompt, tolerant, spells",
    [
        (["台", "灣"], "台灣", False, True),
        (["<s>", "台", "灣"], "台灣", False, True),  # vLLM lists the BOS it adds
        (["台"], "台灣", True, False),  # cut short
        (["台", ""], "台灣", True, True),  # the last character split, its pieces dropped: cannot be told apart
        (["台", ""], "台灣", False, False),  # ... unless the server's texts are known to be exact
        (["", "灣好"], "台灣好", True, True),  # a held-back piece, then the rest without the character
        (["", "台灣"], " 台灣", True, True),  # the ASCII character held back with a split one, dropped with it
        (["\ufffd", "\ufffd\ufffd灣"], "台灣", True, True),  # pieces written as U+FFFD
        (["台", "灣", "好"], "台灣好人", True, False),  # no split piece at the end: a character is missing
        (["", "好"], "台灣好", True, False),  # one piece stands for one character, not two
        (["好", "人"], "台灣好人", True, False),  # nothing marks the start as split
    ],
)
def test_texts_spell_the_prompt_to_its_end(texts, prompt, tolerant, spells):
    assert spells_prompt(texts, prompt, tolerant) is spells


def echo_reply(texts, offsets, usage=None):
    block = {"tokens": texts, "token_logprobs": [None] + [-1.0] * (len(texts) - 1), "text_offset": offsets}
    out = {"choices": [{"text": "", "logprobs": block}]}
    if usage is not None:
        out["usage"] = {"prompt_tokens": usage, "completion_tokens": 1}
    return out


def test_an_echo_cut_short_with_consistent_lengths_is_caught():
    # the server computed "ab" of "abcd" and lists its generated token after it, usage agreeing
    cut = echo_reply(["a", "b", "c"], [0, 1, 2], usage=2)
    with pytest.raises(LogprobsCutShort, match="do not reach the end of the prompt"):
        echoed_prompt_tokens(cut, "abcd")
    assert echoed_prompt_tokens(echo_reply(["a", "b", "c", "d", "!"], [0, 1, 2, 3, 4], usage=4), "abcd").texts == list("abcd")


def test_offsets_counted_apart_from_the_texts_show_the_end():
    # llama-cpp-python: offsets are decoded-prefix lengths, texts drop the split character; the generated token
    # starts at the prompt's end
    whole = echo_reply(["x", "", "y", "!"], [0, 1, 1, 3], usage=4)
    assert len(echoed_prompt_tokens(whole, "x灣y", tolerant=False).texts) == 3
    cut = echo_reply(["x", "", "!"], [0, 1, 1], usage=3)
    with pytest.raises(LogprobsCutShort):
        echoed_prompt_tokens(cut, "x灣yz", tolerant=False)


def test_a_counted_prompt_needs_the_usage_the_probe_found():
    # cut by one token: the generated token fills the last place the tokenizer counts
    cut = echo_reply(["a", "b", "c", "X"], [0, 1, 2, 3], usage=3)
    with pytest.raises(LogprobsCutShort, match="counts 3 prompt tokens where the server's tokenizer counts 4"):
        counted_prompt_tokens(cut, "abcd", 4, 0, 0)
    whole = echo_reply(["a", "b", "c", "d", "X"], [0, 1, 2, 3, 4], usage=4)
    assert counted_prompt_tokens(whole, "abcd", 4, 0, 0).texts == list("abcd")
    with pytest.raises(LogprobsCutShort):  # without usage, the texts must show it
        counted_prompt_tokens(echo_reply(["a", "b", "c", "X"], [0, 1, 2, 3]), "abcd", 4, 0, None)
