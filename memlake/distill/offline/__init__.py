"""The offline distiller: rules over the user's own statements, no model, no network.

It fills the same `DistilledSession` as the core model, so the whole pipeline runs with no key. Precision over
recall: a rule fires only on a plain statement by the user (not a question, not quoted, not hypothetical or denied)
and leaves out what it cannot read with confidence. The slot readers that are data (`readers/table.py`: dependency
patterns over spaCy's parse, from `memlake.nlp`) read a clause wherever a sentence puts it; the rest are regular
expressions in `readers/`, one module per rule family. What each version changed is in docs/decisions.md
("the offline distiller's changelog").

Layout: `vocabulary` and `sentences` at the bottom, `people_places` (what the conversation names) and `reading`
(one sentence being read) above them, one module per rule family in `readers/` (named for what it reads), and
`distiller` on top, with `summary` and `dedupe`.
"""

from memlake.distill.offline.distiller import OFFLINE_DISTILLER_VERSION, OfflineDistiller, distill_offline

__all__ = ["OFFLINE_DISTILLER_VERSION", "OfflineDistiller", "distill_offline"]
