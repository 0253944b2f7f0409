"""Association rules ``antecedent => consequent`` over sentences, by mlxtend's FP-growth.

Each sentence is one transaction: the set of its terms. Only pairs are mined
(``max_len=2``): a rule from a seed to one term is all the expansion needs.
"""

from __future__ import annotations

from collections import Counter
from typing import Collection, Sequence

import numpy as np

from culturebias.domain.libra_build.expansion import AssociationRule


def mine_pair_rules(
    transactions: Sequence[Collection[str]],
    antecedents: Collection[str],
    *,
    min_support: float,
    min_confidence: float,
) -> list[AssociationRule]:
    """Rules ``a => c`` with ``a`` in ``antecedents``, support of {a, c} >= ``min_support`` (a share of the
    transactions) and confidence >= ``min_confidence``; sorted by antecedent, then consequent."""
    import pandas as pd
    from mlxtend.frequent_patterns import association_rules, fpgrowth

    n = len(transactions)
    wanted = set(antecedents)
    counts = Counter(item for t in transactions for item in t)
    # An item rarer than the support threshold is in no frequent pair: leave it out of the matrix.
    items = sorted(item for item, c in counts.items() if c / n >= min_support) if n else []
    if not wanted.intersection(items) or len(items) < 2:
        return []
    column = {item: j for j, item in enumerate(items)}
    matrix = np.zeros((n, len(items)), dtype=bool)
    for i, transaction in enumerate(transactions):
        for item in transaction:
            j = column.get(item)
            if j is not None:
                matrix[i, j] = True
    frame = pd.DataFrame(matrix, columns=items)
    frequent = fpgrowth(frame, min_support=min_support, use_colnames=True, max_len=2)
    if frequent.empty or not (frequent["itemsets"].map(len) == 2).any():
        return []
    table = association_rules(
        frequent, num_itemsets=n, metric="confidence", min_threshold=min_confidence, return_metrics=["support", "confidence", "lift"]
    )
    rules = []
    for antecedent, consequent, support, confidence, lift in zip(
        table["antecedents"], table["consequents"], table["support"], table["confidence"], table["lift"]
    ):
        (a,) = tuple(antecedent)
        (c,) = tuple(consequent)
        if a in wanted:
            rules.append(AssociationRule(a, c, float(support), float(confidence), float(lift)))
    return sorted(rules, key=lambda r: (r.antecedent, r.consequent))
