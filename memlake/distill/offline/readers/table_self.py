"""The reader table's rows for the user's own slots (issue 37): where the user lives and a move made, the employer and
the job title, a taste come to. Each row is data: dependency patterns over the parse (`readers/table.py` builds and
matches them), mapped to the slot a value fills; `write` is the code a table cannot say (what is no place, no
organisation, no title, a stay or another's home), handing each value to the slot's writer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memlake.distill.dates import WEEKDAYS, human
from memlake.distill.offline.readers.preferences import preference_tags
from memlake.distill.offline.readers.table_patterns import (
    _NAME,
    Pattern,
    Reading,
    _child,
    _mine,
    _name,
    _prep,
    _rest_of_clause,
    _subject,
    _verb,
)
from memlake.distill.offline.readers.table_work import (
    add_employer,
    add_home_city,
    add_move,
    guess_home_from_work,
    home_until,
    in_a_practice_frame,
    told_as_news,
)
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import third_person
from memlake.distill.offline.vocabulary import FOR_A_WHILE, ROLE_NOUNS, TEMPORARY, WHOLE_ROLE

if TYPE_CHECKING:
    from spacy.tokens import Token

# Homes one moves into or gets the keys to.
HOME_NOUNS = ["flat", "apartment", "house", "home", "place", "condo", "studio", "loft", "cottage", "townhouse",
              "bungalow", "terrace"]
_MOVE = ["move", "relocate", "transfer"]


def _in_a_place(prep: str) -> dict[str, Any]:
    return _child(prep, "value", DEP="pobj", **_NAME)


def _place_of(home: str) -> Pattern:
    """The city a home is in: "a flat in Bristol"."""
    return [_prep(home, "in_city", "in"), _in_a_place("in_city")]


def _place_of_a_home(home: str) -> Pattern:
    """A home noun and the city it is in: "a flat in Bristol", "the Manchester flat"."""
    return [_child(home, "home", DEP="pobj", LEMMA={"IN": HOME_NOUNS}), *_place_of("home")]


def _home_named_before(home: str) -> Pattern:
    return [_child(home, "home", DEP="pobj", LEMMA={"IN": HOME_NOUNS}),
            _child("home", "value", DEP="compound", **_NAME)]


def _move_noun(**attrs: Any) -> dict[str, Any]:
    return {"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": ["move", "relocation"]}, "POS": "NOUN", **attrs}}


def _owner() -> dict[str, Any]:
    """The user's move ("my", "our") or the one the chat is about ("the"); not "a move", "my sister's move"."""
    return _child("anchor", "owner", DEP={"IN": ["det", "poss"]}, LOWER={"IN": ["the", "my", "our"]})


# --- work: the employer and the job title (readers/table_work.py writes them) ---
# Verbs of a start somewhere, and what one is taken on into ("joined Globex as ...", "took a post as ...").
_STARTS = ["start", "begin", "join", "take", "accept", "land", "get", "find", "hire", "employ", "step"]
_ROLES = ["job", "role", "position", "post"]
_JOBS = ["job", "role", "position", "post", "work", "offer"]
# A title ends on a role noun (the writer keeps only a whole role of the vocabulary: "head of design", "tech lead"),
# so a sentence with none is not parsed for a title.
_TITLE = {"POS": {"IN": ["NOUN", "PROPN"]}, "LOWER": {"IN": sorted({r.split()[-1].split("-")[-1] for r in ROLE_NOUNS})}}
_ATS = ("at", "with", "for")
_CHANGES = ["go", "move", "switch", "change", "shift", "transition"]
_TITLE_WORDS = ["title", "role", "position", "job"]


def _as_title(left: str) -> Pattern:
    return [_prep(left, "as", "as"), _child("as", "title", DEP="pobj", **_TITLE)]


def _to_title(left: str) -> Pattern:
    return [_prep(left, "to", "to", "into"), _child("to", "title", DEP="pobj", **_TITLE)]


def _me(left: str, dep: str) -> dict[str, Any]:
    """The user as the one given a job ("they promoted me")."""
    return _child(left, "me", DEP=dep, LOWER="me")


def _me_below(left: str) -> dict[str, Any]:
    """The user somewhere under the verb, where the small model hangs "me" of "made me tech lead"."""
    return {"LEFT_ID": left, "REL_OP": ">>", "RIGHT_ID": "me", "RIGHT_ATTRS": {"LOWER": "me"}}


