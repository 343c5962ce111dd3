"""The names a sentence holds, each typed by the pipeline's entity label and refined by the words around it.

spaCy's small pipeline finds most names but types many wrongly in chat: a pet is a PERSON ("our snake Susie"),
a game is a PERSON ("playing Counter-Strike"), an author is a NORP ("reading Rothfuss"), a breed is a GPE ("my
Labrador"), a weekday is a PERSON ("See you Fri!"). So the label is only the first guess; the parse around the
name decides, in this order:

- a kind of animal right before it ("my tortoise Shelly", "a cockatiel named Kiwi") makes it an animal;
- a work noun it names ("the Harry Potter books", "a Zelda game") or a verb that takes a work ("playing
  Counter-Strike", "watched Inception") makes it a work; a work noun it owns ("Rothfuss's novels") or one word
  read ("I'm reading Rothfuss": the author is what is read) makes it a person;
- a one-word name that takes "a", "an" or a possessive of its own, or is plural ("my Labrador", "two
  Labradors"), is a kind of thing, not a name; so are calendar words ("Fri", "Sept"), a word with a capital inside
  ("KeyError", "PgBouncer": code and software) and an acronym with no cue ("STEM", "API"; "works at NASA" keeps
  it, an organization).
A name's own word "project" ("Project Heron") makes it a project. An organisation named once is read from its
sentence, not from a list of companies: banked with ("I bank with Monzo"), joined, worked at or for, or a noun of an
organisation beside it ("Monzo, the banking app", "the Monzo app"). A name with no label and no cue is not kept:
precision first.

The small pipeline labels an unknown capitalised word a person where a request names its topic ("Describe Lisbon",
"Tell me about Monzo", "What do you know about Ghent?"): there the PERSON label is no evidence, so such a name is
`untyped` (read as a concept, its vote weighing nothing): its other mentions type it ("moving to Lisbon"). Whom a
request addresses ("Remind Anna", "Tell Priya about the flat") keeps the label.

Two kinds of capitalised word are never names: a chat's role words ("User", "Assistant"), and a request verb that
opens a sentence ("Summarise this for Anna", "Describe Lisbon"): the first word of a sentence, a verb the
lemmatizer knows, that is the sentence's command (tagged a base-form verb, or the sentence has no other verb). Such
a sentence is read again with that word in lower case, so the pipeline does not take it into the name after it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memlake.chunks import SENTENCE_END
from memlake.nlp.language_model import parse, pipeline

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# The pipeline's labels that are names, as the graph's types (GRAPH_ENTITY_TYPES); other labels (DATE, NORP,
# CARDINAL, ...) are not entities unless a cue below types them.
TYPE_OF_LABEL = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
                 "EVENT": "event", "WORK_OF_ART": "work", "PRODUCT": "tool"}

# Kinds of animal a pet's name follows: the lemma of the noun before the name. The project's one list of the
# animals people keep (also the offline distiller's list of pets: `distill/offline/kinds.py`).
ANIMAL_NOUNS = frozenset(
    """dog puppy pup cat kitten kitty pet horse pony foal bird parrot budgie cockatiel canary finch parakeet macaw
    hamster gerbil rabbit bunny turtle tortoise fish goldfish snake python lizard gecko iguana chameleon ferret
    chicken hen rooster goat donkey cow pig piglet sheep lamb mouse rat chinchilla hedgehog frog axolotl
    spider tarantula alpaca llama duck""".split()) | {"guinea pig"}  # noqa: SIM905
# Nouns of organisations a name beside them names ("Monzo, the banking app", "the Monzo app", "Revolut, the company").
ORGANIZATION_NOUNS = frozenset(
    """app bank company startup firm business brand charity nonprofit agency employer organisation organization
    platform store shop retailer chain provider insurer airline fintech studio lab school university college
    hospital club""".split())  # noqa: SIM905
# (verb lemma, preposition or "" for a direct object) whose object is an organisation: "banks with Monzo", "joined
# Stripe" (a person joined is no organisation: "joined Anna for lunch" keeps the pipeline's PERSON).
ORGANIZATION_VERBS = frozenset({("bank", "with"), ("join", "")})
# The words a chat calls its two sides by ("User:", "the Assistant said"): roles, never names.
CHAT_ROLE_WORDS = frozenset({"user", "assistant", "human", "ai", "bot", "chatbot", "system"})
# Nouns of works a name can name ("the Harry Potter books") or be the author of ("Rothfuss's novels").
WORK_NOUNS = frozenset(
    """book novel series trilogy saga film movie show sitcom documentary game videogame album song track record
    play musical podcast comic manga anime episode season franchise""".split())  # noqa: SIM905
# Verbs whose object is a work: what is played, watched, listened to, binged.
WORK_VERBS = frozenset({"play", "watch", "binge", "stream", "rewatch", "replay"})
# Verbs whose one-word object is the person who wrote what is read ("reading Rothfuss").
AUTHOR_VERBS = frozenset({"read", "reread"})
# Verbs of work whose "at" / "for" object is an organization ("works at NASA", "volunteers for Oxfam").
WORK_AT_VERBS = frozenset({"work", "intern", "volunteer", "teach", "study", "join"})
# Verbs of living somewhere or going there, whose "in" / "to" / "from" object is a place ("lives in Porto", "flew to
# Madrid", "moved from Leeds"): a person is no "in" of them, so the object's own label does not outvote it.
PLACE_VERBS = frozenset({"live", "move", "relocate", "stay", "settle", "grow", "bear", "fly", "travel", "drive",
                         "emigrate", "commute"})
PLACE_PREPOSITIONS = frozenset({"in", "to", "from"})
# A capital after a lowercase letter inside a word, past a Mc/Mac/O' name: a code identifier or a brand of software
# ("KeyError", "PgBouncer"), no one of the user's world.
_INNER_CAPITAL = re.compile(r"^(?!Mc|Mac|O['’])\w*[a-z][A-Z]")
# Nouns of software a name can name or be ("the Kafka topic", "a Redis cache", "Vesna is a message broker").
SOFTWARE_NOUNS = frozenset(
    """topic docs documentation cluster server database db cache queue broker instance container library package
    plugin extension framework sdk api config configuration query schema bucket repo repository dashboard
    deployment""".split())  # noqa: SIM905
# Nouns of a trip or an outing whose "to" / "in" names a place ("a road trip to Montana", "a festival in Montreal").
TRIP_NOUNS = frozenset("""trip vacation holiday journey tour getaway cruise visit festival conference concert show
    retreat camp hike""".split())  # noqa: SIM905
# (verb lemma, preposition or "" for a direct object) whose object is software: "deployed Kafka", "installed Redis",
# "runs on Postgres", "switched to Grafana". A place is none of them ("ran Boston": its label keeps it a place).
SOFTWARE_VERBS = frozenset({("use", ""), ("install", ""), ("deploy", ""), ("configure", ""), ("run", ""),
                            ("upgrade", ""), ("host", ""), ("debug", ""), ("uninstall", ""), ("self-host", ""),
                            ("run", "on"), ("switch", "to"), ("migrate", "to"), ("build", "with"), ("build", "on"),
                            ("upgrade", "to"), ("deploy", "on"),
                            ("instal", "")})  # the lemmatizer's lemma of "installed"
# Nouns of a person: kin, and the people of someone's life ("my sister Marta", "Tomasz's wife", "Anna, my coworker").
PERSON_NOUNS = frozenset(
    """sister brother sibling twin wife husband partner boyfriend girlfriend fiance fiancé fiancée spouse mom mum
    mother dad father son daughter kid child cousin aunt uncle niece nephew grandma grandpa grandmother
    grandfather grandson granddaughter friend bestie buddy boss manager coworker colleague neighbour neighbor
    roommate flatmate teacher mentor therapist doctor someone somebody man woman guy girl boy lady gentleman person
    baby veteran resident designer engineer developer lead nurse artist musician singer actor actress writer author
    chef coach founder ceo student volunteer player""".split())  # noqa: SIM905
# Words said before a name to greet or answer whom it names ("Congrats Joanna!", "Yep Jon, ..."): no part of it.
GREETING_WORDS = frozenset(
    """hey hi hello yo bye goodbye thanks thank congrats congratulations wow woah whoa aww aw yep yeah yes sure
    alright okay ok glad nice cool great sorry oh omg haha lol hmm well dear morning night""".split())  # noqa: SIM905
# The greeting words that address someone, whatever the name after them is labelled ("Hey Priyanka", "Thanks Ev"):
# not the exclamations ("Oh, Italy!", "Wow, Lisbon!").
ADDRESSING_WORDS = frozenset("""hey hi hello yo bye goodbye thanks thank congrats congratulations dear
    morning night""".split())  # noqa: SIM905
# Nouns of what someone made, whose "by" names its maker ("a novel by Ursula Le Guin", "a quote by Rowling").
MADE_NOUNS = WORK_NOUNS | frozenset("""quote poem painting article essay story""".split())  # noqa: SIM905
# Nouns of happenings a name is the name of, as its last word or the noun it names ("the Boston Marathon", "the
# Perseid meteor shower", "the Glastonbury festival"); a place's label keeps it a place ("the Tokyo festival").
EVENT_NOUNS = frozenset("""festival fest conference summit marathon tournament championship championships cup
    olympics fair expo parade concert gala retreat convention competition hackathon ceremony workshop race shower
    eclipse""".split())  # noqa: SIM905
# Nouns of who supports a club or a team ("a Manchester City fan", "a Leeds supporter").
FAN_NOUNS = frozenset({"fan", "supporter"})
# Nouns of a place set equal to a name ("Zadar is a lovely town").
PLACE_NOUNS = frozenset("""city town village country island state region province neighbourhood neighborhood
    suburb capital""".split())  # noqa: SIM905
# Verbs only a person is the subject of: saying, telling, thinking, deciding ("Marta said", "Oskar thinks"); not
# feelings a thing is said to have in jest ("Traefik hates me").
PERSON_SUBJECT_VERBS = frozenset(
    """say tell ask reply answer text call email message laugh cry smile hug kiss promise admit agree decide
    believe wonder worry suggest recommend explain mention complain invite marry introduce shout whisper joke
    feel think write paint draw""".split())  # noqa: SIM905
# Verbs whose object is a person ("met Oskar", "called Brigid", "married Tom"), unless its label says a place or
# an organisation ("called Feedzai"); not "visit", whose object is as often a city ("visit NYC").
PERSON_OBJECT_VERBS = frozenset(
    """meet call marry date text email message tell ask invite hug kiss thank introduce congratulate
    babysit""".split())  # noqa: SIM905
# Verbs one does "with" a person ("went hiking with Jasper", "hung out with Leo", "talked with Ana").
WITH_PERSON_VERBS = frozenset(
    """go hang talk chat speak meet travel hike walk run dance eat cook play spend catch grab have camp study
    live stay""".split())  # noqa: SIM905
# Nouns of what one has or does "with" a person ("a photo with Karlie", "lunch with Marguerite").
WITH_PERSON_NOUNS = frozenset("""photo picture pic selfie lunch dinner breakfast brunch coffee date call chat meeting
    walk hike talk conversation""".split())  # noqa: SIM905
# Verbs one does "to" a person ("talked to Ana", "wrote to Leo").
TO_PERSON_VERBS = frozenset("""talk speak say write text reply explain introduce send give""".split())  # noqa: SIM905
# Labels that name a place or an organisation: a verb of people ("visited", "called") does not outvote them.
# Labels of numbers, days and amounts: never a person's name, whatever role the word has ("One of them wrote").
_NUMBER_LABELS = frozenset({"CARDINAL", "ORDINAL", "DATE", "TIME", "QUANTITY", "MONEY", "PERCENT"})
_ORGANIZATION_LABELS = frozenset({"ORG", "PRODUCT", "WORK_OF_ART", "EVENT"})
_THING_LABELS = _ORGANIZATION_LABELS | {"GPE", "LOC", "FAC"}
# Verbs whose object is what a request is about, not whom it addresses ("Describe Lisbon"; "Remind Anna" addresses).
TOPIC_VERBS = frozenset(
    """describe explain summarise summarize compare define outline research review analyse analyze discuss
    evaluate assess""".split())  # noqa: SIM905
# Calendar words and their abbreviations: a date, never an entity.
CALENDAR_WORDS = frozenset(
    """mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday saturday sunday jan feb
    mar apr jun jul aug sep sept oct nov dec january february march april may june july august september october
    november december""".split())  # noqa: SIM905


@dataclass(frozen=True)
class Name:
    """One name said in a sentence, with its type (GRAPH_ENTITY_TYPES) and its character offsets in the text."""

    text: str
    type: str
    start: int
    end: int
    cued: bool  # typed by the words around it, not by the pipeline's label alone
    untyped: bool = False  # a request's topic the pipeline labelled a person: its type is left to its other mentions
    person_role: bool = False  # said where only a person goes ("Marta said", "met Oskar", "my sister Ana")


def names_in(text: str) -> list[Name]:
    """The names `text` holds, typed by their sentences, in the order said."""
    doc = _without_request_verbs(text)
    found: list[Name] = []
    taken: set[int] = set()
    for span in _candidates(doc):
        said = span[1:] if len(span) > 1 and span[0].lower_ in ("the", "a", "an") else span  # "the X Orchestra"
        while len(said) > 1 and (said[0].is_quote or said[-1].is_quote):  # '"The Overstory': the title, unquoted
            said = said[1:] if said[0].is_quote else said[:-1]
        greeted = _past_a_greeting(said)
        if greeted is not None:  # (a slice of a span has no label: the greeting makes it a person's name)
            said = span = greeted
        said = _whole(_trimmed(said))
        if taken & set(range(said.start, said.end)) or not said.text.lstrip("\"'“‘").lstrip()[:1].isupper():
            continue  # a name is capitalised: the pipeline's "weeks" (a DATE) is no name, whatever the cue
        if said.text.lower() in CHAT_ROLE_WORDS or said.text.lower() in GREETING_WORDS or _an_exclamation(said):
            continue  # a side of the chat; a greeting or an exclamation said alone ("Yep, Toby and I ...", "Bye!")
        cue = "work" if _quoted(said) else _cue_of(span, span.root)
        if cue is None and span.label_ not in _NUMBER_LABELS and (greeted is not None or _in_a_persons_role(span)):
            cue = "person"
        kind = cue if cue is not None else _conjunct_type(span) or _type_of(span)
        untyped = cue is None and kind == "person" and _asked_about(span.root)
        end = said.start_char + len(text[said.start_char:said.end_char].rstrip(_NOT_A_NAMES_END))
        if kind and end > said.start_char:  # ('"Summer Sounds"- ...': one token, its quote and dash no part of it)
            found.append(Name(text[said.start_char:end], "concept" if untyped else kind, said.start_char, end,
                              cue is not None, untyped, cue == "person"))
            taken |= set(range(min(span.start, said.start), max(span.end, said.end)))
    return sorted(found, key=lambda n: n.start)


def _without_request_verbs(text: str) -> Doc:
    """The parse of `text`, read again with each sentence's opening request verb in lower case when it has one
    ("Summarise this for Anna" is read as "summarise this for Anna"): same length, so the offsets hold. A backtick
    or an acute accent between letters is read as the apostrophe it stands for ("We`ve": the pipeline reads the
    word whole, a proper noun, when the apostrophe is not one it knows)."""
    text = _APOSTROPHE_STAND_IN.sub("'", text)
    doc = parse(text)
    starts = [t.idx for t in _request_verbs(doc)]
    if not starts:
        return doc
    chars = list(text)
    for i in starts:
        chars[i] = chars[i].lower()
    return parse("".join(chars))


def _asked_about(head: Token) -> bool:
    """Whether a name is what a request is about: the object of a topic verb ("describe Lisbon"), or of "about" in a
    request ("tell me about Monzo", "what do you know about Ghent?"): a verb with no subject, or "you" as it."""
    verb = head.head
    if head.dep_ == "pobj" and verb.lower_ == "about":
        verb = verb.head
    elif not (head.dep_ == "dobj" and verb.lemma_.lower() in TOPIC_VERBS):
        return False
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    return verb.pos_ in ("VERB", "AUX") and all(s.lower_ == "you" for s in subjects)


def _request_verbs(doc: Doc) -> list[Token]:
    """The capitalised verbs that open a sentence as its command: "Summarise ...", "Describe Lisbon"; not "Mark
    called me" (Mark is the subject) nor "Will and I went" (another verb is the sentence's)."""
    found = []
    for sentence in doc.sents:
        first = next((t for t in sentence if not t.is_punct and not t.is_space), None)
        if first is None or not first.text[:1].isupper() or first.lower_ not in _base_verbs():
            continue
        if first.dep_ in ("nsubj", "nsubjpass") or any(c.dep_ in ("nsubj", "nsubjpass") for c in first.children):
            continue
        others = [t for t in sentence if t.i != first.i and t.pos_ in ("VERB", "AUX")]
        # a verb only (no noun) the pipeline took for a name's first word: "Describe Lisbon, I am moving there"
        if first.tag_ == "VB" or not others or (first.tag_ == "NNP" and only_a_verb(first.text)):
            found.append(first)
    return found


