"""The named entities a conversation mentions, from the turns of both people, typed by the language layer.

The names and their types are those `memlake.nlp.names` reads from each sentence's parse, the same the graph reads
from the turns (`memlake.graph.turn_names`): one reading of names, not two. A name is typed once per conversation by
the votes of its mentions (a cue around a mention outweighs the pipeline's label alone); every speaker's name is a
person, and the name the user gives as their own (the name slot) is one too. What the small pipeline types no better
than its label, the name's own word says ("Acme Insurance", "the Berlin Marathon", "the Nova project"). A name said
only at the start of a sentence (where any word has a capital) counts where the conversation names it elsewhere
("Paris was lovely" after "we flew to Paris"). Each entity keeps the ids of the messages that name it (a speaker
named in no message: the first message they wrote), so the graph cites where it was said.

An AI assistant's turns are read only when a person speaks them (a named speaker, as in a chat between two people):
an assistant's own prose names products and headings, not the user's world.
"""

from __future__ import annotations

from collections import Counter

from memlake.distill.models import Conversation, Entity
from memlake.distill.offline.sentences import rule_text
from memlake.distill.offline.vocabulary import NOT_PLACES
from memlake.nlp.names import CUE_WEIGHT, EVENT_NOUNS, names_in, read_by_a_person, sentences_naming

# The graph's types the distiller's entity list has no word for.
_ENTITY_TYPE = {"animal": "other", "work": "other", "tool": "product"}

# A name's own last word that says what it is, where the pipeline's label says otherwise ("Northwind Labs" is no
# place, "the Berlin Marathon" no place, "Berlin Wall Trail" no person): the words of kinds of organisation, place and
# event that names end in; and "the Nova project", the word right after it.
_OWN_WORD_TYPES = {
    **dict.fromkeys(
        """inc ltd llc gmbh corp corporation company co labs lab group bank systems technologies solutions industries
        enterprises partners capital ventures studio studios media robotics university college school academy
        hospital clinic agency institute foundation consulting software motors airlines insurance association
        society club team church records press bakery restaurant cafe café shelter gallery theater theatre museum
        library center centre council department magazine network union charity""".split(),  # noqa: SIM905
        "organization"),
    **dict.fromkeys(
        """city town village county state province park lake river mountain mountains beach bay island islands valley
        canyon falls street avenue road square coast forest desert trail hills peak gardens springs harbor
        harbour""".split(),  # noqa: SIM905
        "place"),
    **dict.fromkeys(EVENT_NOUNS, "event"),
    "project": "project",
}


def named_entities(conversation: Conversation) -> list[Entity]:
    """The named entities of a conversation, typed, each with the ids of the messages naming it, first said first."""

    read = [m for m in conversation.messages if read_by_a_person(m.role, m.speaker)]
    speakers: dict[str, str] = {}  # each person who speaks -> their first message
    for m in read:
        if read_by_a_person("", m.speaker):
            speakers.setdefault((m.speaker or "").strip(), m.message_id)
    known = {word for name in speakers for word in name.split()}  # words of names typed already: no parse for them
    votes: dict[str, Counter[str]] = {}
    said: dict[str, str] = {}  # lowercased -> as first said
    first_said: dict[str, str] = {}  # lowercased -> the message that first named it
    for message in read:
        for sentence in sentences_naming(rule_text(message.content)):
            for name in names_in(sentence) if _names_another(sentence, known) else ():
                if name.text in NOT_PLACES:
                    continue  # a tool or service the vocabulary knows ("Slack", "GitHub"): no entity of the user's
                key = said.setdefault(name.text.lower(), name.text).lower()
                first_said.setdefault(key, message.message_id)
                kind = _own_word_type(name.text, sentence[name.end:])
                votes.setdefault(key, Counter())[kind or name.type] += CUE_WEIGHT if kind or name.cued else 1
                known.update(name.text.split())
    for speaker in speakers:
        said.setdefault(speaker.lower(), speaker)
    out = []
    for key, name in said.items():
        # (the name as read: a message's curly apostrophes are straight in it, "St James’s" read "St James's")
        ids = [m.message_id for m in read if _says(rule_text(m.content), name)] or [
            first_said.get(key) or speakers[name]]
        kind = "person" if name in speakers else votes[key].most_common(1)[0][0]
        out.append(Entity(name=name, type=_ENTITY_TYPE.get(kind, kind), message_ids=ids))
    return out


def _names_another(sentence: str, known: set[str]) -> bool:
    """Whether a sentence has a capitalised word past its first that is no speaker's name, no name typed already in
    the conversation and no "I": only such a sentence is parsed (in a chat between two people most capitals are the
    other's name, "Thanks, Joanna!", or a name said again)."""
    words = [word.strip(".,;:!?\"'()“”‘’") for word in sentence.split()[1:]]
    return any(word[:1].isupper() and word not in known and word.split("'")[0].split("’")[0] != "I"
               for word in words)


def _own_word_type(name: str, after: str) -> str | None:
    """The type the name's last word, or the word right after it, says: "Acme Insurance", "the Nova project"."""
    last = name.rsplit(" ", 1)[-1] if " " in name else ""
    following = after.split(maxsplit=1)[0].strip(".,;:!?").lower() if after.strip() else ""
    return _OWN_WORD_TYPES.get(last.lower()) or (following == "project" and "project") or None


def _says(text: str, name: str) -> bool:
    """Whether a message says the name as whole words ("Ned says hi", not "Nedra")."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(name, at + 1)
    return False