def _at_employer(left: str, *words: str) -> Pattern:
    return [_prep(left, "at", *(words or ("at", "with"))), _child("at", "employer", DEP="pobj", **_NAME)]


# A team one works in ("the platform team at Hooli"); one played in is no job ("the rowing team at Harvard").
_TEAMS = ["team", "squad", "group", "department", "division", "unit", "org", "organization", "practice"]
_HOBBY_TEAMS = frozenset("""football soccer rugby hockey basketball baseball softball volleyball cricket rowing swim
    swimming track cross-country debate chess quiz trivia bowling cheer cheerleading dance running cycling climbing
    tennis golf netball lacrosse handball badminton ski skiing varsity church choir band book reading hiking
    volunteer volunteering pub sport sports intramural fantasy darts poker gaming esports alumni parent parents pta
    fan""".split())  # noqa: SIM905


def _team(left: str, dep: str) -> dict[str, Any]:
    return _child(left, "team", DEP=dep, LEMMA={"IN": _TEAMS})


def _a_job(*verbs: str) -> list[dict[str, Any]]:
    return [_verb(*verbs), _child("anchor", "job", DEP="dobj", LEMMA={"IN": _JOBS})]


TABLE: tuple[Reading, ...] = (
    # --- home_city (issue 37, s11-home): where the user lives, and a move made ---
    # "I live in Porto these days and teach piano", "we've lived in Leeds since 2019", "we're based in Lisbon", "I'm
    # renting in Porto", "I rent a flat in Oslo", "I'm based out of Prague"
    Reading("lives in", "home_city", (
        [_verb("live", "reside", "base", "rent"), _prep("anchor", "in", "in"), _in_a_place("in")],
        [_verb("base"), _prep("anchor", "out", "out"), _prep("out", "of", "of"), _in_a_place("of")],
        [_verb("rent"), _child("anchor", "home", DEP="dobj", LEMMA={"IN": HOME_NOUNS}), *_place_of("home")],
        # "Lisbon, where I live, is lovely", "Porto is where I live now"
        [_verb("live"), _child("anchor", "where", LOWER="where"),
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "value", "RIGHT_ATTRS": _NAME}],
        [_verb("live"), _child("anchor", "where", LOWER="where"),
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "is", "RIGHT_ATTRS": {"LEMMA": "be"}},
         _child("is", "value", DEP="nsubj", **_NAME)],
        # "We call Lisbon home now", "I've called Oslo home for years"
        [_verb("call"), _child("anchor", "value", DEP="dobj", **_NAME), _child("anchor", "home", LOWER="home")],
        # (the city as a compound of "home": said with how long or "now", not "I call Sam home every Sunday")
        [_verb("call"), _child("anchor", "home", LOWER="home"), _child("home", "value", DEP="compound", **_NAME),
         _prep("anchor", "span", "for", "since")],
        [_verb("call"), _child("anchor", "home", LOWER="home"), _child("home", "value", DEP="compound", **_NAME),
         _child("anchor", "now", LOWER="now")],
        # "I'm a Porto resident now", "we're officially Warsaw residents", "I've been a Prague local for ages"
        [_verb("be"), _child("anchor", "resident", DEP="attr", LEMMA={"IN": ["resident", "local"]}),
         _child("resident", "value", DEP="compound", **_NAME)],
        # "I've been in Oslo for two years now", "we've been in Porto since 2019" (a stay of days: `TEMPORARY`)
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "be", "TAG": "VBN"}}, _prep("anchor", "in", "in"),
         _in_a_place("in"), _prep("anchor", "span", "for", "since"),
         _child("span", "when", LOWER={"NOT_IN": [*WEEKDAYS, "week", "weekend", "yesterday"]})],
    )),
    # Home said as the user's ("my", "our", or "home" opening the sentence): "Porto is our home now", "my home is in
    # Prague", "Home is Oslo these days", "my new address is in Bristol", "our flat in Porto is tiny", "hello from our
    # new flat in Porto!"
    Reading("my home is", "home_city", (
        [_verb("be"), _child("anchor", "value", DEP="nsubj", **_NAME),
         _child("anchor", "home", DEP="attr", LEMMA="home"), _mine("home")],
        [_verb("be"), _child("anchor", "home", DEP="nsubj", LEMMA={"IN": ["home", "address"]}),
         _mine("home"), _prep("anchor", "in", "in"),
         _in_a_place("in")],
        [_verb("be"), _child("anchor", "owner", DEP="nsubj", LOWER="home", IS_SENT_START=True),
         _child("anchor", "value", DEP="attr", **_NAME)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": HOME_NOUNS}, "DEP": {"IN": ["nsubj", "pobj"]}}},
         _mine("anchor"), *_place_of("anchor")],
    )),
    # "We've settled in Dublin now", "I've finally settled down in Porto", "We've made Lisbon our home", "we bought a
    # house in Porto"
    Reading("settled in", "home_city", (
        [_verb("settle"), _prep("anchor", "in", "in"), _in_a_place("in")],
        [_verb("make"), _child("anchor", "home", LEMMA="home"), _child("home", "value", DEP="nsubj", **_NAME),
         _mine("home")],
        [_verb("buy", "purchase", "get"), _child("anchor", "home", DEP="dobj", LEMMA={"IN": HOME_NOUNS}),
         *_place_of("home")],
        [_verb("buy", "purchase", "get"), _child("anchor", "home", DEP="dobj", LEMMA={"IN": HOME_NOUNS}),
         _prep("anchor", "in", "in"), _in_a_place("in")],
    ), change=True),
    # "I moved to Leeds last spring and ...", "since I moved up to Glasgow", "we relocated back to Galway", "I got
    # transferred to Copenhagen"
    Reading("moved to", "home_city", (
        [_verb(*_MOVE), _prep("anchor", "to", "to"), _child("to", "value", DEP="pobj", **_NAME)],
        [_verb(*_MOVE), _child("anchor", "particle", DEP={"IN": ["prt", "advmod"]}),
         _prep("particle", "to", "to"), _child("to", "value", DEP="pobj", **_NAME)],
    ), change=True),
    # "we've moved into a place in York", "I've settled into the Leeds flat"
    Reading("moved into a home", "home_city", (
        [_verb("move", "settle"), _prep("anchor", "into", "into", "in"), *_place_of_a_home("into")],
        [_verb("move", "settle"), _prep("anchor", "into", "into", "in"), *_home_named_before("into")],
        [_verb("move", "settle"), _prep("anchor", "into", "into"),
         _child("into", "home", DEP="pobj", LEMMA={"IN": HOME_NOUNS}), _prep("anchor", "in_city", "in"),
         _child("in_city", "value", DEP="pobj", **_NAME)],
    ), change=True),
    # "we got the keys to a flat in Bristol", "picked up the keys to our new house in Cardiff"
    Reading("keys to a home", "home_city", (
        [_verb("get", "pick", "collect", "receive"), _child("anchor", "keys", DEP="dobj", LEMMA="key"),
         _prep("anchor", "to", "to", "for"), *_place_of_a_home("to")],
        [_verb("get", "pick", "collect", "receive"), _child("anchor", "keys", DEP="dobj", LEMMA="key"),
         _prep("keys", "to", "to", "for"), *_place_of_a_home("to")],
    ), change=True),
    # "we finally made the move to Lisbon", "our move to Denver happened last week", "the move to Bristol is done",
    # "after the big move to Cork we ...", "the relocation to Ghent went fine": the noun says it, whatever the verb
    Reading("the move to", "home_city", (
        [_move_noun(), _owner(), _prep("anchor", "to", "to"), _child("to", "value", DEP="pobj", **_NAME)],
        # (the parse may hang "to <place>" on the verb the move is the object of: "made the move | to Prague")
        [_move_noun(DEP="dobj"), _owner(), {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "verb",
                                            "RIGHT_ATTRS": {"POS": "VERB"}},
         _prep("verb", "to", "to"), _child("to", "value", DEP="pobj", **_NAME)],
        # (... or take the place for a verb, its "to" for an infinitive's: "made the move to Reykjavik")
        [_move_noun(), _owner(), _child("anchor", "value", DEP="acl", **_NAME), _child("value", "to", DEP="aux",
                                                                                      LOWER="to")],
    ), change=True),
    # --- work (s11-employer): each row reads the employer or the title; a clause saying both matches one of each.
    # A start: "I started at Globex", "I've joined Ocado as head of logistics", "took a post as lead analyst with
    # Barclays", "I was hired as a designer at Hooli", "began work as a junior architect with Foster Partners"
    Reading("started as", "job_title", (
        [_verb(*_STARTS), *_as_title("anchor")],
        [*_a_job(*_STARTS), *_as_title("job")],
        # "I've been promoted to engineering manager", "I became a data scientist", "I've been made tech lead"
        [_verb("promote", "bump"), _prep("anchor", "to", "to"), _child("to", "title", DEP="pobj", **_TITLE)],
        [_verb("bump"), _child("anchor", "up", DEP="prt"), _prep("up", "to", "to"),
         _child("to", "title", DEP="pobj", **_TITLE)],
        [_verb("become"), _child("anchor", "title", DEP="attr", **_TITLE)],
        [_verb("make", "name", "appoint"), _child("anchor", "title", DEP="oprd", **_TITLE)],
        # a role named by its title: "I got the tech lead job", "I've taken on the tech lead role", "I switched to a
        # designer role", "I stepped into the team lead position"
        [_verb("get", "land", "accept", "take", "assume", "find"),
         _child("anchor", "job", DEP="dobj", LEMMA={"IN": _ROLES}), _child("job", "title", DEP="compound", **_TITLE)],
        [_verb("switch", "step", "move", "transition"), _prep("anchor", "to", "to", "into"),
         _child("to", "job", DEP="pobj", LEMMA={"IN": _ROLES}), _child("job", "title", DEP="compound", **_TITLE)],
        # from one title to another: "I went from backend engineer to engineering manager", "my role went from
        # designer to tech lead", "I've transitioned to data scientist", "my title changed to staff engineer"
        [_verb(*_CHANGES), _prep("anchor", "from", "from"), *_to_title("from")],
        [_verb(*_CHANGES), _prep("anchor", "from", "from"), *_to_title("anchor")],
        [_verb("transition"), *_to_title("anchor")],
        [_verb(*_CHANGES), _child("anchor", "what", DEP="nsubj", LEMMA={"IN": _TITLE_WORDS}), _mine("what"),
         *_to_title("anchor")],
        [_verb(*_CHANGES), _child("anchor", "what", DEP="nsubj", LEMMA={"IN": _TITLE_WORDS}), _mine("what"),
         _prep("anchor", "from", "from"), *_to_title("from")],
        # the user given it: "they promoted me to tech lead", "they made me the engineering manager", "I got the
        # promotion to product manager"
        [_verb("promote", "bump"), _me("anchor", "dobj"), *_to_title("anchor")],
        # (a title whose first word the small model takes for an infinitive's verb: "promoted to backend engineer")
        [_verb("promote"), _child("anchor", "first", DEP="xcomp", TAG="VB"),
         _child("first", "to", DEP="aux", LOWER="to"), _child("first", "title", DEP="dobj", **_TITLE)],
        [_verb("make", "name", "appoint"), _me("anchor", "dobj"), _child("anchor", "title", DEP="oprd", **_TITLE)],
        [_verb("make", "name", "appoint"), _child("anchor", "title", DEP={"IN": ["ccomp", "dobj"]}, **_TITLE),
         _me_below("anchor")],
        [_verb("make", "name", "appoint"), _child("anchor", "first", DEP="ccomp", TAG="VB"),
         _child("first", "title", DEP="dobj", **_TITLE), _me_below("anchor")],
        [_verb("get", "receive", "earn", "accept"), _child("anchor", "job", DEP="dobj", LEMMA="promotion"),
         *_to_title("job")],
        [_verb("give", "hand"), _me("anchor", "dative"), _child("anchor", "job", DEP="dobj", LEMMA={"IN": _ROLES}),
         _child("job", "title", DEP="compound", **_TITLE)],
    ), change=True),
    # A title the user has, or is taking up now: "I'm a backend engineer", "I'm the new tech lead", "I've been a nurse
    # for ten years", "my job title is site reliability engineer", "tech lead is my title now", "I now hold the title
    # of tech lead", "I'm starting as a designer on Monday", "I'm moving into a product manager role", "officially a
    # staff engineer as of Monday!"
    Reading("is a", "job_title", (
        [_verb("be"), _child("anchor", "title", DEP="attr", **_TITLE)],
        [_verb("be"), _child("anchor", "what", DEP="nsubj", LEMMA={"IN": _TITLE_WORDS}), _mine("what"),
         _child("anchor", "title", DEP="attr", **_TITLE)],
        [_verb("be"), _child("anchor", "title", DEP="nsubj", **_TITLE),
         _child("anchor", "what", DEP="attr", LEMMA={"IN": _TITLE_WORDS}), _mine("what")],
        [_verb("hold", "have"), _child("anchor", "what", DEP="dobj", LEMMA={"IN": _TITLE_WORDS}),
         _prep("what", "of", "of"), _child("of", "title", DEP="pobj", **_TITLE)],
        [_verb("start", "begin"), *_as_title("anchor")],
        [_verb("move", "step", "switch", "transition"), _prep("anchor", "to", "into", "to"),
         _child("to", "job", DEP="pobj", LEMMA={"IN": _ROLES}), _child("job", "title", DEP="compound", **_TITLE)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"DEP": "ROOT", **_TITLE}},
         _child("anchor", "now", DEP="advmod", LOWER={"IN": ["officially", "finally", "now"]})],
    )),
    Reading("started at", "employer", (
        [_verb("start", "begin"), *_at_employer("anchor")],
        [_verb("join"), _child("anchor", "employer", DEP="dobj", **_NAME)],
        [_verb("hire", "employ"), _child("anchor", "by", DEP={"IN": ["agent", "prep"]}, LOWER={"IN": ["by", "at"]}),
         _child("by", "employer", DEP="pobj", **_NAME)],
        [*_a_job(*_STARTS), *_at_employer("job")],
        [*_a_job(*_STARTS), *_at_employer("anchor")],
        [_verb(*_STARTS), *_as_title("anchor"), *_at_employer("title")],
        [*_a_job(*_STARTS), *_as_title("job"), *_at_employer("title")],
        [*_a_job(*_STARTS), *_as_title("anchor"), *_at_employer("title")],
        # "I joined the payments team at Pied Piper"
        [_verb("join"), _team("anchor", "dobj"), *_at_employer("anchor", "at", "with")],
        [_verb("join"), _team("anchor", "dobj"), *_at_employer("team", "at", "with")],
    ), change=True),
    # "I work as a nurse", "I'm employed as a security analyst", "I have a new job as a paramedic"
    Reading("works as", "job_title", ([_verb("work", "employ"), *_as_title("anchor")],
                                      [*_a_job("have"), *_as_title("job")])),
    # The job one has: "I work at Globex", "I'm employed by Initech", "I've been working for Hooli for two years"
    Reading("works at", "employer", (
        [_verb("work"), *_at_employer("anchor", "at", "for", "with")],
        [_verb("work"), *_as_title("anchor"), *_at_employer("title", "at", "for", "with")],
        [_verb("employ"), _child("anchor", "by", DEP={"IN": ["agent", "prep"]}, LOWER={"IN": ["by", "at"]}),
         _child("by", "employer", DEP="pobj", **_NAME)],
        # "I contract for Globex", "I'm freelancing for Hooli", "I do consulting work for Initech"
        [_verb("contract", "freelance", "consult"), *_at_employer("anchor", "for", "at")],
        # "I'm a nurse at the Royal Infirmary", "At Globex, I'm a backend engineer"
        [_verb("be"), _child("anchor", "title", DEP="attr", **_TITLE), *_at_employer("title", *_ATS)],
        [_verb("be"), _child("anchor", "title", DEP="attr", **_TITLE), *_at_employer("anchor", "at")],
        # a team at a place: "I'm on the platform team at Soylent Foods", "I lead the design team at Initech", "I work
        # in the data group at Globex", "I'm on Globex's platform team"
        [_verb("be", "work"), _prep("anchor", "on", "on", "in"), _team("on", "pobj"), *_at_employer("team", *_ATS)],
        [_verb("be", "work"), _prep("anchor", "on", "on", "in"), _team("on", "pobj"), *_at_employer("anchor", *_ATS)],
        [_verb("be"), _prep("anchor", "on", "on", "in"), _team("on", "pobj"),
         _child("team", "employer", DEP="poss", **_NAME)],
        [_verb("lead", "manage", "run", "head"), _team("anchor", "dobj"), *_at_employer("anchor", *_ATS)],
        [_verb("lead", "manage", "run", "head"), _team("anchor", "dobj"), *_at_employer("team", *_ATS)],
    )),
)

