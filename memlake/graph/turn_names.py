"""The names every turn says, typed by their sentences (`memlake.nlp.names`): one `Mention` per name per message.

Both people of a chat are read (the user, and a named person on the other side, as in a chat between two people);
an AI assistant's own prose is not, since it names products and headings rather than the user's world. Only the
sentences that may hold a name are parsed: a sentence with a capitalised word after its first, other than "I",
so most chat ("haha yes, so fun!") costs no parse.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import polars as pl

# The offline distiller's list of program speakers is the one list of them.
from memlake.distill.offline.entities import _PROGRAM_SPEAKERS as PROGRAM_SPEAKERS
from memlake.graph.mentions import Mention
from memlake.nlp.names import Name, names_in

# What a sentence's cue weighs against the pipeline's label alone, when one agent's chats type a name two ways.
CUE_WEIGHT = 3
# A sentence ends at ., ! or ? (and a newline) followed by space.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# A capitalised word after a sentence's first word; "I" and its contractions are no names.
_LATER_CAPITAL = re.compile(r"\s\W*(?!I(?:['’][a-z]+)?\b)[A-Z]")


def read_by_a_person(role: str, speaker: str | None) -> bool:
    """Whether a turn is a person's: the user's, or a named speaker's that is no program."""
    name = (speaker or "").strip()
    return role == "user" or (bool(name) and name[0].isupper() and name.lower() not in PROGRAM_SPEAKERS)


def may_name(sentence: str) -> bool:
    """Whether a sentence is worth a parse: it has a capitalised word past its first."""
    return bool(_LATER_CAPITAL.search(sentence))


def sentences_naming(text: str) -> Iterator[str]:
    """The sentences of a text that may hold a name."""
    for sentence in _SENTENCE_END.split(text or ""):
        if may_name(sentence):
            yield sentence


def names_of(text: str) -> list[Name]:
    """The typed names of a turn's text, parsing only the sentences that may hold one."""
    return [n for sentence in sentences_naming(text) for n in names_in(sentence)]


def from_turns(turns: pl.DataFrame) -> list[Mention]:
    """One mention per name a person said, per message, with the message's time; a name has one type in an
    agent's chats (`agreed_types`)."""
    mentions: list[Mention] = []
    votes: dict[tuple[str, str], Counter[str]] = {}
    columns = ("agent_id", "conversation_id", "message_id", "role", "speaker", "content", "created_at")
    for agent, conversation, message, role, speaker, content, at in turns.sort(
            "agent_id", "conversation_id", "turn_index").select(columns).iter_rows():
        if not read_by_a_person(role, speaker):
            continue
        seen: set[tuple[str, str]] = set()
        for name in names_of(content):
            votes.setdefault((agent, name.text.lower()), Counter())[name.type] += CUE_WEIGHT if name.cued else 1
            if (name.text, name.type) not in seen:
                seen.add((name.text, name.type))
                mentions.append(Mention(agent, name.text, name.type, conversation, at, (message,)))
    return agreed_types(mentions, votes, _speakers(turns))


def _speakers(turns: pl.DataFrame) -> set[tuple[str, str]]:
    """(agent, name lowercased) of every person who speaks, and their first names: people, whatever a sentence
    seemed to say."""
    people = set()
    for agent, role, speaker in turns.select("agent_id", "role", "speaker").unique().iter_rows():
        if speaker and read_by_a_person(role, speaker):
            people |= {(agent, speaker.lower()), (agent, speaker.split()[0].lower())}
    return people


def agreed_types(mentions: list[Mention], votes: dict[tuple[str, str], Counter[str]],
                 speakers: set[tuple[str, str]]) -> list[Mention]:
    """Every mention with its name's type in the agent's chats: a speaker's name is a person; else the type with
    the most weight (a cue weighs `CUE_WEIGHT` labels), the first said on a tie; one mention per message."""
    agreed: dict[tuple[str, str], str] = {}
    for key, counted in votes.items():
        agreed[key] = "person" if key in speakers else counted.most_common(1)[0][0]
    out: dict[tuple[str, str, tuple[str, ...]], Mention] = {}
    for m in mentions:
        typed = replace(m, type=agreed[(m.agent_id, m.name.lower())])
        out.setdefault((m.agent_id, m.name, m.message_ids), typed)
    return list(out.values())
