"""FP-growth association rules (mlxtend), for seed expansion. Needs ``culturebias[build]``."""