def only_a_verb(word: str) -> bool:
    """Whether a word is one the lemmatizer knows as a verb and not as a noun ("summarise", "explain"; not "draft",
    "mark"): capitalised alone, it is a request's first word more likely than a name."""
    return word.lower() in _base_verbs() and word.lower() not in _lemma_index("noun")


def _base_verbs() -> frozenset[str]:
    """The English verbs the pipeline's lemmatizer knows, in their base forms (its lookup index, ~8,700)."""
    return _lemma_index("verb")


@functools.cache
def _lemma_index(part_of_speech: str) -> frozenset[str]:
    """The base forms the pipeline's lemmatizer knows for a part of speech ("verb", "noun"): its lookup index."""
    lemmatizer: Any = pipeline().get_pipe("lemmatizer")  # spaCy's Lemmatizer, typed as a plain pipe
    return frozenset(lemmatizer.lookups.get_table("lemma_index")[part_of_speech])


def _candidates(doc) -> list[Span]:  # type: ignore[no-untyped-def]
    """The pipeline's entities, then every run of proper nouns it left out (a cue may still type one)."""
    spans = list(doc.ents)
    run: list[Token] = []
    for token in [*doc, None]:
        if token is not None and token.pos_ == "PROPN" and token.text[:1].isupper():
            run.append(token)
            continue
        if run:
            spans.append(doc[run[0].i:run[-1].i + 1])
            run = []
    return spans