_TASTE_VERBS = ["like", "love", "enjoy", "adore", "prefer"]
_ROUND = ["round", "around"]
# A taste come to ("I've started to like running", "I have grown to love jazz").
_COME_TO = ["start", "begin", "grow", "learn", "come"]

TASTES: tuple[Reading, ...] = (
    # "I've come round to olives", "I came around to mushrooms"
    Reading("came round to", None, (
        [_verb("come"), _child("anchor", "round", DEP={"IN": ["advmod", "prt", "prep"]}, LOWER={"IN": _ROUND}),
         _prep("round", "to", "to"), _child("to", "value", DEP="pobj", POS={"IN": ["NOUN", "PROPN"]})],
        [_verb("come"), _child("anchor", "round", DEP={"IN": ["advmod", "prt"]}, LOWER={"IN": _ROUND}),
         _prep("anchor", "to", "to"), _child("to", "value", DEP="pobj", POS={"IN": ["NOUN", "PROPN"]})],
        # (a rare noun after "to" that the small model takes for an infinitive: "come round to coriander")
        [_verb("come"), _child("anchor", "round", DEP={"IN": ["advmod", "prt"]}, LOWER={"IN": _ROUND}),
         _child("anchor", "value", DEP={"IN": ["advcl", "xcomp"]}), _child("value", "to", DEP="aux", LOWER="to")],
    ), taste="likes"),
    # "I've started to like running", "I have grown to love jazz"
    Reading("came to like", None, (
        [_verb(*_COME_TO), _child("anchor", "liking", DEP="xcomp", LEMMA={"IN": _TASTE_VERBS}),
         _child("liking", "value", DEP="dobj", POS={"IN": ["NOUN", "PROPN"]})],
        [_verb(*_COME_TO), _child("anchor", "value", DEP="xcomp", TAG="VBG"),
         _child("value", "liking", LEMMA={"IN": _TASTE_VERBS})],
    ), taste="likes"),
    # "these days I'd rather have green tea", "I would rather take the train": what the user prefers now
    Reading("would rather", None, (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"POS": "VERB"}}, _child("anchor", "would", DEP="aux",
                                                                       LOWER={"IN": ["would", "'d", "d"]}),
         _child("anchor", "rather", DEP="advmod", LOWER="rather"),
         _child("anchor", "value", DEP="dobj", POS={"IN": ["NOUN", "PROPN"]})],
    ), taste="prefers"),
    # "Honestly I can't stand olives", "I cannot stand loud bars"
    Reading("can't stand", None, (
        [_verb("stand"), _child("anchor", "can", DEP="aux", LEMMA="can"), _child("anchor", "not", DEP="neg"),
         _child("anchor", "value", DEP="dobj", POS={"IN": ["NOUN", "PROPN"]})],
    ), taste="dislikes"),
)

