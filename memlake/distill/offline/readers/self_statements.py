"""What the user says about themselves that no slot rule names (the slot rules run first; this reader takes only the
clauses they left without a fact): "I adopted a rescue cat called Miso last spring", "Every Sunday I call my grandma",
"My favourite colour is teal". A clause qualifies when its subject is the user ("I", "we", "my <thing>"), after at
most a few leading words ("Last summer we ..."); it is no question, nothing hypothetical, negated or reported, says
nothing to or about "you", and its verb says something about the user's life rather than their reaction to the chat
("I think", "I'm glad"). It becomes one fact in the third person, typed by its structure (`self_statement_type`): a
plan, a past event, a taste, a skill, a relative, or a plain fact. "My brother Marco just moved to Berlin" is about
Marco: a named relative or pet is the subject of its own fact.
"""

from __future__ import annotations

import re

from memlake.distill.dates import with_dates_resolved
from memlake.distill.models import KIN_OR_PET, USER_SUBJECT
from memlake.distill.offline.readers.predicates import (
    ADVERBS,
    PAST,
    PLAN,
    PREFERENCE,
    a_word,
    adverbs_opening,
    self_statement_type,
    third_person_verb,
    without_adverbs,
)
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, cut_object, sentence_case, third_person
from memlake.distill.offline.vocabulary import (
    CAP,
    DIETS,
    HYPOTHETICAL,
    NEGATION,
    NOT_NAMES,
    RELATIVES,
    REPORTED,
    TEMPORARY,
)
from memlake.distill.offline.worth_keeping import why_not_worth_keeping
from memlake.nlp import parse
from memlake.nlp.words import (
    Words,
    first_of,
    from_the_first_word,
    has_a_gap,
    letter_words,
    without_interjections,
    word_runs,
)
from memlake.text import content_words

# A few leading words before the subject ("Last summer we ...", "Yeah, I ..."), but no clause of its own.
_SUBJECT = re.compile(
    r"^(?P<lead>(?:[A-Za-z'-]+,?\s+){0,6}?)"
    r"(?P<who>I'm|I am|I've|I have|I'll|I will|I was|I|[Ww]e're|[Ww]e are|[Ww]e've|[Ww]e have|[Ww]e were|[Ww]e|"
    r"[Mm]y|[Oo]ur)\s+(?P<rest>.+)$"
)
# What may stand before the subject: when or how often ("Last summer", "Every Sunday", "On Tuesday"), no verb.
_LEAD = re.compile(
    r"(?:(?:last|this|next|every|each|on|in|at|after|before|during|over|the|a|few|couple|of|yesterday|recently|"
    r"lately|then|now|finally|today|tonight|week|weekend|weekends|month|months|year|years|summer|winter|spring|fall|"
    r"autumn|morning|mornings|evening|evenings|night|nights|ago|two|three|weeks|days|day|once|twice|back|"
    r"growing up|since|[A-Z][a-z]+day|January|February|March|April|May|June|July|August|September|October|"
    r"November|December|\d{1,4})[ ,]*)*",
    re.I,
)
# Where or after what, set off by a comma: "After the race, I ...", "At the shelter, we ...".
_PLACE_LEAD = re.compile(r"(?i:after|before|at|during|since|through|over|on|in|with|as) (?:[A-Za-z'-]+ ){0,4}?"
                         r"[A-Za-z'-]+, ")
# To or about the other side of the chat: a reply, not a statement about the user's life.
_SECOND_PERSON = Words("you your yours yourself u ya")
# Verbs and states that react to the chat or think aloud rather than say something that stays true.
_REACTION = re.compile(
    r"^(?:(?:really|just|also|totally|so|too|definitely|actually|still|truly|completely|absolutely|kinda|"
    r"kind of|sort of|always|very|gonna|going to|super|pretty|quite|extra|feeling)\s+)*"
    # a mood of the moment, or leaving the chat: "staying positive", "off to do some research"
    r"(?:(?:stay|stays|staying|keep|keeps|keeping|remain|remaining|feeling) (?:\w+ )?"
    r"(?:positive|hopeful|optimistic|determined|focused|"
    r"motivated|strong|busy|calm|sane)|off to|hopeful|optimistic|crossing|"
    r"think|thought|guess|feel|feeling|felt|hope|hoped|wish|know|knew|mean|meant|agree|bet|wonder|wondered|"
    r"believe|suppose|understand|appreciate|see|saw|hear|heard|remember|recall|forgot|get|got it|got to|gotta|"
    # ("want to <do something>" is an aim: "I want to help people who went through the same")
    r"need|needed|want(?! to (?!(?:say|know|see|hear|thank|ask|tell|share|chat|talk|check|let)\b))|wanted|"
    r"would|could|should|must|might|may|can't wait|cannot wait|love that|love it|"
    r"love this|like that|like it|like this|say|said|told|ask|asked|have to|"
    r"glad|happy|sorry|sure|excited|proud|thrilled|grateful|thankful|curious|impressed|amazed|stoked|"
    r"blessed|lucky|relieved|inspired|honored|honoured|flattered|speechless|jealous|"
    r"not sure|afraid|worried|here|there|back|done|fine|ok|okay|good|great|well|all|totally|"
    r"looking forward|keen|eager|ready|down|up|about|a bit|kind|sort|"
    r"doing (?:ok|okay|well|good|great|fine|alright|pretty|much|better|awesome))\b",
    re.I,
)
# Past forms that say little on their own: "we raised a ton", "I had a similar experience".
# "I've learned that taking breaks matters": this "that" opens what was learned, it points at nothing.
_THAT_OPENS_WHAT = r"(?<!learned )(?<!realized )(?<!realised )(?<!discovered )(?<!found out )(?<!figured out )"
# A good time says something only with where or at what: "we had a blast at a live music event" is a memory.
_VAGUE_EVENT = re.compile(r"^(?:\w+ ){0,2}?(?:\w+ed|had|did|got|made) (?:(?:a ton|a lot|so much|it|this|"
                          + _THAT_OPENS_WHAT + r"that|a similar|"
                          r"the same|some|something|lots|plenty)\b|(?:fun|a blast|a great time|a good time|an amazing "
                          r"time)(?!(?:\s+(?:last|this|next) \w+|\s+yesterday|\s+\w+ \w+ ago)?"  # (time, then place)
                          r"\s+(?:at|in|on|during|with|visiting|playing|watching|hiking|camping) (?!(?:the )?"
                          r"(?:moment|end|same time|them|him|her|it|you)\b)))", re.I)