def _type_of(span: Span) -> str | None:
    """The type of a candidate name no cue typed, or None when it is no name (see the module's docstring)."""
    head = span.root
    if any(t.lower_ in CALENDAR_WORDS for t in span):
        return None
    if len(span) == 1 and (_INNER_CAPITAL.search(span.text) or (span.text.isupper() and len(span.text) > 1)):
        return None  # "KeyError", "PgBouncer"; an acronym the small model calls ORG whatever it is ("API")
    if len(span) == 1 and (head.tag_ == "NNPS" or any(c.dep_ in ("det", "poss") and c.lower_ != "the"
                                                      for c in head.children)):
        return None  # a kind, not a name: "my Labrador", "a Prius", "two Labradors"
    return TYPE_OF_LABEL.get(span.label_)


def _cue_of(span: Span, head: Token) -> str | None:
    """The type the words around a name give it, or None when they say nothing."""
    if any(t.lower_ in CALENDAR_WORDS for t in span):
        return None
    if "project" in (span[0].lower_, span[-1].lower_) and len(span) > 1:
        return "project"  # "Project Heron", "the Nova project": the name's own word
    if span.label_ not in ("GPE", "LOC", "FAC") and (
            (len(span) > 1 and span[-1].lower_ in EVENT_NOUNS)
            or (head.dep_ == "compound" and head.head.lemma_.lower() in EVENT_NOUNS and head.head.tag_ == "NN"
                and any(c.lower_ == "the" for c in head.head.children))):
        # "the Boston Marathon", "the Perseid meteor shower": one happening; "an LGBTQ conference", "Fortnite
        # competitions" are kinds of it
        return "event"
    before = _word_before(span)
    if before is not None and before.lemma_.lower() in ANIMAL_NOUNS:
        return "animal"
    kind = _kind_set_beside(head)
    if kind is not None:
        return kind  # "Rex, my dog, is sick", "Quintela is a fintech company": the kind set beside the name
    if head.dep_ == "compound" and head.head.lemma_.lower() in WORK_NOUNS:
        return "work"
    if head.dep_ == "compound" and head.head.lemma_.lower() in SOFTWARE_NOUNS:
        return "tool"  # "the Nomad cluster", "the Kafka docs"
    if head.dep_ == "poss" and head.head.lemma_.lower() in WORK_NOUNS:
        return "person"  # "Rothfuss's novels": the one who wrote them
    if _beside_an_organization_noun(head):
        return "organization"
    if head.dep_ == "compound" and head.head.lemma_.lower() in FAN_NOUNS and span.label_ != "PERSON":
        return "organization"  # "a Manchester City fan": the club a city's name stands for
    head = _first_conjunct(head)  # "They use Go and Kafka": Kafka is used as Go is
    verb = head.head if head.dep_ in ("dobj", "pobj") else None
    if verb is not None and span.label_ not in ("GPE", "LOC", "FAC") and _software_verb(head, verb):
        return "tool"
    if verb is not None and head.dep_ == "pobj" and verb.head.pos_ == "VERB" and verb.lower_ == "to":
        verb = verb.head  # "listening to Folklore"
    if verb is not None and verb.lower_ in ("at", "for") and verb.head.lemma_.lower() in WORK_AT_VERBS:
        return "organization"
    if (verb is not None and head.dep_ == "pobj" and verb.lower_ in PLACE_PREPOSITIONS
            and verb.head.pos_ in ("VERB", "AUX") and verb.head.lemma_.lower() in PLACE_VERBS):
        return "place"
    if (verb is not None and head.dep_ == "pobj" and verb.lower_ in ("in", "to") and span.label_ != "ORG"
            and (verb.head.lemma_ == "be" or (verb.head.pos_ == "NOUN" and verb.head.lemma_.lower() in TRIP_NOUNS))):
        return "place"  # "I was in Kraków", "a vacation to Crete": no one is "in" a person
    if verb is not None and head.dep_ == "pobj" and (verb.head.lemma_.lower(), verb.lower_) in ORGANIZATION_VERBS:
        return "organization"  # "I bank with Monzo"
    if (verb is not None and head.dep_ == "dobj" and (verb.lemma_.lower(), "") in ORGANIZATION_VERBS
            and (span.label_ != "PERSON" or not any(c.dep_ == "prep" for c in verb.children
                                                    if c.lower_ in ("for", "on", "at")))):
        return "organization"  # "I joined Stripe", "joined Quintela in March"; "joined Anna for lunch" is a person
    if verb is not None and verb.pos_ == "VERB":
        lemma = verb.lemma_.lower()
        if lemma in WORK_VERBS and head.dep_ == "dobj" and span.label_ not in ("ORG", "GPE", "LOC", "FAC"):
            return "work"
        if lemma == "listen":
            return None if span.label_ == "PERSON" else "work"  # an album, a song; a singer stays a person
        if lemma in AUTHOR_VERBS and head.dep_ == "dobj" and span.label_ != "WORK_OF_ART":
            return "person" if len(span) == 1 else "work"
    return None


