"""Facts benchmark: how much of what the user says about themselves the offline distiller captures, and how right.

Two measures, neither of them ever used to write a rule:

- **LoCoMo observations** (`observation` in locomo10.json: facts gpt-3.5 wrote about each speaker, each
  pointing at its source turn). Every session is one conversation, speaker_a the user (as in
  `memlake_bench.distill.locomo_conversations`). For the observations about speaker_a: the share matched by
  an extracted fact from the same turn(s) (recall), and the share of extracted facts that match some
  observation (matched share). A fact matches an observation when its message ids share a turn with the
  observation's and the cosine of the two texts under the packaged embedding model is at least
  `MATCH_THRESHOLD` (the speaker's name in the observation reads "the user", as facts say it). Samples 0-4
  are for development, 5-9 are reported apart (held out).
- **The blind phrasing set** (`memlake_bench/data/facts_blind.jsonl`): statements with the facts they
  should give, split by sha256(id) into a `dev` half and a `sealed` half. An extracted fact matches an
  expected one when the subject agrees (the expected subject inside the fact's, case-insensitive), the slot
  agrees when one is expected, and every expected value word is in the fact's value or content. Precision:
  extracted facts that match an expected fact; recall: expected facts some extracted fact matches.
- **Blind set 4** (`memlake_bench/data/facts_blind_4.jsonl`, issue 37): written before the rules of issue 37 by
  someone who had not read the readers; scored the same way. A row may be a sequence of turns (`turns`, a change
  told in steps), and an expected fact may name the `turn` it must come from. Its halves were drawn once with
  `BLIND_4_SEED` by `stratified_halves` (each row's first expected slot or type, or none, split at random), so both
  halves hold every slot and type; the sealed half is scored only when asked (`--blind-4-sealed`), once, at the end.

`run_facts_benchmark` writes `docs/benchmarks/facts.json`; with `sample` it also writes a seeded random
sample of held-out facts beside their source turns for a person to judge (`facts_sample.jsonl`), keeping
the judgements already there, and the report counts them. With `realmem_sample_size` it does the same for RealMem's
held-back personas 5-9 (long assistant chats; `facts_realmem_sample.jsonl`, the report's `realmem_sample`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memlake.distill.models import USER_SUBJECT, Conversation, FactCandidate, Message
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION, distill_offline
from memlake.embedding import TextEmbedder
from memlake.text import content_words
from memlake_bench.distill import locomo_conversations
from memlake_bench.locomo import normalise_evidence
from memlake_bench.machine import machine

# Chosen once, before any measurement (docs/decisions.md, 2026-11-25): same turn, and the fact says what the
# observation says in other words (MiniLM paraphrases of one claim sit above ~0.6; different claims on one topic
# below).
MATCH_THRESHOLD = 0.6
DEV_SAMPLES = range(0, 5)
HELD_OUT_SAMPLES = range(5, 10)
BLIND_SET = Path(__file__).parent / "data" / "facts_blind.jsonl"
BLIND_SET_4 = Path(__file__).parent / "data" / "facts_blind_4.jsonl"
BLIND_4_SEED = 3705
BLIND_SETS = ("blind", "blind_4")  # their keys in the report
# The hand-judged sample of the standalone check (issue 23, drawn once after its last rule); memlake-offline-15's (seed
# 1515), memlake-offline-12's (seed 8826), memlake-offline-9's (seed 5151), memlake-offline-7's (seed 2607) and
# memlake-offline-5's (seed 23), judged before their rules were fixed, are in git history.
SAMPLE_SEED = 6170
# The hand-judged sample of RealMem's held-back personas (long assistant chats; issue 23, drawn once after the last
# rule of s8-rmprec): its own seed and file, beside the LoCoMo one.
REALMEM_SAMPLE_SEED = 2359
REALMEM_HELD_BACK = range(5, 10)
REALMEM_SAMPLE_FILE = "facts_realmem_sample.jsonl"
# How much of the source message a judge sees: about this many characters around the sentence the fact came from.
SOURCE_WINDOW = 400


@dataclass(frozen=True)
class Observation:
    sample_index: int
    conversation_id: str
    text: str
    message_ids: tuple[str, ...]


@dataclass(frozen=True)
class Extracted:
    sample_index: int
    conversation_id: str
    fact: FactCandidate


def user_observations(samples: Sequence[dict[str, Any]]) -> list[Observation]:
    """LoCoMo's observations about speaker_a (the user), with their normalised source turns."""
    out = []
    for index, sample in enumerate(samples):
        speaker_a = sample["conversation"]["speaker_a"]
        known = {t["dia_id"] for key, turns in sample["conversation"].items()
                 if key.startswith("session_") and isinstance(turns, list) for t in turns}
        for key, by_speaker in sample["observation"].items():
            number = re.fullmatch(r"session_(\d+)_observation", key)
            if not number:
                continue
            for text, raw_ids in by_speaker.get(speaker_a, []):
                ids = normalise_evidence(raw_ids if isinstance(raw_ids, list) else [raw_ids], known)
                if ids:
                    out.append(Observation(index, f"session_{number.group(1)}", _as_user(text, speaker_a), ids))
    return out


