"""Hybrid search over a LanceDB index: vector + full text, fused, boosted, diversified, expanded.

One module per step, in the order `Searcher.search` (searcher.py) calls them: plan.py,
candidates.py, fusion.py, rerank.py (boosts and MMR), finish.py; params.py holds the knobs
and the index specs. The rows the indexes hold are built in `memlake/index_rows.py`.

Steps, for one agent (always) and optional filters:
1. candidates: the nearest rows by vector and the best BM25 rows (one query
   each, run side by side, over the result kind and, for chunks, the window
   and session chunks too);
2. Reciprocal Rank Fusion: `1 / (rrf_k + rank)` summed over the lists, ranks
   counted within each kind, each term scaled by the hit's score relative to
   the best of its list (so a lone exact match is not outvoted by a crowd of
   weak ones). For chunks a turn's rank in a list is that of its best match,
   itself, one of its sentences (`sentence_keys`) or a question it replied to
   (`question_keys`; in the vector list a question's cosine similarity is
   scaled by `question_weight` first); it is then as relevant as
   its best view: its own fused score, or `window_weight` x the best window
   chunk it sits in; then it gets
   `neighbor_weight` x the best score of the turns just before and after it
   (the answer often sits in the reply to the turn that matches) and, if
   `session_weight` > 0, a lift from the session chunk's rank (none when the
   query names an identifier: `names_identifier`);
3. boosts, multiplied onto the fused score, each `1 + weight * part`: recency
   (half-life, measured from `as_of`), importance, access count, and a mention
   boost when the query names the row's speaker (chunks) or subject (facts);
4. MMR over the stored vectors (`mmr_lambda`; 1.0 = off);
5. window expansion: each hit gets its adjacent turns as `context`.

With no query vector (no model loadable, or the index was built by another
model) only the full-text list is used and every row says `mode = full_text`.

A long-lived reader (`Memory`) holds a snapshot of the agent's index rows
(`VectorStore.snapshot`): then the vector list is an exact scan in memory (an
in-memory IVF for an agent above ANN_MIN_ROWS), the BM25 list is the one
LanceDB query, and every other row is a lookup. Without one (an agent larger
than `search_snapshot_rows`, a one-off search) every step queries LanceDB; the
results are the same either way.
Pure domain code: no Dagster.
"""

from memlake.index_rows import EPISODE_INDEX_SCHEMA, FACT_INDEX_SCHEMA, episode_index_rows, fact_index_rows
from memlake.moments import parse_as_of
from memlake.search.candidates import FULL_TEXT, HYBRID, VECTOR_ONLY
from memlake.search.finish import empty_result, result_schema
from memlake.search.params import CHUNK_SPEC, EPISODE_SPEC, FACT_SPEC, SPECS, IndexSpec, SearchParams, turn_key
from memlake.search.plan import names_identifier
from memlake.search.rerank import Mentions, mentioned, mmr_order, recency
from memlake.search.searcher import Searcher, search_memory
from memlake.vectors import ANN_MIN_ROWS

__all__ = [
    "ANN_MIN_ROWS",
    "CHUNK_SPEC",
    "EPISODE_INDEX_SCHEMA",
    "EPISODE_SPEC",
    "FACT_INDEX_SCHEMA",
    "FACT_SPEC",
    "FULL_TEXT",
    "HYBRID",
    "SPECS",
    "VECTOR_ONLY",
    "IndexSpec",
    "Mentions",
    "SearchParams",
    "Searcher",
    "empty_result",
    "episode_index_rows",
    "fact_index_rows",
    "mentioned",
    "mmr_order",
    "names_identifier",
    "parse_as_of",
    "recency",
    "result_schema",
    "search_memory",
    "turn_key",
]
