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
    "n": "n",
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
    "mcbe": "McBE",
    "kobbq": "KoBBQ",
    "cbbq": "CBBQ",
    "twbias": "TWBias",
    "libra": "LIBRA",
}
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+$")


def _part(part: str) -> str:
    if part in PHRASES:
        return PHRASES[part]
    for phrase, words in PHRASES.items():
        if "_" in phrase and phrase in part:
            before, _, after = part.partition(phrase)
            return " ".join(w for w in (_part(before.strip("_")), words, _part(after.strip("_"))) if w)
    return " ".join(WORDS.get(word, word) for word in part.split("_") if word)


def words(key: str) -> str:
    """A key of a summary block in words; text that is not a key (a category name, a file) stays as it is."""
    if (table := re.fullmatch(r"(table|figure|fig)(\d+)", key)) is not None:
        return f"{'Table' if table.group(1) == 'table' else 'Figure'} {table.group(2)}"
    if "_" not in key and "." not in key:
        return WORDS.get(key, PHRASES.get(key, key))
    if not _KEY.match(key) or re.search(r"\.(jsonl?|csv|tsv|xlsx|txt)$", key):
        return key
    return ": ".join(_part(p) for p in key.split("."))


def title_words(name: str) -> str:
    """A heading made of keys joined by spaces or colons (``table3 by label: acc_amb``)."""
    return re.sub(r"[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)*", lambda m: words(m.group(0)), name)