# Words that point at something only the chat shows: the fact would not stand alone.
_DEICTIC = re.compile(r"\b(?:it|its|it's|" + _THAT_OPENS_WHAT
                      # "a screenplay that appeared on screen": a "that" before its verb opens a relative clause
                      + r"(?:this|(?<!\w )that|that(?! (?:\w+ed|is|was|are|were|has|have|had|helps|makes|gives|can|"
                      r"will)\b)|these|"
                      r"those)(?! (?:week|weekend|month|year|summer|winter|spring|"
                      r"fall|autumn|morning|evening|afternoon|semester|season)s?\b)|there|here|too|same|one|ones|"
                      r"they|them|their|he|she|him|her|his|hers|so much|such)\b", re.I)
# A "that" after a noun opening a relative clause with the user as its subject: "a pottery studio that I love".
# (Not "that we": "a concert that we all enjoyed" would say "they all enjoyed", and who they are only the chat says.)
_RELATIVE_THAT = re.compile(r"(?<=[a-z] )that(?= (?:I|my)\b)")


_THEIRS = frozenset({"they", "them", "their", "theirs", "themselves"})


class _PointsAtChat:
    """`_DEICTIC`, with "they", "them", "their" set aside after a plural noun of the clause, which they stand for: "I
    mentor young dancers to help them reach their potential" (not in a phrase hanging on the noun: "the smiles on
    their faces" are someone else's). The parse tags the plural noun."""

    @staticmethod
    def search(text: str) -> re.Match[str] | None:
        if not _THEIRS.isdisjoint(text.lower().split()):
            doc = parse(text)
            plural = next((t for t in doc if t.tag_ in ("NNS", "NNPS")), None)
            if plural is not None and not (plural.i + 2 < len(doc) and doc[plural.i + 1].dep_ == "prep"
                                           and doc[plural.i + 2].lower_ in _THEIRS):
                text = "".join(t.text_with_ws for t in doc if t.i <= plural.i or t.lower_ not in _THEIRS)
        return _DEICTIC.search(_RELATIVE_THAT.sub("", text))


# "I have no big events coming up": "no" before a noun denies what follows ("no doubt", "no wonder" deny nothing).
_NO_DETERMINER = re.compile(r"(?<!\ba )(?<!\bthe )\bno (?!(?:matter|doubt|wonder)\b)[a-z]", re.I)
_THIRD_PARTY = Words("he she him her his they them their")
# ("Excited to see", "Supposed to fly", "Used to live" are no pasts; "Moved to Lisbon", "Switched to a new team",
# "Switched to vegan" are: a past takes a name or a thing after "to", an adjective takes a verb)
_THING_AFTER_TO = "|".join(("[A-Z]", *(rf"(?:{w}) " for w in ("a", "an", "the", "my", "our", "being", "eating")),
                            *(rf"{d}\b" for d in DIETS)))
_PAST_OPENING = (rf"[A-Z][a-z]+ed(?! (?:by|on|in|of|from|with)\b)(?! to (?!{_THING_AFTER_TO}))"
                 r"(?<!\bUsed)(?<!\bSupposed)|"
                 r"Went|Got|Took|Bought|Spent|Finished|Started|Joined|Booked|Adopted|Had|Met|Ran|Won|Made|"
                 # pasts with no -ed that no imperative shares ("Read this!" and "Put it there" are asks)
                 r"Tried|Lost|Left|Found|Saw|Sold|Wrote|Built|Began|Became|Came|Gave|Flew|Drove|Rode|Swam|"
                 r"Sang|Taught|Caught|Brought")
