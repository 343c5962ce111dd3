"""The names every turn says, typed by their sentences (`memlake.nlp.names`): one `Mention` per name per message,
and one `Observation` per relation a sentence states between the speaker and them (`stated`).

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

from memlake.chunks import SENTENCE_END
from memlake.distill.models import USER_SUBJECT
from memlake.distill.offline.vocabulary import PROGRAM_SPEAKERS
from memlake.graph.mentions import Mention, Observation
from memlake.graph.stated import OBJECT_TYPES, Stated, relations_in
from memlake.nlp.names import names_in

# What a sentence's cue weighs against the pipeline's label alone, when one agent's chats type a name two ways.
CUE_WEIGHT = 3
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
    for sentence in SENTENCE_END.split(text or ""):
        if may_name(sentence):
            yield sentence


def from_turns(turns: pl.DataFrame) -> tuple[list[Mention], list[Observation]]:
    """One mention per name a person said, per message, with the message's time; a name has one type in an
    agent's chats (`agreed_types`); and the relations they stated, said (and valid from) then."""
    mentions: list[Mention] = []
    observations: list[Observation] = []
    votes: dict[tuple[str, str], Counter[str]] = {}
    columns = ("agent_id", "conversation_id", "message_id", "role", "speaker", "content", "created_at")
    for agent, conversation, message, role, speaker, content, at in turns.sort(
            "agent_id", "conversation_id", "turn_index").select(columns).iter_rows():
        if not read_by_a_person(role, speaker):
            continue
        speaker_is = USER_SUBJECT if role == "user" else speaker
        seen: set[tuple[str, str]] = set()
        for sentence in sentences_naming(content):
            names = names_in(sentence)
            for name in names:
                votes.setdefault((agent, name.text.lower()), Counter())[name.type] += CUE_WEIGHT if name.cued else 1
                if (name.text, name.type) not in seen:
                    seen.add((name.text, name.type))
                    mentions.append(Mention(agent, name.text, name.type, conversation, at, (message,)))
            observations += [_observation(s, agent, speaker_is, conversation, message, at)
                             for s in relations_in(sentence, names)]
    speakers = _speakers(turns)
    return agreed_types(mentions, votes, speakers), agreed_ends(observations, votes, speakers)


def _observation(stated: Stated, agent: str, speaker: str, conversation: str, message: str, at) -> Observation:  # type: ignore[no-untyped-def]
    source = speaker if stated.source == "I" else stated.source
    return Observation(agent, source, "person", stated.relation, stated.relation_text, stated.target,
                       stated.target_type, stated.confidence, at, None, at, conversation, (message,))


def _speakers(turns: pl.DataFrame) -> set[tuple[str, str]]:
    """(agent, name lowercased) of every person who speaks, and their first names: people, whatever a sentence
    seemed to say."""
    people = set()
    for agent, role, speaker in turns.select("agent_id", "role", "speaker").unique().iter_rows():
        if speaker and read_by_a_person(role, speaker):
            people |= {(agent, speaker.lower()), (agent, speaker.split()[0].lower())}
    return people


def _agreed(votes: dict[tuple[str, str], Counter[str]], speakers: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A name's type in an agent's chats: a speaker's name is a person; a pet's, named once after its kind ("my pup
    Toby"), an animal however the pipeline labels it alone later ("I love Toby!" reads as ORG); else the type with
    the most weight (a cue weighs `CUE_WEIGHT` labels), the first said on a tie."""
    def agreed(key: tuple[str, str], counted: Counter[str]) -> str:
        if key in speakers:
            return "person"
        return "animal" if counted["animal"] >= CUE_WEIGHT else counted.most_common(1)[0][0]

    return {key: agreed(key, counted) for key, counted in votes.items()}


def agreed_types(mentions: list[Mention], votes: dict[tuple[str, str], Counter[str]],
                 speakers: set[tuple[str, str]]) -> list[Mention]:
    """Every mention with its name's agreed type (`_agreed`), one per name per message."""
    agreed = _agreed(votes, speakers)
    out: dict[tuple[str, str, tuple[str, ...]], Mention] = {}
    for m in mentions:
        out.setdefault((m.agent_id, m.name, m.message_ids), replace(m, type=agreed[(m.agent_id, m.name.lower())]))
    return list(out.values())


def agreed_ends(observations: list[Observation], votes: dict[tuple[str, str], Counter[str]],
                speakers: set[tuple[str, str]]) -> list[Observation]:
    """Every relation with its target's agreed type, so it meets the mentions of the same name; a relation whose
    object the chat types as no object of it ("I love Toby" of the dog Toby: likes takes a work or a place) is
    dropped."""
    agreed = _agreed(votes, speakers)
    typed = [replace(o, target_type=agreed.get((o.agent_id, o.target.lower()), o.target_type)) for o in observations]
    return [o for o in typed if o.target_type in OBJECT_TYPES.get(o.relation, {o.target_type})]