def _quoted(span: Span) -> bool:
    """Whether the name is set in quotation marks, its article with it: a title ("Finding Home" is a script; "The
    Alchemist")."""
    doc = span.doc
    start = span.start - 1 if span.start > 0 and doc[span.start - 1].lower_ in ("the", "a", "an") else span.start
    end = span.end + 1 if span.end < len(doc) and doc[span.end].text in (".", ",", "!", "?") else span.end
    return start > 0 and end < len(doc) and doc[start - 1].is_quote and doc[end].is_quote  # '"Heat," no contest'


def _past_a_greeting(span: Span) -> Span | None:
    """The name a greeting opens ("Congrats Joanna", "Yep Jon": the small model reads both words as one PERSON), or
    None when the span opens with no greeting word."""
    i = 0
    while i < len(span) - 1 and (span[i].lower_ in GREETING_WORDS or span[i].pos_ == "INTJ"):
        i += 1
    return span[i:] if i else None


def _whole(span: Span) -> Span:
    """The name as the text writes it: a span the pipeline cut at punctuation inside a word ("CS" of "CS:GO") runs
    on over each joiner with no space on either side and the word after it (and back over one before it)."""
    doc = span.doc
    start, end = span.start, span.end
    while (start > 1 and doc[start - 1].text in NAME_JOINERS and not doc[start - 1].whitespace_
           and not doc[start - 2].whitespace_ and doc[start - 2].text[:1].isalnum()):
        start -= 2
    while (end + 1 < len(doc) and doc[end].text in NAME_JOINERS and not doc[end - 1].whitespace_
           and not doc[end].whitespace_ and doc[end + 1].text[:1].isalnum()):
        end += 2
    return span if (start, end) == (span.start, span.end) else doc[start:end]


