"""Working memory: typed facts with history and provenance.

- `fold`: the deterministic fold, in time order, of fact candidates, user
  overrides and the forget log into fact versions and edges;
- `candidates`: fact candidates from `episodes/episodes`, dated by the turns;
- `overrides`: the append-only overrides and forget logs under `<home>/inputs/`;
- `profile`: versioned profiles assembled from the active facts;
- `reads`: as-of and history reads, merging overrides not yet folded.

Pure domain code: no Dagster.
"""

from memlake.facts.fold import Candidate, FoldConfig, Folder, FoldResult, Forget, Override, fold

__all__ = ["Candidate", "FoldConfig", "FoldResult", "Folder", "Forget", "Override", "fold"]