def _as_user(text: str, name: str) -> str:
    return re.sub(rf"\b{re.escape(name)}\b('s)?", lambda m: "the user's" if m.group(1) else "the user", text)


def extract(samples: Sequence[dict[str, Any]],
            distill: Callable[[Conversation], Any] = distill_offline) -> list[Extracted]:
    by_agent = {sample["sample_id"]: i for i, sample in enumerate(samples)}
    out = []
    for conversation in locomo_conversations(list(samples)):
        for fact in distill(conversation).fact_candidates:
            out.append(Extracted(by_agent[conversation.agent_id], conversation.conversation_id, fact))
    return out


def match_observations(observations: Sequence[Observation], extracted: Sequence[Extracted],
                       embedder: TextEmbedder, threshold: float = MATCH_THRESHOLD) -> tuple[set[int], set[int]]:
    """(indexes of observations matched, indexes of facts matched): same turn and cosine ≥ threshold."""
    by_turn: dict[tuple[int, str], list[int]] = {}
    for j, e in enumerate(extracted):
        for message_id in e.fact.message_ids:
            by_turn.setdefault((e.sample_index, message_id), []).append(j)
    pairs = sorted({(i, j) for i, o in enumerate(observations) for m in o.message_ids
                    for j in by_turn.get((o.sample_index, m), [])})
    if not pairs:
        return set(), set()
    observation_vectors = embedder.embed([o.text for o in observations])
    fact_vectors = embedder.embed([e.fact.content for e in extracted])
    matched_observations: set[int] = set()
    matched_facts: set[int] = set()
    for i, j in pairs:
        if float(np.dot(observation_vectors[i], fact_vectors[j])) >= threshold:
            matched_observations.add(i)
            matched_facts.add(j)
    return matched_observations, matched_facts


def locomo_scores(observations: Sequence[Observation], extracted: Sequence[Extracted],
                  embedder: TextEmbedder, samples: range) -> dict[str, Any]:
    obs = [o for o in observations if o.sample_index in samples]
    facts = [e for e in extracted if e.sample_index in samples]
    matched_obs, matched_facts = match_observations(obs, facts, embedder)
    user_facts = [j for j, e in enumerate(facts) if e.fact.subject == USER_SUBJECT]
    return {
        "samples": f"{samples.start}-{samples.stop - 1}",
        "observations_about_user": len(obs),
        "observations_matched": len(matched_obs),
        "observation_recall": _share(len(matched_obs), len(obs)),
        "facts": len(facts),
        "facts_about_user": len(user_facts),
        "facts_matching_an_observation": len(matched_facts),
        "facts_matched_share": _share(len(matched_facts), len(facts)),
        "user_facts_matched_share": _share(len(matched_facts & set(user_facts)), len(user_facts)),
        "facts_by_type": dict(sorted(Counter(e.fact.type for e in facts).items())),
    }


