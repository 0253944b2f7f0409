"""What LIBRA's judge is told when its reply held no number (PROTOCOLS §0.5).

No digits: a small judge that parrots the reminder must not produce a "valid"
number (see ``culturebias.domain.replies.NumberQuestion``).
"""

from __future__ import annotations

JUDGE_REMINDER = "Reply with the single number asked for above and nothing else."