def _trimmed(span: Span) -> Span:
    """The name without the words the pipeline ran on into: it ends before a dash, colon or bracket with a space
    beside it ("the Pomodoro Technique - 25 minutes") and at its last capitalised word or number, before a
    possessive."""
    for i, token in enumerate(span):
        if i and token.is_punct and token.text not in ".'’" and (token.whitespace_ or span[i - 1].whitespace_):
            span = span[:i]
            break
    while len(span) > 1 and (span[-1].is_punct or span[-1].text[:1].islower() or span[-1].tag_ == "POS"):
        span = span[:-1]  # (and "'s": "Ed Sheeran's new album" names Ed Sheeran)
    return span


def _an_exclamation(span: Span) -> bool:
    """Whether a one-word candidate that opens its sentence, with punctuation or nothing after it, is an exclamation
    or a describing word capitalised only by its place ("Awesome, Priyanka!", "Woohoo!", "Incredible, ..."): tagged
    an interjection, an adjective or an adverb, a word the lemmatizer knows as an adjective or an adverb and not as
    a noun, or a word said before whom the rest of the sentence only addresses ("Woohoo, thanks Nate!": one is not
    addressed twice). A name addressed there ("Ramona, have you ...") is none of these."""
    if len(span) != 1:
        return False
    token, doc = span[0], span.doc
    opening = next((t for t in token.sent if not (t.is_punct or t.is_space)), None)
    if opening is None or opening.i != token.i or (token.i + 1 < len(doc) and not doc[token.i + 1].is_punct):
        return False
    word = token.lower_
    rest = [t for t in doc[token.i + 1:token.sent.end] if not t.is_punct]
    addressed = bool(rest) and rest[-1].pos_ == "PROPN" and all(
        t.pos_ == "PROPN" or t.lower_ in GREETING_WORDS for t in rest)
    return (token.tag_ == "UH" or token.pos_ in ("INTJ", "ADJ", "ADV") or addressed
            or (word in _lemma_index("adj") | _lemma_index("adv") and word not in _lemma_index("noun")))