# -- the blind phrasing set ------------------------------------------------------------------------


def blind_rows(path: Path = BLIND_SET) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def blind_half(row_id: str) -> str:
    """The half a statement of the first blind set belongs to: fixed by its id alone."""
    return "dev" if int(hashlib.sha256(row_id.encode()).hexdigest(), 16) % 2 == 0 else "sealed"


def stratum(row: dict[str, Any]) -> str:
    """What a row is mainly a test of: its first expected fact's slot, else its type; "none" when it expects none."""
    first = row["expected"][0] if row["expected"] else None
    return "none" if first is None else first.get("slot") or first["type"]


def stratified_halves(rows: Sequence[dict[str, Any]], seed: int) -> dict[str, str]:
    """{row id: "dev" or "sealed"}: within each stratum, rows in a seeded random order alternate halves (from a
    seeded random first half), so every slot and type with two rows or more is in both halves."""
    rng = random.Random(seed)
    by_stratum: dict[str, list[str]] = {}
    for row in rows:
        by_stratum.setdefault(stratum(row), []).append(row["id"])
    halves: dict[str, str] = {}
    for name in sorted(by_stratum):
        ids = sorted(by_stratum[name])
        rng.shuffle(ids)
        first = rng.randrange(2)
        halves.update({row_id: ("dev", "sealed")[(first + i) % 2] for i, row_id in enumerate(ids)})
    return halves


def row_messages(row: dict[str, Any]) -> tuple[Message, ...]:
    """A row's messages, a day apart: its `turns` (ids `<row id>-<turn>`), or its one `text` (id the row's)."""
    said_at = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)
    if "turns" not in row:
        return (Message(row["id"], row["role"], row["text"], said_at, row["role"]),)
    return tuple(Message(f"{row['id']}-{i}", t["role"], t["text"], said_at + timedelta(days=i), t["role"])
                 for i, t in enumerate(row["turns"]))


def row_text(row: dict[str, Any]) -> str:
    return " / ".join(t["text"] for t in row["turns"]) if "turns" in row else row["text"]


def expected_matches(fact: FactCandidate, expected: dict[str, Any], row_id: str = "") -> bool:
    """Subject, slot (when one is expected), every value word, and the turn it must come from (when one is named)."""
    if expected["subject"].lower() not in fact.subject.lower():
        return False
    if expected.get("slot") and expected["slot"] != fact.slot:
        return False
    if expected.get("turn") is not None and f"{row_id}-{expected['turn']}" not in fact.message_ids:
        return False
    said = f"{fact.value} {fact.content}".lower()
    return all(word in said for word in expected["value"].lower().split())


def blind_scores(rows: Sequence[dict[str, Any]], half: str,
                 distill: Callable[[Conversation], Any] = distill_offline) -> dict[str, Any]:
    rows = [r for r in rows if r["half"] == half]
    extracted = matched = expected_total = expected_found = typed_right = 0
    misses: list[str] = []
    for row in rows:
        facts = distill(Conversation("blind", row["id"], None, row_messages(row))).fact_candidates
        extracted += len(facts)
        for f in facts:
            if any(expected_matches(f, e, row["id"]) for e in row["expected"]):
                matched += 1
            elif half == "dev":  # the sealed half says only how many, never which
                misses.append(f"{row['id']} extra: {f.type} {f.subject}/{f.slot} {f.value!r} <- {row_text(row)}")
        for e in row["expected"]:
            expected_total += 1
            hit = next((f for f in facts if expected_matches(f, e, row["id"])), None)
            expected_found += hit is not None
            typed_right += hit is not None and hit.type == e["type"]
            if hit is None and half == "dev":
                misses.append(f"{row['id']} missed: {e['type']} {e['subject']}/{e['slot']} {e['value']!r} "
                              f"<- {row_text(row)}")
    return {
        "half": half,
        "statements": len(rows),
        "expected_facts": expected_total,
        "extracted_facts": extracted,
        "precision": _share(matched, extracted),
        "recall": _share(expected_found, expected_total),
        "type_agreement_of_found": _share(typed_right, expected_found),
        **({"misses": misses} if misses else {}),
    }