# ... and after a leading adverb the past is in lower case: "Recently started learning an instrument".
_NO_SUBJECT = re.compile(rf"^(?:(?:Just|Finally|Recently|Also) (?=[a-z])(?i:{_PAST_OPENING})|(?:{_PAST_OPENING}))\b")
# Talk about the work at hand in the chat ("the database URL", "our schema"), not about the user's life.
# ("job", "test", "service" are words of a life too: the distiller's TECH_WORDS would drop them.)
_CHAT_TASK = Words("""database db url repo api schema table column regex config file csv sql query queries prompt error
                       log logs dashboard spreadsheet slide slides draft email ticket sprint script tests migration
                       migrations command pipeline server container deploy function benchmark endpoint bug patch
                       refactor pr commit branch doc docs code""")
# About today only: "my legs are sore today".
_TODAY = Words("today tonight", "right now", "at the moment")
_TIME_ONLY = Words("today tonight now currently", "right now", "at the moment")
_PETS = r"dog|puppy|cat|kitten|parrot|bird|rabbit|bunny|hamster|guinea pig|turtle|tortoise|horse|pony|fish|snake"
# "my brother Marco", "our dog Pepper", "my best friend Leo": someone or some pet of the user's, by name.
_NAMED_OWN = re.compile(rf"^(?P<what>(?:[a-z-]+ ){{0,2}}?(?:{RELATIVES}|{_PETS})),? (?P<name>{CAP})(?:,)? "
                        r"(?P<rest>.+)$")
# Words that carry no fact of their own, beyond the stopwords.
_EMPTY_WORDS = frozenset(
    """keep keeping doing done going gonna really stuff things thing way ways lot lots always busy fun nice cool
    awesome amazing great good happy glad excited feel feeling felt pushing forward trying making make made sure
    tough hard difficult best work working enough together ready definitely totally anything everything something
    dream dreams blast tuning proud ok okay thanks handle happen come true difference boost""".split()  # noqa: SIM905
)
_HAS_KIN_OR_PET = re.compile(rf"^(?:(?:has|have) got|has|have|got) (?:a|an|one|two|three|four|\d+) (?:[a-z-]+ ){{0,2}}?"
                             # a being named is kin or a pet, whatever its word: "a golden retriever named Biscuit"
                             rf"(?:(?:{RELATIVES}|{_PETS})s?\b|[a-z-]+ (?:named|called) {CAP})")


# What keeps a clause from being a lasting statement of the user's life.
_NOT_LASTING = (HYPOTHETICAL, NEGATION, _NO_DETERMINER, REPORTED, _PointsAtChat, _CHAT_TASK, _TODAY)


def read_self_statement(rule: Rule, clause: str) -> None:
    """One fact for a plain statement of the user's about their own life that no other rule read."""
    text = without_interjections(from_the_first_word(clause)).strip(" .!")
    if _an_ask(text):
        return  # "Just give me the steps", "Create a plan to help me ...": what the user asks for, not their life
    if _SECOND_PERSON.search(cut_trailing(text)) or has_a_gap(text):
        return  # to the other side (an aside to them is cut: "while you were winning"); or a quoted title was cut
    opening = text[:20]
    if text.split()[:2] in (["I", "can"], ["I", "could"]) and any(
            f" so {that}{opening}" in f" {rule.sentence.text}" for that in ("", "that ")):
        return  # "... so I can track my progress": a purpose, hanging on the clause before
    if not PRAISE_AFTER_A_DASH.search(rule.sentence.text):
        text = with_the_i_left_out(text)
    text, others = _with_a_companion(text)
    m = _SUBJECT.match(text)
    if not m or not (_LEAD.fullmatch(m.group("lead").strip(" ,")) or _PLACE_LEAD.fullmatch(m.group("lead"))):
        _read_about_me(rule, text)
        return
    who, rest = m.group("who"), cut_trailing(m.group("rest"))
    if any(g.search(f"{m.group('lead')} {rest}") for g in _NOT_LASTING):
        return
    if not _subordinate(m.group("lead").strip(" ,"), rest):  # "Since we chatted last": it hangs on another clause
        _add_said_by(rule, who, rest, m.group("lead").strip(" ,"), others, longest=24)


def _add_said_by(rule: Rule, who: str, rest: str, lead: str, others: str, longest: int) -> None:
    """The fact of a statement whose subject is `who` (I, we, my, our) and predicate `rest`, in the third person."""
    if who.lower() in ("my", "our"):
        _read_possession(rule, who.lower(), rest, lead)
        return
    predicate = _predicate(who, rest, longest)
    if predicate is None:
        return
    if who.lower().startswith("we") and others == "others" \
            and _type_of(rule, predicate) not in ("event", "preference", "commitment") \
            and not _HAS_KIN_OR_PET.match(predicate) and not how_often(predicate):
        return  # "we're part of something bigger": only what they did, like, plan or have together
    subject_words = "The user" if who.lower().startswith(("i", "i'")) else f"The user and {others}"
    _add(rule, f"{subject_words} {predicate}", lead, predicate, USER_SUBJECT)


