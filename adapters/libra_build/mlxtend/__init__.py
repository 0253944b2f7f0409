"""FP-growth association rules (mlxtend), for seed expansion. Needs the ``build`` extra."""