# -- the hand-judged sample ------------------------------------------------------------------------


def _turn_texts(samples: Sequence[dict[str, Any]]) -> dict[tuple[int, str], str]:
    return {(i, t["dia_id"]): f"{t['speaker']}: {t['text']}" for i, sample in enumerate(samples)
            for key, turns in sample["conversation"].items()
            if key.startswith("session_") and isinstance(turns, list) for t in turns}


def write_sample(path: Path, samples: Sequence[dict[str, Any]], extracted: Sequence[Extracted],
                 size: int) -> None:
    """A seeded random sample of held-out facts beside their source turns; judgements already made are kept."""
    held_out = [e for e in extracted if e.sample_index in HELD_OUT_SAMPLES]
    chosen = random.Random(SAMPLE_SEED).sample(held_out, min(size, len(held_out)))
    turns = _turn_texts(samples)
    write_keeping_judgements(path, [
        _sample_row(samples[e.sample_index]["sample_id"], e.conversation_id, e.fact,
                    [turns.get((e.sample_index, m), "") for m in e.fact.message_ids]) for e in chosen])


def _sample_row(sample: str, conversation_id: str, fact: FactCandidate, source: list[str]) -> dict[str, Any]:
    return {"sample": sample, "conversation_id": conversation_id, "message_ids": fact.message_ids, "type": fact.type,
            "subject": fact.subject, "slot": fact.slot, "value": fact.value, "content": fact.content,
            "source": source, "correct": None, "note": ""}


