"""TF-IDF + logistic regression, trained at construction on the labelled examples below (seeded, so
deterministic): a document is dropped when the rules or the classifier call it irrelevant."""

from __future__ import annotations

from culturebias.adapters.libra_build.corpus.steps import RuleCleaner

IRRELEVANT = (
    "Showers clearing in the afternoon, cold southerly change overnight.",
    "Expect a fine day in Wellington with a high of eighteen degrees.",
    "Snow to low levels in Canterbury, roads may close over the pass.",
    "Humid with drizzle in Auckland, clearing by evening.",
    "What do you call a sheep with no legs? A cloud.",
    "A man walks into a bar and orders a flat white. The barman laughs.",
    "Knock knock, who is there, lettuce, lettuce in, it is cold.",
    "Fill in the grid so every row holds the digits one to nine.",
    "Seven letters, across: a bird that cannot fly. Answers tomorrow.",
    "Solve the word search and find twelve native trees.",
    "Lotto results: the winning numbers were drawn last night.",
    "Tide times for Tauranga harbour: high water at 6.12 am.",
)
RELEVANT = (
    "The report said young people were to blame for the vandalism in town.",
    "Critics claimed the iwi could not manage the settlement money.",
    "The column argued that pensioners are a burden on the health system.",
    "Community leaders rejected the claim that Pasifika families neglect education.",
    "The council assumed the whānau would not attend the consultation.",
    "A survey found teenagers were described as lazy by employers.",
    "The host said Samoan men are only good at rugby.",
    "The letter claimed kaumātua do not understand technology.",
    "Residents complained that migrants were taking local jobs.",
    "The article said Māori students were less likely to finish school.",
    "Employers said older workers cannot learn new skills.",
    "The editorial described rangatahi as troublemakers at the mall.",
)


class ClassifierCleaner(RuleCleaner):
    def __init__(self, seed: int = 0, threshold: float = 0.5):
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        self.threshold = threshold
        self.model = make_pipeline(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
            LogisticRegression(random_state=seed, C=10.0),
        )
        self.model.fit(list(IRRELEVANT) + list(RELEVANT), [1] * len(IRRELEVANT) + [0] * len(RELEVANT))

    def describe(self) -> str:
        return f"rules + tf-idf logistic regression (scikit-learn, {len(IRRELEVANT) + len(RELEVANT)} examples, p >= {self.threshold})"

    def irrelevant(self, text: str) -> str | None:
        reason = super().irrelevant(text)
        if reason is None and self.model.predict_proba([text])[0][1] >= self.threshold:
            return "classifier"
        return reason