# An ask of the assistant, opening with the verb of what it is to do (a past has its -ed: "Helped my mum move").
_POLITE = frozenset(["just", "please", "pls", "plz", "kindly", "now", "so", "then", "and", "also", "quickly", "simply"])
_ASKS = frozenset("""give tell show make create write help send explain list find generate suggest draft summarize
    summarise rewrite translate provide design build check fix add remove update describe compare calculate recommend
    continue remind teach walk guide prepare outline review edit analyze analyse convert format answer draw share
    let""".split())  # noqa: SIM905


def _an_ask(text: str) -> bool:
    """Whether a text opens with what the user asks the other side to do, after "please" and the like."""
    words = text.split()
    while words and words[0].lower() in _POLITE:
        words = words[1:]
    first = words[0] if words else ""
    end = next((b for a, b in word_runs(first) if a == 0), 0)
    return first[:end].lower() in _ASKS and first[end:end + 1] != "-"


# A sentence that leaves its "I" out: "Researching adoption agencies", "Been working on some projects", "Gonna keep
# pushing". An -ing word with a verb after it is the subject instead: "Painting helps me relax".
_ING_NO_SUBJECT = re.compile(r"^(?:Just |Still |Now |Currently |Also )?(?!(?:Some|No|Any|Every)thing\b)"
                             # -ing words that are prepositions: "Regarding the meal options, ..."
                             r"(?!(?:Regarding|Including|Considering|Concerning|According|Following|Excluding|Pending|"
                             r"Assuming|Depending|Speaking)\b)"
                             r"(?P<verb>[A-Z][a-z]+ing|Been(?= \w+ing| to)|Gonna(?! be\b))"
                             r" (?!(?:and|but|or|so|as|too)\b)\w")  # "Exciting but scary" is no verb
_FINITE_VERB = re.compile(r"\b(?:is|was|are|were|has|have|had|makes|made|helps|helped|gives|gave|keeps|kept|means|"
                          r"feels|needs|matters|takes|requires|seems|sounds|looks|happened|happens|"
                          r"brings|reminds|can|could|will|would|should|might|must|may|"
                          # a past after the -ing words: "Winning the title felt so good", "Moving there made me ..."
                          r"felt|kept|got|took|gave|brought|taught|proved|became|meant)\b|"
                          r"^[A-Z][a-z]+ing's\b|"  # "Painting's great": "'s" is the verb of the -ing word
                          # "Performing live always fuels my soul": a verb in -s on the user is the -ing word's own
                          r"\b[a-z]+[^s\W]s (?:me|my|us|our|myself)\b|"
                          # "Going out for hikes and spending time outdoors keep me sane": two -ing words, one verb
                          r"^[A-Z][a-z]+ing\b.*\band [a-z]+ing\b.*(?<!\bto )\b"
                          r"(?!(?:for|with|to|about|like|around|near|at|of|from|by|on|in|than)\b)[a-z]{3,} "
                          r"(?:me|us|myself)\b")
# A pronoun standing for something only the chat shows, as the whole object: "I loved it", "I got them online".
# What only the chat shows, inside the sentence: "those little guys", "escaping to that world" ("those in need" and
# "this book about castles" say what they are; "it" and "them" mostly stand for a thing the sentence names).
_POINTING = re.compile(r"\bthose (?!(?:in|who|with|of|that|which|days|weeks|months|years)\b)\w+|"
                       r"\b(?:with|to|about|in|on|at|for|from|of|into|by) that (?!(?:week|weekend|month|year|time|"
                       r"day|night)s?\b)\w+")
# In a whole sentence, "this"/"these"/"here"/"such" point at what the chat shows ("I chose to write about this",
# "something like this", "this journey", "here's something I finished"); "this week" is a time, and "this awesome
# book about castles" says what it is.
_DEMONSTRATIVE = re.compile(r"\b(?:this|these|here|here's|such)\b(?! (?:week|weekend|month|year|summer|winter|"
                            r"spring|fall|autumn|morning|evening|afternoon|semester|season)s?\b)"
                            r"(?! (?:[\w'-]+ ){1,4}(?:about|called|named|with|by|from|of|for|at|in|on)\b)", re.I)
_BARE_PRONOUN = re.compile(r"\b(?:it|its|it's|they|them|their|he|she|him|her|his|there|that|this)\b"
                           r"(?! (?:week|weekend|month|year|summer|winter|spring|fall|autumn|morning|evening|"
                           r"semester|season)s?\b)(?=\s*(?:$|[,.!;:\-–—]|and\b|but\b|so\b|too\b))",
                           re.I)