# --- events of the user's working life: leaving an employer, interviewing with one ---
EVENTS: tuple[Reading, ...] = (
    # "I left Initech last spring", "I quit Hooli in March"
    Reading("left", None, ([_verb("leave", "quit"), _child("anchor", "employer", DEP="dobj", **_NAME)],), change=True,
            event="left"),
    # "I'm interviewing at Globex", "I have a final interview with Hooli on Friday"
    Reading("interview", None, (
        [_verb("interview"), *_at_employer("anchor", "at", "with")],
        [_verb("have"), _child("anchor", "job", DEP="dobj", LEMMA="interview"), *_at_employer("job", "at", "with")],
        [_verb("have"), _child("anchor", "job", DEP="dobj", LEMMA="interview"), *_at_employer("anchor", "at", "with")],
    ), event="interview"),
)

ROWS: tuple[Reading, ...] = (*TABLE, *TASTES, *EVENTS)

# Words of a title that say it is new to the user, not what it is ("their new office manager").
_NOT_OF_THE_TITLE = frozenset({"new", "first", "brand"})
_A_ROLE = re.compile(WHOLE_ROLE, re.IGNORECASE)  # the vocabulary's whole job title, matched whole


def write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """What a row of this module read, to its slot's writer."""
    if reading.taste:
        _write_taste(rule, reading.taste, nodes["value"])
        return
    if reading.event:
        _write_event(rule, reading, nodes)
        return
    if reading.slot == "home_city":
        if _moves_another(nodes["anchor"]):
            return
        if any(c.dep_ == "det" for c in nodes["value"].children):
            return  # "moved to the US", "living in the Netherlands": a country, no home city
        city, rest = _name(nodes["value"]), _rest_of_clause(nodes["anchor"], nodes["value"])
        if reading.change:
            add_move(rule, city, rest)  # (which leaves out a stay: "moved to Oslo for the summer")
        elif not TEMPORARY.match(rest) and not _other_than_new(nodes.get("home", nodes["anchor"])):
            until = home_until(rule, rest)
            add_home_city(rule, city, f"The user lives in {city}.", valid_until=until.day if until else None)
        return
    _write_work(rule, reading, nodes)


