"""The names every turn says, typed by their sentences (`memlake.nlp.names`): one `Mention` per name per message,
and one `Observation` per relation a sentence states between the speaker and them (`stated`).

Both people of a chat are read (the user, and a named person on the other side, as in a chat between two people);
an AI assistant's own prose is not, since it names products and headings rather than the user's world. Only the
sentences that may hold a name are parsed: a sentence with a capitalised word after its first, other than "I",
so most chat ("haha yes, so fun!") costs no parse.

A turn's reading (its names and stated relations, `read_turn`) depends on its text and the readers' code alone, so
it is kept by the text's hash (`graph/turn_reads`): a rerun over unchanged turns parses none of them, and a changed
day reads only its turns whose text is new. A change to the readers' code (`_readers_version`) reads every turn again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import json
import sys
from dataclasses import asdict, dataclass

import polars as pl

import memlake.graph.stated as stated_module
import memlake.nlp.names as names_module
from memlake.distill.models import USER_SUBJECT
from memlake.graph.entity_types import TypeEvidence
from memlake.graph.observed import Mention, Observation
from memlake.graph.stated import Stated, relations_in
from memlake.lake import Lake, conform
from memlake.nlp.language_model import MODEL_PACKAGE, parse_all
from memlake.nlp.names import CHAT_ROLE_WORDS, Name, names_in, read_by_a_person, sentences_naming
from memlake.schemas import TURN_READS
from memlake.transcripts import content_sha256


@functools.cache
def _readers_version() -> str:
    """A hash of the readers' code (this module, the names and the stated relations) and the language model's
    package: what a turn's reading depends on besides its text."""
    try:
        code = "".join(inspect.getsource(m) for m in (sys.modules[__name__], names_module, stated_module))
    except OSError:  # installed without its sources: the package's version stands for its code
        code = importlib.metadata.version("memlake")
    return hashlib.sha256(f"{MODEL_PACKAGE}\x1f{code}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TurnRead:
    """What one turn's text says: its names (offsets within their sentences) and the relations it states."""

    names: tuple[Name, ...]
    stated: tuple[Stated, ...]


def read_turn(content: str) -> TurnRead:
    """The names and stated relations of a turn's text, sentence by sentence (the parse: the costly part)."""
    names: list[Name] = []
    stated: list[Stated] = []
    for sentence in sentences_naming(content):
        said = names_in(sentence)
        names += said
        stated += relations_in(sentence, said)
    return TurnRead(tuple(names), tuple(stated))


@dataclass(frozen=True)
class TurnsSaid:
    """The mentions and relations people's turns say, and every read turn's reading (rows of graph/turn_reads)."""

    mentions: list[Mention]  # typed as each sentence read them: `entity_types` agrees one type per name
    observations: list[Observation]
    reads: pl.DataFrame
    evidence: TypeEvidence
    user_speakers: dict[str, set[str]]  # agent -> the names the user's turns are spoken under ("Tamsin")


def _stored(reads: pl.DataFrame | None, version: str) -> dict[str, TurnRead]:
    """The readings kept from earlier builds by the readers of `version`, by the text's hash."""
    if reads is None or reads.is_empty():
        return {}
    kept = {}
    for sha, names, stated in reads.filter(pl.col("reader_version") == version).select(
            "content_sha256", "names", "stated").iter_rows():
        kept[sha] = TurnRead(tuple(Name(**n) for n in json.loads(names)),
                             tuple(Stated(**s) for s in json.loads(stated)))
    return kept


def from_turns(turns: pl.DataFrame, stored_reads: pl.DataFrame | None = None) -> TurnsSaid:
    """One mention per name a person said, per message, with the message's time, and the relations they stated,
    said (and valid from) then; with what every sentence says of each name's type (`TypeEvidence`: the graph
    agrees one type per name from it and the episodes). A turn whose text `stored_reads` (graph/turn_reads) holds
    is not parsed again."""
    mentions: list[Mention] = []
    observations: list[Observation] = []
    evidence = TypeEvidence(speakers=_speakers(turns))
    version = _readers_version()
    stored = _stored(stored_reads, version)
    rows: list[dict[str, object]] = []
    columns = ("agent_id", "conversation_id", "message_id", "role", "speaker", "content", "created_at")
    said = [(row, content_sha256(row[5] or "")) for row in turns.sort(
        "agent_id", "conversation_id", "turn_index").select(columns).iter_rows() if read_by_a_person(row[3], row[4])]
    for at_turn, ((agent, conversation, message, role, speaker, content, at), sha) in enumerate(said):
        if at_turn % PARSED_AHEAD == 0:
            _parse_ahead(said[at_turn:at_turn + PARSED_AHEAD], stored)
        read = stored.get(sha)
        if read is None:
            read = stored[sha] = read_turn(content or "")
        rows.append({"agent_id": agent, "conversation_id": conversation, "message_id": message,
                     "content_sha256": sha, "reader_version": version,
                     "names": json.dumps([asdict(n) for n in read.names], ensure_ascii=False),
                     "stated": json.dumps([asdict(s) for s in read.stated], ensure_ascii=False)})
        speaker_is = USER_SUBJECT if role == "user" else speaker
        seen: set[tuple[str, str]] = set()
        for name in read.names:
            evidence.add_turn_name(agent, name)
            if (name.text, name.type) not in seen:
                seen.add((name.text, name.type))
                mentions.append(Mention(agent, name.text, name.type, conversation, at, (message,)))
        for stated in read.stated:
            if stated.source != "I":
                evidence.add_stated_subject(agent, stated.source)
            observations.append(_observation(stated, agent, speaker_is, conversation, message, at))
    reads = pl.from_arrow(conform(TURN_READS, rows)) if rows else Lake.empty(TURN_READS)
    assert isinstance(reads, pl.DataFrame)
    return TurnsSaid(mentions, observations, reads.sort("agent_id", "message_id"), evidence, _user_speakers(turns))


# How many turns' sentences are parsed in one batch before they are read: a batch costs a quarter of parsing them
# one at a time (memlake.nlp.language_model), and this many stay well inside the parse cache.
PARSED_AHEAD = 256


def _parse_ahead(said: list[tuple[tuple, str]], stored: dict[str, TurnRead]) -> None:
    """Parse, in one batch, the sentences of these turns that `read_turn` will parse (those no stored reading holds)."""
    parse_all([sentence for (*_, content, _at), sha in said if sha not in stored
               for sentence in sentences_naming(content or "")])


def _observation(stated: Stated, agent: str, speaker: str, conversation: str, message: str, at) -> Observation:  # type: ignore[no-untyped-def]
    source = speaker if stated.source == "I" else stated.source
    return Observation(agent, source, "person", stated.relation, stated.relation_text, stated.target,
                       stated.target_type, stated.confidence, at, None, at, conversation, (message,))


def _user_speakers(turns: pl.DataFrame) -> dict[str, set[str]]:
    """agent -> the names the user's turns are spoken under: a person's name (capitalised, no chat role's word), as
    in a chat between two people; none where the user's turns carry no name."""
    named: dict[str, set[str]] = {}
    for agent, speaker in turns.filter(pl.col("role") == "user").select("agent_id", "speaker").unique().iter_rows():
        name = (speaker or "").strip()
        if name[:1].isupper() and name.lower() not in CHAT_ROLE_WORDS:
            named.setdefault(agent, set()).add(name)
    return named


def _speakers(turns: pl.DataFrame) -> set[tuple[str, str]]:
    """(agent, name lowercased) of every person who speaks, and their first names: people, whatever a sentence
    seemed to say."""
    people = set()
    for agent, role, speaker in turns.select("agent_id", "role", "speaker").unique().iter_rows():
        if speaker and read_by_a_person(role, speaker):
            people |= {(agent, speaker.lower()), (agent, speaker.split()[0].lower())}
    return people