def _first_conjunct(head: Token) -> Token:
    """The first of the names listed with "and" / "or" (a later one takes its role in the sentence)."""
    while head.dep_ == "conj" and head.head.pos_ in ("PROPN", "NOUN") and head.head.i != head.i:
        head = head.head
    return head


def _software_verb(head: Token, verb: Token) -> bool:
    """Whether the name is what a verb of running software takes: its object, or its "on" / "to" / "with"."""
    if head.dep_ == "dobj":
        return verb.pos_ == "VERB" and (verb.lemma_.lower(), "") in SOFTWARE_VERBS
    return verb.dep_ == "prep" and (verb.head.lemma_.lower(), verb.lower_) in SOFTWARE_VERBS


def _kind_set_beside(head: Token) -> str | None:
    """The type of a kind noun set beside the name ("Rex, my dog"; "Monzo, the banking app") or equal to it ("Quintela
    is a fintech company", "Marta is my sister"), or None."""
    nouns = [c for c in head.children if c.dep_ == "appos"]
    if head.dep_ == "nsubj" and head.head.lemma_ == "be":
        nouns += [c for c in head.head.children if c.dep_ == "attr"]
    for noun in nouns:
        lemma = noun.lemma_.lower()
        for kind, words in (("animal", ANIMAL_NOUNS), ("organization", ORGANIZATION_NOUNS), ("tool", SOFTWARE_NOUNS),
                            ("person", PERSON_NOUNS), ("place", PLACE_NOUNS)):
            if lemma in words:
                return kind
    return None