def _write_work(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """An employer (not a person, nor company kept: "I joined Sam for dinner") or a job's title (not "joined the choir
    as a tenor"); a start's employer holds from the past day its clause names ("in March 2018")."""
    anchor = nodes["anchor"]
    if _subject(anchor) == "we" or any(c.lemma_ in ("leave", "quit") for c in anchor.children if c.dep_ == "conj"):
        return  # "we work at ...": whose job?; "I started at Stanford in 2019 and left in 2022": a job that was
    if in_a_practice_frame(rule, _name(nodes["employer"]) if "employer" in nodes else None):
        return  # "Mock interview answer: I joined Globex as a marketing manager ..."
    if reading.slot == "job_title":
        head = nodes.get("title", anchor)  # (the anchor itself in a sentence of no verb)
        words = [nodes["first"], *_title(head)] if "first" in nodes else _title(head)
        title = " ".join(t.lower_ if t.i == t.sent.start and t.pos_ != "PROPN" else t.text for t in words)
        if not any(c.lower_ in ("a", "an") for c in head.children) and (
                (head.lower_ in _BARE_RISKY_ROLES and words[0] == head and (len(words) == 1 or _of_a_thing(head)))
                or any(
                    c.dep_ == "prep" and c.lower_ not in ("at", "with", "for", "of")
                    and not any(t.lemma_ in _TEAMS for t in c.children) for c in head.children)):
            return  # "I'm the owner of this bug", "I'm head now", "I'm the tester on this PR": a part, not a job
        if _A_ROLE.fullmatch(" ".join(t.text for t in words if t.i <= head.i)):
            add_job_title(rule, title)
        return
    if "team" in nodes and any(t.lower_ in _HOBBY_TEAMS for t in nodes["team"].lefts):
        return
    employer, asides = _name(nodes["employer"]), _asides(anchor, nodes)
    company = anchor.lemma_ == "join" and bool(asides & {"for", "at", "on"})
    if employer in rule.context.people or employer.split()[0] in rule.context.people or company:
        return
    rest = _rest_of_clause(anchor, nodes["employer"])
    if ("for" in asides) if reading.change else (FOR_A_WHILE.search(rest) or "on" in asides):
        return  # "I started at Globex for a trial"; "I'm working at Acme this week", "At Starbucks I work on my novel"
    since = rule.past_start_in(rest) if reading.change else None
    add_employer(rule, employer, valid_from=since, new=reading.change and told_as_news(anchor))
    guess_home_from_work(rule, nodes["employer"])


def _asides(anchor: Token, nodes: dict[str, Token]) -> set[str]:
    """The prepositions on the verb that the pattern did not name ("for a trial" in "I started at Globex for ...")."""
    return {c.lower_ for c in anchor.children if c.dep_ == "prep" and c not in nodes.values()}


# Words of an object's phrase that are no part of what is liked: "the", "to" and "like" in "to like running".
_NOT_OF_THE_THING = frozenset({"det", "aux", "intj", "punct"})


# Words that make a home another than where the user lives: "my second home", "our old flat in Leeds".
_ANOTHER_HOME = frozenset({"second", "old", "former", "previous", "holiday", "summer", "weekend", "childhood"})


def _other_than_new(home: Token) -> bool:
    """A home said as another than where the user lives (`_ANOTHER_HOME`). (A stay is said by the words after the
    city: "I'm living in Oslo for a month", `TEMPORARY`.)"""
    return any(c.dep_ in ("amod", "compound") and c.lower_ in _ANOTHER_HOME for c in home.children)


def _write_taste(rule: Rule, taste: str, value: Token) -> None:
    """A like or a dislike of what the value's phrase names, unless a reader read a taste of it in this message;
    it replaces what was kept of the sentence as said ("The user has come round to olives")."""
    kept = ("my", "our", "the") if taste == "prefers" else ("my", "our")  # ("would rather take the train")
    said = third_person("".join(t.text_with_ws for t in value.subtree
                                if t.dep_ not in _NOT_OF_THE_THING or t.lower_ in kept).strip())
    mine = [c for c in rule.found.candidates if rule.message_id in c.message_ids and said.lower() in c.value.lower()]
    if any(c.type == "preference" for c in mine):
        return
    rule.found.candidates[:] = [c for c in rule.found.candidates if c not in mine or "said" not in c.tags]
    tags = preference_tags(said)
    if taste in ("likes", "prefers"):
        rule.add("preference", said, f"The user {taste} {said}.", importance=0.6, tags=tags)
    else:
        rule.add("preference", f"dislikes {said}", f"The user doesn't like {said}.", importance=0.6,
                 tags=("dislike", *tags))

# What hangs on a title without being part of it: "..., not a nurse", "... and part-time tutor", "..., which I love".
_NOT_OF_A_TITLE = frozenset({"conj", "cc", "punct", "appos", "neg", "relcl", "acl", "advmod", "nsubj", "poss"})


def _title(token: Token) -> list[Token]:
    """A title's words as said, without its article, owner, "new", the place it is at and what is said beside it:
    "head of design", "office manager" (of "their new office manager at Initech"); a capital that only opens the
    sentence is none of the title's ("Tech lead is my title now")."""
    at = [t for c in token.children if (c.dep_ == "prep" and c.lower_ != "of") or c.dep_ in _NOT_OF_A_TITLE
          for t in c.subtree]
    return [t for t in token.subtree if t not in at and t.dep_ not in ("det", "poss", "punct")
            and t.pos_ != "PRON" and t.lower_ not in _NOT_OF_THE_TITLE]


# What one moves or rents that is the user's household or home, not something else ("relocated the meeting to
# Porto", "I rent a car in Lisbon").
_HOUSEHOLD = frozenset({"family", "household", "we", "us", "everyone", "kid", "child", "i", "me", *HOME_NOUNS})


def _moves_another(anchor: Token) -> bool:
    return anchor.lemma_ in (*_MOVE, "rent") and any(
        c.dep_ == "dobj" and c.lemma_.lower() not in _HOUSEHOLD for c in anchor.children)


def _of_a_thing(head: Token) -> bool:
    """A role of a particular thing ("owner of this bug"), not of a field ("head of logistics")."""
    return any(c.lower_ == "of" and any(g.dep_ in ("det", "poss") for o in c.children for g in o.children)
               for c in head.children)


# Roles that, alone and not "a ...", mostly say a part in something else.
_BARE_RISKY_ROLES = frozenset({"owner", "head", "lead", "director", "officer", "student", "coach", "writer", "editor"})


def add_job_title(rule: Rule, title: str) -> None:
    rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7, tags=("work",))

