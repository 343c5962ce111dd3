"""The embedding model adapted to a home's own conversations: no labels, no LLM, offline.

A general sentence model learns that two texts say the same thing. Memory search asks
it something else: a question ("What did Caroline research?") against the turn that
answers it ("Caroline: Researching adoption agencies…"). Chats already hold such pairs:
a question and the reply that follows it. `question_reply_pairs` takes them from a
home's turns, with "you" and "your" in the question turned into the replier's name (a
memory query names people; a chat question speaks to them), and `adapt` fine-tunes a
copy of the model on them with in-batch negatives (the MultipleNegativesRanking loss,
written out here: sentence-transformers' trainer needs `datasets` and `accelerate`,
which nothing else here uses). Each batch holds one agent's pairs, so a question
learns to beat the other replies of the same history, as a search (always within
one agent) asks it to.

The adapted model is a folder of its own, named by a hash of the base model, the
pairs and the training settings, and never overwritten: the index keys its cached
vectors by the embedder's name, so new weights must come with a new name.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import polars as pl

from memlake.chunks import questions_answered, turn_embed_text
from memlake.embedding import DEFAULT_MODEL_NAME, model_ref_and_name
from memlake.errors import BadRequest
from memlake.lake import Lake
from memlake.schemas import TURNS

MANIFEST = "memlake_adapted.json"


@dataclass(frozen=True)
class AdaptParams:
    epochs: int = 2
    batch_size: int = 32
    learning_rate: float = 2e-5
    scale: float = 20.0  # cosine similarities x scale are the logits of the in-batch softmax
    seed: int = 0


class QuestionReply(NamedTuple):
    agent_id: str
    question: str
    reply: str


@dataclass(frozen=True)
class Adapted:
    path: Path
    pairs: int
    trained: bool  # False: a model with this name was there already
    seconds: float


def question_reply_pairs(turns: pl.DataFrame) -> list[QuestionReply]:
    """(question, reply) pairs from `turns` (the TURNS schema): each question a turn put to the next
    turn's speaker, in the same conversation (`chunks.questions_answered`: "you"/"your" become the
    replier's name), with that reply as the index embeds it."""
    rows = turns.sort("agent_id", "conversation_id", "turn_index").select(
        "agent_id", "conversation_id", "speaker", "role", "content"
    ).to_dicts()
    pairs: list[QuestionReply] = []
    for before, turn in zip(rows, rows[1:], strict=False):  # each turn with the next one
        if (before["agent_id"], before["conversation_id"]) != (turn["agent_id"], turn["conversation_id"]):
            continue
        reply = turn_embed_text(turn["speaker"], turn["role"], turn["content"])
        pairs.extend(QuestionReply(turn["agent_id"], q, reply) for q in questions_answered(before, turn))
    return pairs


def home_pairs(lake: Lake | Path, agents: Sequence[str] | None = None) -> tuple[list[QuestionReply], int]:
    """The question-reply pairs of a lake's turns (of `agents` only, if given), and how many turns
    they were taken from."""
    turns = (lake if isinstance(lake, Lake) else Lake(lake)).read(TURNS)
    if agents:
        turns = turns.filter(pl.col("agent_id").is_in(list(agents)))
    return question_reply_pairs(turns), turns.height


def adapted_name(base_name: str, pairs: Sequence[QuestionReply], params: AdaptParams) -> str:
    digest = hashlib.sha256(json.dumps([base_name, list(pairs), asdict(params)]).encode("utf-8"))
    return f"adapted-{digest.hexdigest()[:16]}"


def base_model_of(model: str, home: Path | None = None) -> str:
    """The `embedding_model` setting that `model` was adapted from, or `model` itself if it is no
    adapted model. Adapting again starts from there, on every pair the home has then: the same
    pairs always give the same model, and an old adaptation is not trained over."""
    if not model:  # the packaged model: adapted from nothing
        return model
    manifest = Path(model_ref_and_name(model, home)[0]) / MANIFEST
    if not manifest.is_file():
        return model
    base = str(json.loads(manifest.read_text())["base"])
    return "" if base == DEFAULT_MODEL_NAME else base


def adapt(
    base_model: str,
    pairs: Sequence[QuestionReply],
    models_dir: Path,
    params: AdaptParams | None = None,
    home: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Adapted:
    """Fine-tune a copy of `base_model` (an `embedding_model` setting: '' is the packaged model; a
    relative one may name a folder in `home`) on `pairs` and save it under `models_dir` (kept as it
    is if a model of the same name is there). `progress(done, total)` hears of each batch trained."""
    if not any(n >= 2 for n in Counter(p.agent_id for p in pairs).values()):
        raise BadRequest(f"{len(pairs)} question-reply pair(s), fewer than 2 for any agent: too few to adapt on")
    params = params or AdaptParams()
    base_ref, base_name = model_ref_and_name(base_model, home)
    target = models_dir / adapted_name(base_name, pairs, params)
    if (target / MANIFEST).exists():
        return Adapted(path=target, pairs=len(pairs), trained=False, seconds=0.0)
    # deferred: torch, sentence-transformers and transformers cost seconds; only adapting a model needs them
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # the command prints its own one-line result
    started = time.perf_counter()
    torch.manual_seed(params.seed)
    shuffle = random.Random(params.seed).shuffle
    by_agent: defaultdict[str, list[QuestionReply]] = defaultdict(list)
    for pair in pairs:
        by_agent[pair.agent_id].append(pair)
    model = SentenceTransformer(base_ref, device="cpu", local_files_only=True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.learning_rate)

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.preprocess(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    total = params.epochs * sum(math.ceil(len(p) / params.batch_size) for p in by_agent.values())
    done = 0
    for _ in range(params.epochs):
        batches = []
        for agent_pairs in by_agent.values():
            shuffle(agent_pairs)
            batches += [agent_pairs[i : i + params.batch_size] for i in range(0, len(agent_pairs), params.batch_size)]
        shuffle(batches)
        for batch in batches:
            done += 1
            if progress is not None:
                progress(done, total)
            if len(batch) < 2:
                continue
            questions, answers = embed([p.question for p in batch]), embed([p.reply for p in batch])
            logits = questions @ answers.T * params.scale
            # two questions answered by one reply: that reply is no negative for either
            same = torch.tensor([[p.reply == o.reply for o in batch] for p in batch])
            logits = logits.masked_fill(same & ~torch.eye(len(batch), dtype=torch.bool), float("-inf"))
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)  # left by a run that died
    model.save(str(partial))
    manifest = {"base": base_name, "pairs": len(pairs), "params": asdict(params)}
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    partial.rename(target)  # a reader never sees a half-written model
    return Adapted(path=target, pairs=len(pairs), trained=True, seconds=time.perf_counter() - started)