# A lead that opens a subordinate clause ("Since we chatted last", "When I was a kid"), not a time of the statement.
# ("since" gives a reason too, "since I'm lactose intolerant": only "since" with a past verb is a time.)
_SUBORDINATE_LEAD = frozenset({"after", "before", "when", "while", "once", "if", "until"})


def _pronoun_after(rest: str) -> bool:
    """"got them online", "really loved it": "it", "them", "him" or "her" as the second or third word."""
    words = rest.split(" ")
    for n in (1, 2):
        if len(words) <= n or not all(w and all(c.isalnum() or c in "_'-" for c in w) for w in words[:n]):
            return False
        end = next((b for a, b in word_runs(words[n]) if a == 0), 0)
        if words[n][:end].lower() in ("it", "them", "him", "her"):
            return True
    return False


def _subordinate(lead: str, rest: str) -> bool:
    last = lead.lower().split()[-1:]
    return bool(last and (last[0] in _SUBORDINATE_LEAD or last[0] == "since" and PAST.match(rest)))


def read_self_sentence(rule: Rule) -> None:
    """A whole sentence of the user's about their own life that no clause of it gave a fact for, rewritten into
    the third person: "I'm doing kickboxing and it's giving me energy" -> "The user is doing kickboxing and it's
    giving them energy". Said to or about the other side ("you"), hypothetical, reported or about today only, it
    gives nothing; a pronoun or a "this" whose thing only the chat shows ("I loved it", "I chose to write about
    this") gives nothing either."""
    text = without_interjections(from_the_first_word(QUOTED.sub(" ", rule.sentence.text))).strip(" .!")
    if _SECOND_PERSON.search(text) or has_a_gap(text, "[]"):
        return
    text, others = _with_a_companion(with_the_i_left_out(text))
    m = _SUBJECT.match(text)
    if not m or not (_LEAD.fullmatch(m.group("lead").strip(" ,")) or _PLACE_LEAD.fullmatch(m.group("lead"))):
        return
    # ("since we last talked" says when the chat last met, nothing of the user's life)
    rest = re.sub(r"\s*,?\s*(?:lol|haha)\W*$|,?\s+since (?:we|I|you) last \w+", "", m.group("rest"))
    who, lead = m.group("who"), m.group("lead")
    if any(g.search(f"{lead} {rest}") for g in (HYPOTHETICAL, NEGATION, _NO_DETERMINER, REPORTED, _CHAT_TASK, _TODAY,
                                                 _BARE_PRONOUN, _POINTING, _DEMONSTRATIVE)):
        return
    if _pronoun_after(rest):
        return  # "I got them online": what was got only the chat shows
    if _subordinate(lead.strip(" ,"), rest):
        return
    if _PERSON_PRONOUN.search(f"{lead} {rest}"):
        named = rule.named_earlier_in_message()
        if named is None:
            return  # "I'm thinking of asking her out": whom, only the chat shows
        lead, rest = _with_the_name(lead, named), _with_the_name(rest, named)
    _add_said_by(rule, who, rest, lead.strip(" ,"), others, longest=40)


_PERSON_PRONOUN = Words("he she him her his")


# Words that say how often a habit is kept: "every morning", "twice a week", "on weekends", "daily".
_OFTEN = frozenset({"every", "each", "daily", "weekly", "monthly", "yearly", "nightly", "twice", "once", "weekends",
                    "mornings", "evenings", "nights", "usually", "regularly", "per"})
_PERIODS = frozenset({"day", "week", "month", "year", "night", "morning", "evening", "weekend"})


def how_often(text: str) -> bool:
    """Whether a predicate says how often it is done ("walk the dog twice a day", "drink a litre of water a day")."""
    said = text.lower().replace(",", " ").split()
    return not _OFTEN.isdisjoint(said) or any(a == "a" and b.strip(".!") in _PERIODS
                                              for a, b in zip(said, said[1:], strict=False))


def _with_the_name(text: str, name: str) -> str:
    """"he", "she", "him" and "her" as an object as the name; "his" and "her" before what it owns as the name's;
    which "her" is, and whether "'s" is "is", the parse says ("asking her out", "her phone", "she's a nurse")."""
    out = []
    for t in parse(text):
        if t.lower_ in ("he", "she", "him") or t.lower_ == "her" and t.tag_ == "PRP":
            word = name
        elif t.lower_ in ("his", "her"):
            word = f"{name}'s"
        else:
            word = " is" if t.lower_ == "'s" and t.lemma_ == "be" and t.i and t.nbor(-1).lower_ in ("he", "she") \
                else t.text
        out.append(word + t.whitespace_)
    return "".join(out)


_COMPANION = re.compile(rf"^(?P<name>{CAP}(?: {CAP})?|[Mm]y (?:[a-z-]+ ){{0,2}}?[a-z-]+) and I (?P<rest>.+)$")