def _write_event(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """Leaving an employer, from the day the clause names; an interview at one, on the day it names."""
    org = _name(nodes["employer"])
    if org in rule.context.people or sum(c.dep_ in ("dobj", "dative") for c in nodes["anchor"].children) > 1:
        return  # "I left Sam a note": a person given something
    when = rule.date_in(_rest_of_clause(nodes["anchor"], nodes["employer"]))
    if reading.event == "left":
        day = when.day if when and when.precision == "day" else rule.said
        rule.add("event", f"left {org}", f"The user left {org}" + (f" around {human(when)}." if when else "."),
                 importance=0.7, tags=("work",), valid_from=day)
        if when:
            rule.key_date(when, f"The user left {org}.")
    elif nodes["anchor"].lemma_ == "interview":
        rule.add("event", f"interviewing at {org}", f"The user is interviewing at {org}.", importance=0.5,
                 tags=("work", "career"))
    else:
        suffix = f" on {human(when)}" if when and when.precision == "day" else ""
        rule.add("event", f"interview at {org}", f"The user has an interview at {org}{suffix}.", importance=0.5,
                 tags=("work", "career"), valid_from=when.day if suffix and when else None)
        if when:
            rule.key_date(when, f"The user has an interview at {org}.")
    rule.entity(org, "organization")
