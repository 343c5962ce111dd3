"""Working memory: typed facts with history and provenance.

- `fold`: the deterministic fold, in time order, of fact candidates, user
  overrides and the forget log into fact versions and edges;
- `candidates`: fact candidates from `episodes/episodes`, dated by the turns;
- `overrides`: the append-only overrides and forget logs under `<home>/inputs/`;
- `profile`: versioned profiles assembled from the active facts;
- `reads`: as-of and history reads, remember / reject / forget, merging log
  entries not yet folded;
- `search`: fact search over what reads see (a per-agent index while log
  entries are pending).

Pure domain code: no Dagster.
"""

from memlake.facts.fold import Candidate, FoldConfig, Folder, FoldResult, Forget, Override, fold

__all__ = ["Candidate", "FoldConfig", "FoldResult", "Folder", "Forget", "Override", "fold"]
