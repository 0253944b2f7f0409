"""Summary keys as words a reader knows: ``diff_bias_amb.tukey_hsd`` → "diff-bias ambiguous: Tukey HSD".

The pages show keys of the summary's blocks as headings and column names; each part of a key is
read through this vocabulary of the abbreviations the summaries use, so no internal key name
reaches the page. A part the vocabulary does not know is shown with its underscores as spaces.
"""

from __future__ import annotations

import re

# Whole keys (or parts between dots) first, then the words inside them.
PHRASES = {
    "diff_bias": "diff-bias",
    "tukey_hsd": "Tukey HSD",
    "std_ddof": "standard deviation (degrees of freedom)",
    "unknown_wording": "wording of the 'unknown' option",
    "p_value": "p-value",
    "ci_low": "95% interval low",
    "ci_high": "95% interval high",
    "icat": "iCAT",
    "eicat": "EiCAT",
    "icat_local": "iCAT (local triplets)",
    "s_amb": "bias score, ambiguous",
    "s_dis": "bias score, disambiguated",
    "s_total": "overall bias score",
    "S_amb": "bias score, ambiguous",
    "S_dis": "bias score, disambiguated",
    "S_total": "overall bias score",
    "n": "n",
    "n_total": "n (total)",
    "n_ooc": "n out-of-choice",
    "ooc_ratio": "out-of-choice ratio",
    "within_bound": "within its bound",
    "ss": "SS",
    "lms": "LMS",
    "jsd": "JSD",
    "ooc": "out-of-choice",
}
WORDS = {
    "acc": "accuracy",
    "amb": "ambiguous",
    "dis": "disambiguated",
    "std": "standard deviation",
    "ddof": "degrees-of-freedom correction",
    "statistics": "statistical tests",
    "answering": "answer mode",
    "anova": "ANOVA",
    "tukey": "Tukey",
    "hsd": "HSD",
    "ppl": "perplexity",
    "ci": "interval",
    "bs": "BS",
    "ba": "BA",
    "sc": "SC",
    "bei": "BEI",
    "cot": "chain of thought",
    "pct": "%",
    "num": "number of",
    "fp": "fingerprint",
}
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_SIMPLE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_FILE = re.compile(r"\.(jsonl?|csv|tsv|xlsx|txt|parquet|png)$")


def _part(part: str) -> str:
    if part in PHRASES:
        return PHRASES[part]
    for phrase, replaced in PHRASES.items():
        if "_" in phrase and phrase in part:
            before, _, after = part.partition(phrase)
            return " ".join(w for w in (_part(before.strip("_")), replaced, _part(after.strip("_"))) if w)
    return " ".join(WORDS.get(word, _numbered(word)) for word in part.split("_") if word)


def _numbered(word: str) -> str:
    found = re.fullmatch(r"(table|figure|fig)(\d+)", word)
    return word if found is None else f"{'Table' if found.group(1) == 'table' else 'Figure'} {found.group(2)}"


def prose(value: str) -> str:
    """A text with every snake_case key in it read as words (``1 - acc_amb`` → ``1 - accuracy ambiguous``)."""
    return _SNAKE.sub(lambda m: _part(m.group(0)), value)


def words(key: str) -> str:
    """A key of a summary block (a heading, a column) in words; a file name or a sentence keeps its shape."""
    if _FILE.search(key) or " " in key:
        return prose(key)
    parts = key.split(".")
    if len(parts) > 1 and all(re.fullmatch(r"[^\W_][\w]*", p) for p in parts[1:]) and any(_SIMPLE.fullmatch(p) for p in parts):
        return ": ".join(_part(p) if _SIMPLE.fullmatch(p) else p for p in parts)
    return _part(key) if _SIMPLE.fullmatch(key) else prose(key)


def title_words(name: str) -> str:
    """A heading made of keys joined by spaces, slashes or colons (``table3 by label: acc_amb``)."""
    return re.sub(r"[^\s:/]+", lambda m: words(m.group(0)), name)