def _with_a_companion(text: str) -> tuple[str, str]:
    """"Tom and I are planning a trip" -> ("We are planning a trip", "Tom"): the user and a named person do it
    together; any other text as it is, with "others" for whom a "we" stands."""
    m = _COMPANION.match(text)
    if not m:
        return text, "others"
    name = m.group("name")
    if name.lower().startswith("my "):
        return f"We {m.group('rest')}", f"their {name[3:]}"  # "My colleagues and I" -> "the user and their colleagues"
    if name.split()[0] in NOT_NAMES:
        return text, "others"
    return f"We {m.group('rest')}", name


# A sentence whose left-out subject is "it", not "I": the speaker is its object ("Took me ages", "Got us thinking"), or
# what it took is time or effort ("Took a bit of work", "Took forever").
_IT_LEFT_OUT = re.compile(r"^(?:(?:Just|Finally|Recently|Also) )?[A-Za-z]+ (?:me|us)\b|"
                          r"^(?:(?:Just|Finally|Recently|Also) )?(?i:took) (?:a bit|a while|a lot|a little|some time|"
                          r"ages|forever|hours|days|weeks|months|years|time|effort|work)\b")


# "Making videos about gaming - that's awesome!": what comes before the dash is praised, mostly the other side's news.
PRAISE_AFTER_A_DASH = re.compile(r"\s[-–—]+\s*(?:that|this)(?:'s| is)\s+(?:so |really |just |super |pretty )*"
                                 r"(?:awesome|great|amazing|cool|incredible|fantastic|wonderful|impressive|brilliant|"
                                 r"huge|epic|wild|inspiring)\b", re.I)


def with_the_i_left_out(text: str) -> str:
    """The statement with the "I" it leaves out: "Started hitting the gym" -> "I started hitting the gym",
    "Researching adoption agencies" -> "I am researching adoption agencies"; any other text as it is."""
    if _NO_SUBJECT.match(text) and not _IT_LEFT_OUT.match(text):
        return f"I {text[0].lower()}{text[1:]}"
    if PRAISE_AFTER_A_DASH.search(text):
        return text  # "Making videos about gaming - that's awesome!": praise of what the -ing words name
    left_out = _ING_NO_SUBJECT.match(text)
    # A verb in a trailing aside is the aside's; "Seeing their smiles, I knew ..." has its "I" after the comma.
    if left_out and not _FINITE_VERB.search(cut_trailing(text)) and not re.search(r",\s+(?:\w+\s+)?(?:I|we)\b", text):
        return f"{'I have' if left_out.group('verb') == 'Been' else 'I am'} {text[0].lower()}{text[1:]}"
    return text


_ME = frozenset({"me", "my", "myself", "mine"})
_BE_HAVE = frozenset({"is", "are", "was", "were", "has", "have", "had"})
_HANGS_ON_BEFORE = ("which", "that's why", "this is why", "for example", "for instance", "thanks", "thank")
# Verbs that say something of the user after them: "Painting helps me", "Writing has been such a blessing for me".
_VERBS_BEFORE_ME = frozenset("""is are was were has have had give gives gave make makes made help helps helped keep
    keeps taught brought showed got kept""".split())  # noqa: SIM905


def _opens_on_a_gerund(text: str) -> bool:
    """"Seeing my students ...": a capitalised -ing word first."""
    runs = word_runs(text)
    first = text[:runs[0][1]] if runs and runs[0][0] == 0 else ""
    return (len(first) > 4 and "A" <= first[0] <= "Z" and first.endswith("ing") and first[1:].isascii()
            and first[1:].isalpha() and first[1:].islower())


def _a_verb_in(text: str, verbs: frozenset[str]) -> bool:
    """Whether a text has one of `verbs`, or a word in -s or -ed."""
    return any(w in verbs or (len(w) > 1 and w.endswith("s")) or (len(w) > 2 and w.endswith("ed"))
               for w in (text[a:b] for a, b in word_runs(text)))


def _named_then_comma(text: str) -> bool:
    """"Gina, thanks for ...": a first word with a comma right after it."""
    k = 0
    while k < len(text) and (text[k].isalnum() or text[k] in "_'’&.-"):
        k += 1
    return k > 0 and text[0].isalpha() and text[k:k + 1] == ","


def _read_about_me(rule: Rule, text: str) -> None:
    """"Writing has been such a blessing for me", "Guitar's mostly my thing": the user is in the sentence but
    not its subject. Kept as said, in the third person, when it names something (no "it", "that", "there")."""
    text = cut_trailing(text)
    lowered = text.lower()
    if any(lowered.startswith(w) and not (lowered[len(w):len(w) + 1].isalnum() or lowered[len(w):len(w) + 1] == "_")
           for w in _HANGS_ON_BEFORE) or _named_then_comma(text):
        return  # hangs on what was said before, or speaks to the other side by name ("Gina, thanks for ...")
    me = first_of(text, _ME)
    # ("Seeing my students succeed motivates me": the -ing words, with what they own, are the subject)
    gerund_subject = _opens_on_a_gerund(text) and _FINITE_VERB.search(text)
    if not me or len(text[: me[0]].split()) < 2 and not gerund_subject or not "A" <= text[:1] <= "Z":
        return  # "Makes me feel connected": the subject is left out
    if not {"i", "we"}.isdisjoint(letter_words(text)):
        return
    if any(g.search(text) for g in (*_NOT_LASTING, _THIRD_PARTY)) or TEMPORARY.match(text):
        return  # ... or news of the moment: "This week has been swamped with exams for me"
    if gerund_subject and _GERUND_VERDICT.match(text):
        return  # "Losing my job was a bummer", "Juggling both my passions can be tricky": how a moment felt
    before_the_user = text[: me[0]]
    if not gerund_subject and not _a_verb_in(before_the_user, _VERBS_BEFORE_ME) and "'s " not in before_the_user:
        return  # no verb before the user is named: no statement about them
    _add(rule, _me_as_user(text), "", text, USER_SUBJECT, opens_with_subject=True)


