"""Word pieces a home's chunking sends to the embedding model per turn, by chunk kind and role: load-independent.

The chunker runs over the home's turns with the home's settings (and any given as JSON over them); the rows the
index would embed are those not pooled (sessions, pooled windows and turns) and not text-only (a long turn's passages
past `chunk_long_turn_tokens`), each distinct text once (the index embeds a text once per sync); each is tokenized
by the packaged model's tokenizer truncated at its input limit (256, [CLS] and [SEP] included): what the model reads.
Padding is not counted (batches are sorted by length).

Usage: python scripts/embed_tokens.py HOME ['{"chunk_long_turn_tokens": 96}'] [agent,agent,...]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import polars as pl
from tokenizers import Tokenizer

from memlake.chunks import build_chunks, pooled_chunk_kinds, text_only_sha256
from memlake.embedding import default_model_path
from memlake.lake import Lake
from memlake.schemas import TURNS
from memlake.settings import load_settings
from memlake.vectors import _pooled_turns  # the index's own rule for which turns are pooled

MODEL_LIMIT = 256


def main(home: Path, overrides: dict[str, object], agents: list[str]) -> None:
    settings = load_settings(home, **overrides)
    turns = Lake(home / "lake").read(TURNS)
    if agents:
        turns = turns.filter(pl.col("agent_id").is_in(agents))
    counter = Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))
    counter.no_truncation()
    counter.no_padding()
    model_input = Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))
    model_input.enable_truncation(MODEL_LIMIT)
    model_input.no_padding()

    def count(texts: list[str]) -> list[int]:
        return [len(e.ids) for e in counter.encode_batch_fast(texts, add_special_tokens=False)]

    pooled = pooled_chunk_kinds(settings.chunking)
    chunks = build_chunks(turns, count, settings.chunking)
    pooled_turns = _pooled_turns(chunks, "conversation_id", pooled)
    seen: set[str] = set()
    embedded: list[tuple[str, str, str]] = []  # (kind, role, text)
    for i, row in enumerate(chunks.select("kind", "role", "embed_text", "text_sha256").iter_rows()):
        kind, role, text, sha = row
        pooled_row = i in pooled_turns or (kind in pooled and kind != "turn")
        if pooled_row or sha == text_only_sha256(text) or text in seen:
            continue
        seen.add(text)
        embedded.append((kind, role or "-", text))
    sent = [len(e.ids) for e in model_input.encode_batch_fast([text for _, _, text in embedded])]
    by_kind: defaultdict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (kind, role, _), tokens in zip(embedded, sent, strict=True):
        by_kind[(kind, role)][0] += 1
        by_kind[(kind, role)][1] += tokens
    n = turns.height
    print(f"{overrides or 'home settings'}: {n} turns, {len(embedded)} texts embedded ({len(embedded) / n:.2f}/turn), "
          f"{sum(sent):,} word pieces ({sum(sent) / n:.1f}/turn)")
    for (kind, role), (texts, tokens) in sorted(by_kind.items(), key=lambda item: -item[1][1]):
        print(f"  {kind:9s} {role:10s} {texts:6d} texts ({texts / n:.2f}/turn) {tokens:10,d} word pieces "
              f"({tokens / n:6.1f}/turn, {tokens / texts:5.1f}/text)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), json.loads(sys.argv[2]) if len(sys.argv) > 2 else {},
         [a for a in sys.argv[3].split(",") if a] if len(sys.argv) > 3 else [])
