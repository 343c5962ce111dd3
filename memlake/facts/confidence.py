"""A fact's confidence: how far what was read can be trusted, from how it was read; and which facts are shown.

One formula, worked out here only (docs/decisions.md, 2026-11-28 "confidence and candidates"):

- **prior** of one reading (`reading_prior`): on the model path, the confidence the model returned; from the
  offline distiller, by the family of rule that read it: a slot reader (a typed value: home city, employer,
  partner, ...) `SLOT_PRIOR`, a plain first-person sentence `SENTENCE_PRIOR`, a sentence about someone else
  `OTHERS_PRIOR`, a guess (tag `inferred`) `INFERRED_PRIOR`. Said in a chat with an assistant, the prior is
  multiplied by `ASSISTANT_CHAT_FACTOR`: there the user thinks aloud, asks about plans that are not theirs and
  pastes other people's text, so what reads as a fact about them is less often one (a higher bar).
- **repetition** (`fact_confidence`): each conversation that said it again is one more independent reading,
  combined as a noisy-or of the best prior: 1 - (1 - prior) ** conversations. Said once in a conversation or ten
  times in it counts once.
- **the user's word**: a fact the user remembered, corrected or confirmed (an override) is shown whatever its
  confidence.

A fact is **shown** (the profile, the facts of the context block, `recall`, `Memory.facts()` now) when its
confidence is at least the `shown_confidence` setting, or the user's word backs it; the others are candidates:
kept, in history, listed by `memlake facts --candidates`, and shown once said again or confirmed.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from memlake.distill.models import INFERRED

# Priors of the offline distiller's rule families, and the assistant-chat factor: set by family, not fitted (on
# LoCoMo 0-4 the families do not differ in matched share); the `shown_confidence` threshold over them was swept
# on the development data (LoCoMo 0-4, RealMem 0-4; docs/decisions.md), never on the held-out halves.
SLOT_PRIOR = 0.9
SENTENCE_PRIOR = 0.7
OTHERS_PRIOR = 0.6
INFERRED_PRIOR = 0.5
ASSISTANT_CHAT_FACTOR = 0.8
OFFLINE_DISTILLER = "memlake-offline"  # the prefix of every offline distiller version
USER_SUBJECTS = frozenset({"", "user", "the user"})


def reading_prior(
    returned: float | None, *, distiller: str | None, slot: str | None, subject: str | None,
    tags: Iterable[str] = (), assistant_chat: bool = False,
) -> float:
    """The confidence of one reading of a fact, before repetition: see the module docstring."""
    if distiller and distiller.startswith(OFFLINE_DISTILLER):
        if INFERRED in set(tags):
            prior = INFERRED_PRIOR
        elif slot:
            prior = SLOT_PRIOR
        elif (subject or "").strip().lower() in USER_SUBJECTS:
            prior = SENTENCE_PRIOR
        else:
            prior = OTHERS_PRIOR
    else:  # the model path: what the model returned (its own default when it said nothing)
        prior = 0.8 if returned is None or returned != returned else min(1.0, max(0.0, float(returned)))
    return prior * ASSISTANT_CHAT_FACTOR if assistant_chat else prior


def fact_confidence(prior: float, conversations: int) -> float:
    """A fact's confidence from its best reading's prior and the number of conversations that said it."""
    return round(1.0 - (1.0 - prior) ** max(1, conversations), 6)


def shown(threshold: float) -> pl.Expr:
    """Rows of `facts/facts` shown to the agent: confident enough, or backed by the user's word (an override)."""
    backed = (pl.col("source_interface") == "override") | (pl.col("override_ids").list.len() > 0)
    return (pl.col("confidence") >= threshold) | backed.fill_null(False)