def _in_a_persons_role(span: Span) -> bool:
    """Whether a name is said where only a person goes: after a person's noun ("my sister Ana", "someone named
    Dorian", "my friends Josh and Mark"), owning a kin word ("Tomasz's wife"), listed with a person pronoun ("Jasper
    and I") or, labelled a person, with another name so labelled ("Bach and Mozart"), followed by "he" / "she",
    addressed at a sentence's end ("Sounds great, Ev!"), the maker of a work ("a novel by Ursula Le Guin"), the
    subject of saying, thinking or writing ("Marta said"), the object of meeting or calling ("met Oskar"), or whom
    something is done with or told to ("hiking with Jasper")."""
    head = span.root
    doc = span.doc
    if any(t.lower_ in ("i", "me", "you", "he", "she", "we") for t in head.conjuncts):
        return True
    if span.label_ == "PERSON" and any(t.ent_type_ == "PERSON" for t in head.conjuncts):
        return True  # "like Bach and Mozart": a list the model reads as people throughout
    after = [t for t in doc[span.end:span.end + 2] if t.lower_ != ","]
    if after and after[0].lower_ in ("he", "she", "who") and span.end < len(doc) and doc[span.end].lower_ == ",":
        return True  # "It was Matt Patterson, he is so talented!"
    if (span.start > 0 and doc[span.start - 1].lower_ == "," and span.label_ not in _THING_LABELS
            and all(t.is_punct for t in doc[span.end:span.sent.end])):
        return True  # "Sounds amazing, Ev!": whom the sentence is said to
    opening = doc[span.sent.start:span.start]
    addressed = span.end == len(doc) or doc[span.end].is_punct
    if not opening and len(span) == 1 and addressed and _says_you(span):
        return True  # "Ramona, have you ever been ...": whom the sentence opens by calling
    if addressed and opening and all(t.lower_ in GREETING_WORDS or t.pos_ == "INTJ" or t.is_punct for t in opening):
        # "Hey Priyanka, ...": the one greeted (not "Wow, Chicago sounds great"); after an exclamation only, a
        # place's or a firm's label stands ("Oh, Italy!": exclaimed, not greeted)
        return span.label_ not in _THING_LABELS or any(t.lower_ in ADDRESSING_WORDS for t in opening)
    first = _first_conjunct(head)
    listed = [span, doc[first.left_edge.i:first.i + 1]] if first.i != head.i else [span]
    if any((before := _word_before(s)) is not None and before.lemma_.lower() in PERSON_NOUNS for s in listed):
        return True  # the noun before the name, or before the first name of its list
    if head.dep_ == "poss" and head.head.lemma_.lower() in PERSON_NOUNS:
        return True
    if first.dep_ == "appos":
        first = first.head  # "One of the residents, Cindy, wrote it": Cindy wrote
    if first.dep_ == "nsubj":
        attributes = [c for c in first.head.children if c.dep_ == "attr"] if first.head.lemma_ == "be" else []
        if any(a.lemma_.lower() in PERSON_NOUNS for a in attributes):
            return True  # "Orla is our designer"
        return span.label_ != "ORG" and first.head.lemma_.lower() in PERSON_SUBJECT_VERBS
    if first.dep_ == "dobj":
        return span.label_ not in _THING_LABELS and first.head.lemma_.lower() in PERSON_OBJECT_VERBS
    preposition, verb = first.head, first.head.head
    if first.dep_ == "pobj" and preposition.lower_ == "by":
        made = verb.lemma_.lower() in MADE_NOUNS or verb.ent_type_ == "WORK_OF_ART" or verb.tag_ == "VBN"
        return made and span.label_ not in ("GPE", "LOC", "FAC")
    if first.dep_ == "pobj" and preposition.lower_ == "with" and verb.pos_ == "NOUN":
        # "the last photo with Karlie", "our lunch with Marguerite": a place's label does not outvote it
        return span.label_ not in _ORGANIZATION_LABELS and verb.lemma_.lower() in WITH_PERSON_NOUNS
    if first.dep_ != "pobj" or verb.pos_ != "VERB":
        return False
    if preposition.lower_ == "with":  # one hikes "with" no place: a place label of a first name does not outvote it
        return span.label_ not in _ORGANIZATION_LABELS and verb.lemma_.lower() in WITH_PERSON_VERBS
    return preposition.lower_ == "to" and span.label_ not in _THING_LABELS and verb.lemma_.lower() in TO_PERSON_VERBS