# -ing words as the subject, then a be-verb and a short verdict that says for whom nothing matters ("... is important
# to me" says what matters to the user, "Acting was my first passion" what the user has; "... is awesome", "... sounds
# like a great adventure" only how it felt).
_GERUND_VERDICT = re.compile(r"^[A-Z][a-z]+ing\b.*?\b(?:is|was|are|were|can be|could be|'s|sounds|sounded|seems|"
                             r"seemed|feels|felt|looks)\s+(?!.*\b(?:(?:to|for) (?:me|us)|my|our|myself)\b)"
                             r"(?:[\w'-]+\s*){1,5}[.!]?$")


def _me_as_user(text: str) -> str:
    """"Painting helps me explore my identity" -> "Painting helps the user explore their identity"."""
    first = first_of(text, _ME)
    if not first:
        return text
    start, end = first
    if text[start:end] == "myself":  # "Painting's great for expressing myself": the user expresses themselves
        return f"For the user, {text[0].lower()}{text[1:start]}{third_person(text[start:])}"
    named = {"me": "the user", "my": "the user's", "mine": "the user's"}[text[start:end]]
    return text[:start] + named + third_person(text[end:])


def cut_trailing(rest: str) -> str:
    """The statement without a trailing reason or aside: "I bake bread every weekend, because ..."."""
    # ("cause" alone is the noun: "for a good cause"; ", and" before a last item of a list is no new clause)
    return re.split(r",?\s+(?:because|'cause|so that|which|but|(?:even )?though|(?:even )?if|although|lol|haha|while|"
                    r"just to|whenever|since (?=(?:we|I|you|they)\b)|"
                    # "a new project - a thriller set in Ohio": what follows a dash with "a"/"an" names the object
                    r"and (?:it|this|that|he|she|they|there|you)\b)|\s+-+\s+(?!an? )|\s*—\s*|[!;:(]|"
                    r",\s+(?=(?:and (?:I|we|it|they|he|she|you|that|this|then|now|so)|but|so|which|because|I|we|it|"
                    r"they|he|she|you|that|this|though|plus)\b)",
                    rest, maxsplit=1)[0].strip(" ,")


_BE_HAVE = {"i'm": "is", "i am": "is", "we're": "are", "we are": "are", "i've": "has", "i have": "has",
            "we've": "have", "we have": "have", "i'll": "will", "i will": "will", "i was": "was", "we were": "were"}


def _predicate(who: str, rest: str, longest: int = 24) -> str | None:
    """The predicate in the third person ("is a nurse", "adopted a cat"), or None when it says nothing lasting."""
    if _REACTION.match(rest) or _TIME_ONLY.opens(rest) or TEMPORARY.match(rest) or len(rest.split()) < 2:
        return None
    if len(rest.split()) > longest:
        return None
    who = who.lower()
    if who in _BE_HAVE:
        return f"{_BE_HAVE[who]} {rest}"
    if who == "we":  # a shared plan, past event or habit; "we're making a difference" says little
        verb = without_adverbs(rest)  # ("We even had a picnic by the lake": the verb after the adverb)
        said = (PAST.match(verb) or PREFERENCE.match(verb) or PLAN.match(verb)
                or how_often(rest)) and not _VAGUE_EVENT.match(verb)
        return rest if said else None
    if rest.startswith(("can ", "am able to ")):  # "I can play the piano": kept as said
        return rest
    head = adverbs_opening(rest)
    verb, _, tail = rest[len(head):].partition(" ")
    if not a_word(verb) or _REACTION.match(rest[len(head):]):
        return None
    return f"{head}{third_person_verb(verb)} {tail}".strip()


# "<my thing> is going well", "... has been super encouraging and inspiring": only a verdict on how it is going.
_VERDICT = re.compile(r"^(?:[\w-]+ ){1,3}?(?:is|are|was|were|has been|have been|'s been) (?:(?:so|super|really|very|"
                      r"pretty|quite|extremely|incredibly|going|doing|all|just|always|been)\s+)*"
                      r"(?:\w+(?:ing|ful|ive|ous|ed|ible|able)|well|good|great|amazing|awesome|fine|okay|ok|fun|tough|"
                      r"hard|crazy|wild|busy|nice)(?:,? (?:and|but) (?:so |super |really |very )?\w+)?$")


