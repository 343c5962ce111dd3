"""The knowledge graph layer: entities and relation versions, per agent, rebuilt from episodes and facts.

`mentions` reads what episodes and facts say about people, places, organisations and projects; `resolve` makes
one entity of the forms that name the same one (and records every merge); `versions` folds what was said into
relation versions, closing one a newer statement replaces; `splits` is the log of merges a user undid; `reads`
answers `Memory`'s graph reads; `quality` is the graph's Great Expectations suite. No Dagster.
"""