def _says_you(span: Span) -> bool:
    """Whether the words after a name and its comma speak to "you" as their subject ("Ramona, have you ...")."""
    doc = span.doc
    return (span.end < len(doc) and doc[span.end].text == ","
            and any(t.lower_ == "you" and t.dep_ == "nsubj" for t in doc[span.end:span.sent.end]))


def _conjunct_type(span: Span) -> str | None:
    """A name the pipeline labels a person, joined by "and" / "or" only to places, is a place ("Porto and Lisbon are
    my favourite cities": the small model labels a city it knows less well a person when no verb says otherwise);
    one list is of one kind. None otherwise: people listed with places stay what their labels say."""
    if TYPE_OF_LABEL.get(span.label_) != "person":
        return None
    partners = [t for t in span.root.conjuncts if t.ent_type_ and t.text[:1].isupper()]
    if partners and all(TYPE_OF_LABEL.get(t.ent_type_) == "place" for t in partners):
        return "place"
    return None


def _beside_an_organization_noun(head: Token) -> bool:
    """ "the Monzo app": the name modifies an organisation's noun."""
    return head.dep_ == "compound" and head.head.lemma_.lower() in ORGANIZATION_NOUNS


def _word_before(span: Span) -> Token | None:
    """The word the name follows, past "named", "called" and a comma: "a cockatiel named Kiwi" gives cockatiel."""
    i = span.start - 1
    doc = span.doc
    while i >= 0 and doc[i].lower_ in ("named", "called", ",", "the"):
        i -= 1
    return doc[i] if i >= 0 else None


# Speakers that are programs, not people: their turns name products and headings rather than the user's world.
PROGRAM_SPEAKERS = frozenset({"assistant", "ai", "bot", "system", "model", "chatgpt", "claude", "gpt", "gemini",
                              "copilot", "tool"})

# A character typed for an apostrophe between two letters ("We`ve", "don´t"): one character, so offsets hold.
_APOSTROPHE_STAND_IN = re.compile(r"(?<=[A-Za-z])[`´](?=[A-Za-z])")
# Characters a name does not end in, though the tokenizer left them on its last word ('Sounds"-').
_NOT_A_NAMES_END = "\"'“”‘’-–—:;,"
# Punctuation that joins the parts of one name when no space is beside it: "CS:GO", "AT&T", "Node.js", "Spider-Man".
NAME_JOINERS = frozenset(":&.-/+'’")

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