def write_keeping_judgements(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write the sample's rows, each with the judgement and note the file already had for the same fact."""
    judged = {_sample_key(r): r for r in read_sample(path)}
    for row in rows:
        old = judged.get(_sample_key(row))
        if old is not None:
            row["correct"], row["note"] = old.get("correct"), old.get("note", "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def read_sample(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _sample_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["sample"], ",".join(row["message_ids"]), row["content"]


def sample_precision(path: Path, current: set[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """The judged sample's precision; with `current` (the keys extracted now), judgements of facts the distiller
    no longer makes are left out and counted as stale."""
    rows = read_sample(path)
    live = [r for r in rows if current is None or _sample_key(r) in current]
    judged = [r for r in live if r.get("correct") is not None]
    right = sum(1 for r in judged if r["correct"])
    return {"file": path.name, "sampled": len(rows), "judged": len(judged), "correct": right,
            "precision": _share(right, len(judged)), "stale": len(rows) - len(live)}


def realmem_held_back_facts(data: Path) -> list[tuple[str, Conversation, FactCandidate]]:
    """(persona, conversation, fact) for every fact the offline distiller makes on RealMem's held-back personas."""
    from memlake_bench.realmem import landing_rows, persona_files  # deferred: it imports the read API

    out: list[tuple[str, Conversation, FactCandidate]] = []
    for path in [persona_files(data)[i] for i in REALMEM_HELD_BACK]:
        rows = landing_rows(json.loads(path.read_text())["dialogues"])
        by_conversation: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_conversation.setdefault(row["conversation_id"], []).append(row)
        for conversation_id, turns in by_conversation.items():
            messages = tuple(Message(t["message_id"], t["role"], t["content"],
                                     datetime.fromisoformat(t["created_at"])) for t in turns)
            conversation = Conversation(path.stem, conversation_id, None, messages)
            out.extend((path.stem, conversation, fact) for fact in distill_offline(conversation).fact_candidates)
    return out


def source_excerpt(message: str, fact: str, width: int = SOURCE_WINDOW) -> str:
    """About `width` characters of `message` around the sentence that shares most words with `fact`."""
    if len(message) <= width:
        return message
    wanted = content_words(fact) - {"user"}
    sentences = list(re.finditer(r"[^.!?\n]+[.!?]*", message))
    best = max(sentences, key=lambda m: len(content_words(m.group(0)) & wanted), default=None)
    middle = (best.start() + best.end()) // 2 if best else 0
    start = max(0, min(middle - width // 2, len(message) - width))
    return ("…" if start else "") + message[start:start + width] + ("…" if start + width < len(message) else "")


def write_realmem_sample(path: Path, facts: Sequence[tuple[str, Conversation, FactCandidate]], size: int) -> None:
    """A seeded random sample of RealMem held-back facts beside their source messages (cut around the sentence);
    judgements already made are kept."""
    chosen = random.Random(REALMEM_SAMPLE_SEED).sample(list(facts), min(size, len(facts)))
    rows = []
    for persona, conversation, fact in chosen:
        said = {m.message_id: m.content for m in conversation.messages}
        rows.append(_sample_row(persona, conversation.conversation_id, fact,
                                [source_excerpt(said.get(m, ""), fact.content) for m in fact.message_ids]))
    write_keeping_judgements(path, rows)


def realmem_sample_report(path: Path, realmem: Path, sample_size: int) -> dict[str, Any]:
    """Write the RealMem sample when `sample_size` is given, and count its judgements against what the distiller
    makes now (a judged fact it no longer makes is stale)."""
    facts = realmem_held_back_facts(realmem)
    if sample_size:
        write_realmem_sample(path, facts, sample_size)
    current = {(persona, ",".join(fact.message_ids), fact.content) for persona, _, fact in facts}
    return {**sample_precision(path, current), "seed": REALMEM_SAMPLE_SEED,
            "personas": f"{REALMEM_HELD_BACK.start}-{REALMEM_HELD_BACK.stop - 1}"}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def render_facts_markdown(report: dict[str, Any]) -> str:
    """The Markdown section of docs/benchmarks.md (kept in facts.json, as benchmarks beside locomo do)."""
    lines = ["## Facts: what the user says about themselves (LoCoMo observations, blind phrasing set)", "",
             f"Offline distiller {report['distiller']}; a fact matches a LoCoMo observation about the user from the "
             f"same turn at cosine ≥ {report['match_threshold']} ({report['embedding_model']}). "
             "Run: `memlake bench facts`.",
             "", "| measure | samples 0-4 (development) | samples 5-9 (held out) |", "|---|---|---|"]
    dev, held = report["locomo"]["development"], report["locomo"]["held_out"]
    lines += [f"| observation recall | {dev['observation_recall']} ({dev['observations_matched']} of "
              f"{dev['observations_about_user']}) | **{held['observation_recall']}** "
              f"({held['observations_matched']} of {held['observations_about_user']}) |",
              f"| facts matching an observation | {dev['facts_matched_share']} of {dev['facts']} | "
              f"{held['facts_matched_share']} of {held['facts']} |"]
    sample = report.get("held_out_sample")
    if sample:
        lines += ["", f"Hand-judged sample of {sample['sampled']} held-out facts drawn with seed {SAMPLE_SEED} "
                  f"(`{sample['file']}`): "
                  f"**{sample['correct']} of {sample['judged']} correct ({sample['precision']})**"
                  + (f"; {sample['stale']} sampled facts the distiller no longer makes are left out (stale)."
                     if sample.get("stale") else ".")]
    realmem = report.get("realmem_sample")
    if realmem:
        lines += ["", f"Hand-judged sample of {realmem['sampled']} facts from RealMem's held-back personas "
                  f"{realmem['personas']} (long working sessions with an AI assistant), seed {realmem['seed']} "
                  f"(`{realmem['file']}`): **{realmem['correct']} of {realmem['judged']} correct "
                  f"({realmem['precision']})**" + (f"; {realmem['stale']} stale." if realmem.get("stale") else ".")]
    lines += ["", "| blind set, half | statements | precision | recall | type agreement |", "|---|---|---|---|---|"]
    for name in BLIND_SETS:
        for half, b in report.get(name, {}).items():
            lines.append(f"| {name}, {half} | {b['statements']} | {b['precision']} | {b['recall']} | "
                         f"{b['type_agreement_of_found']} |")
    return "\n".join(lines + [""])


def blind_report(sealed: bool = False, sealed_4: bool = False,
                 distill: Callable[[Conversation], Any] = distill_offline) -> dict[str, dict[str, Any]]:
    """Both blind sets' dev halves; the first set's sealed half with `sealed`, blind set 4's only with `sealed_4`."""
    report = {}
    for name, path, with_sealed in (("blind", BLIND_SET, sealed), ("blind_4", BLIND_SET_4, sealed_4)):
        rows = blind_rows(path)
        report[name] = {half: blind_scores(rows, half, distill)
                        for half in (("dev", "sealed") if with_sealed else ("dev",))}
    return report


def run_facts_benchmark(data: Path, embedder: TextEmbedder, out: Path | None = None, sample_size: int = 0,
                        sealed: bool = False, log: Callable[[str], None] = print, realmem: Path | None = None,
                        realmem_sample_size: int = 0, sealed_4: bool = False) -> dict[str, Any]:
    """Measure, write `out` (JSON) when given, and return the report. The first blind set's sealed half only with
    `sealed`, blind set 4's only with `sealed_4`; the RealMem held-back sample (beside `out`) when `realmem` is given
    and the sample is asked for or already there."""
    samples = json.loads(Path(data).read_text())
    observations = user_observations(samples)
    extracted = extract(samples)
    report: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "distiller": OFFLINE_DISTILLER_VERSION,
        "embedding_model": embedder.name,
        "match_threshold": MATCH_THRESHOLD,
        "locomo": {
            "development": locomo_scores(observations, extracted, embedder, DEV_SAMPLES),
            "held_out": locomo_scores(observations, extracted, embedder, HELD_OUT_SAMPLES),
        },
        **blind_report(sealed, sealed_4),
        "machine": machine(),
    }
    if out is not None:
        sample_path = out.parent / "facts_sample.jsonl"
        if sample_size:
            write_sample(sample_path, samples, extracted, sample_size)
        if sample_path.is_file():
            current = {(samples[e.sample_index]["sample_id"], ",".join(e.fact.message_ids), e.fact.content)
                       for e in extracted}
            report["held_out_sample"] = sample_precision(sample_path, current)
        realmem_path = out.parent / REALMEM_SAMPLE_FILE
        if realmem is not None and (realmem_sample_size or realmem_path.is_file()):
            report["realmem_sample"] = realmem_sample_report(realmem_path, realmem, realmem_sample_size)
            log(f"realmem held-back sample ({realmem_path}): {report['realmem_sample']['correct']} of "
                f"{report['realmem_sample']['judged']} judged right")
        report["markdown"] = render_facts_markdown(report)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
    for label, scores in report["locomo"].items():
        log(f"locomo {label} (samples {scores['samples']}): observation recall {scores['observation_recall']} "
            f"({scores['observations_matched']} of {scores['observations_about_user']}); facts matching an "
            f"observation {scores['facts_matched_share']} ({scores['facts_matching_an_observation']} of "
            f"{scores['facts']})")
    for name in BLIND_SETS:
        for half, scores in report[name].items():
            log(f"{name} {half}: precision {scores['precision']}, recall {scores['recall']} "
                f"({scores['extracted_facts']} extracted, {scores['expected_facts']} expected)")
    return report
