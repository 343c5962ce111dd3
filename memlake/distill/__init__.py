"""Distillation: one validated `DistilledSession` per conversation, from the core model or the offline rules.

Modules: `models` (the result and its parts, and the fact-candidate contract),
`prompt` (the prompt, splitting and merging), `client` (the core model through
instructor, with retries and a circuit breaker), `offline` (the rule-based
distiller), `dates` (relative dates resolved against when they were said),
`cache` (the result cache), `pending` (when a conversation is due) and `run`
(one distillation pass over some days of turns). No Dagster here.
"""