def _read_possession(rule: Rule, who: str, rest: str, lead: str) -> None:
    """"My favourite colour is teal"; "My brother Marco just moved to Berlin" is about Marco."""
    named = _NAMED_OWN.match(rest)
    if named and named.group("name") not in NOT_NAMES:
        name, what = named.group("name"), named.group("what")
        # "My sister Leela is visiting me/us": with Leela the subject, "me" and "us" are the user, not "them"
        predicate = re.sub(r"\b(?:me|myself|us)\b", "the user",
                           re.sub(r"\b(?:my|mine|our|ours)\b", "the user's", named.group("rest")))
        if _REACTION.match(predicate) or len(predicate.split()) < 2:
            return
        _add(rule, f"{name}, the user's {what}, {predicate}", lead, predicate, name)
        return
    if re.match(r"^(?:[\w-]+ ){0,2}?[\w-]+, ", rest):
        return  # "[Maria,] my coworker, loves climbing": the subject is someone named before
    if not _a_verb_in(rest, _BE_HAVE) or len(rest.split()) < 3:
        return  # "my goodness", "my bad": no verb, no statement
    if letter_words(rest)[:1] and letter_words(rest)[0] in _NO_STATEMENT:
        return
    if who == "our" and not re.match(rf"^(?:[a-z-]+ )?(?:{RELATIVES}|{_PETS}|kids?|children|house|home|family)\b",
                                     rest):
        return  # "our data", "our team": the user's team, not their life
    if _VERDICT.match(rest):
        return  # "my writing is going well", "my team has been super encouraging": how it goes this moment
    owner = "The user's" if who == "my" else "The user's family's"
    _add(rule, f"{owner} {rest}", lead, rest, USER_SUBJECT, opens_with_subject=True)


# "my goodness", "my apologies", "my thoughts are with ...": said to the other side.
_NO_STATEMENT = frozenset(["god", "goodness", "gosh", "bad", "pleasure", "apologies", "thoughts", "condolences"])


# A promise made in passing: a "will" of the chat ("I'll share some clips when it's ready", "I'll go train") or
# keeping on with what one does ("I'm gonna keep pushing myself"). With no day and no name it is talk, not a plan.
_PASSING_PLAN = re.compile(rf"^{ADVERBS}*(?:(?:will|'ll)\b|(?:is |are |am )?(?:going to|gonna) {ADVERBS}*"
                           r"(?:keep|stay)\b)", re.I)


def _passing_promise(rule: Rule, predicate: str, lead: str) -> bool:
    if not _PASSING_PLAN.match(predicate) or rule.date_in(f"{lead} {predicate}") is not None:
        return False
    return not any(word[:1].isupper() and word.strip(".,!?'") not in NOT_NAMES for word in predicate.split())


# A taste whose object points at the chat ("the color and texture", "all the yellow leaves") and names nothing.
_TASTE_FOR_THE_CHATS = re.compile(rf"^{ADVERBS}*(?:loves?|likes?|enjoys?|adores?|prefers?) (?:all )?(?:the|that|those|"
                                  r"these|this) (?![^,.!?]*\b[A-Z][a-z])")  # (case matters: a name is capitalised)


def _add(rule: Rule, said: str, lead: str, predicate: str, subject: str, *, opens_with_subject: bool = False) -> None:
    if len(content_words(predicate) - _EMPTY_WORDS) < 2 or _VAGUE_EVENT.match(predicate):
        return  # "is plowing through", "has been busy": too little to remember
    if why_not_worth_keeping(cut_trailing(predicate), opens_with_subject=opens_with_subject) is not None:
        return  # "goes there now and then", "learned a new skill": it does not stand alone, or names nothing
    if _passing_promise(rule, predicate, lead):
        return
    content = sentence_case(third_person(f"{lead}, {said[0].lower()}{said[1:]}" if lead else said))
    content = with_dates_resolved(re.sub(r"\bgonna\b", "going to", content), rule.sentence.message.created_at)
    value = cut_object(third_person(predicate)) or predicate
    type_ = _type_of(rule, predicate)
    if type_ == "preference" and _TASTE_FOR_THE_CHATS.match(predicate):
        return  # "loves the color and texture": of what the chat shows, as the preference rule reads it too
    # a relative or a pet the user has is one of their people, not who they are (the profile lists it with them)
    tags = ("said", KIN_OR_PET) if _HAS_KIN_OR_PET.match(without_adverbs(predicate)) else ("said",)
    rule.add(type_, value, content, subject=subject, confidence=0.7, importance=0.5, tags=tags)


def _type_of(rule: Rule, predicate: str) -> str:
    type_ = self_statement_type(predicate)
    when = rule.date_in(predicate)
    if when is not None and type_ == "fact" and when.day > rule.said:
        return "commitment"  # "I'm spending a long weekend in Lisbon next month": a plan, by its date
    return type_
