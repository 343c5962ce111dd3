"""Dates in what people say, resolved against when they said it (never against today).

`find_dates(text, said_at)` returns every date expression of a sentence with
the date it means: "last week" said on 2023-05-08 is 2023-05-01, "in
October" said in July 2024 is 2024-10, "March 14" is the March 14 nearest to
the day it was said.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from memlake.nlp import read

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            (),
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sept", "Sep"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ]
    )
    for name in names
}
WEEKDAYS = {name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                               "sunday"))}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}

_MONTH = "(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d{1,2}|a couple of|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_WEEKDAY = "(?P<weekday>" + "|".join(WEEKDAYS) + ")"
# Seasons of the northern hemisphere, by whole months (meteorological): the first month and how many months.
# (A southern user's "summer" is December to February; nothing in a chat says which, and most users so far are
# northern: the decision is recorded in docs/decisions.md, 2026-11-26.)
SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
# A season said as a time: "this summer", "next spring", "in the autumn", "by the end of summer", "over the winter",
# "summer 2027". Lowercase after its lead word, and not a noun's modifier ("the summer house", "next spring's
# collection" is read; "the Autumn Statement", "Summer is my favourite season" have no lead word of time).
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_SEASON_YEAR = r"(?:,? (?:of )?(?P<y>\d{4})(?:/\d{2})?)?"
_NOT_A_MODIFIER = (r"(?!\s+(?!(?:and|or|but|so|because|when|while|with|to|for|at|in|on|we|i|he|she|they|it|"
                   r"that|then|too|as|if|after|before|already|again|maybe|probably|hopefully)\b)[a-z])")

# Order matters: longer, more precise expressions first; a matched span is not matched again.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b")),
    ("edge_of_month", re.compile(r"\b(?:(?:at|by|until|from|in) )?(?:the )?(?P<edge>start|beginning|end|middle) of "
                                 + _MONTH + r"(?:,? (?P<y>\d{4}))?\b")),
    ("season", re.compile(r"\b(?:(?P<which>(?i:this|next|last)) |"
                          r"(?i:in|during|over|by|until|till|from|since|for) (?:the )?|"
                          r"(?:(?i:in|at|by|until|till|from|since|for) )?(?i:the) "
                          r"(?P<edge>start|beginning|end|middle) of (?:the )?)"
                          r"(?P<part>early |late |mid-?)?" + _SEASON + r"\b(?!['’]s\b)" + _SEASON_YEAR
                          + _NOT_A_MODIFIER)),
    ("season_year", re.compile(r"\b(?P<part>early |late |mid-?)?" + _SEASON + r" (?P<y>\d{4})(?:/\d{2})?\b")),
    ("part_of_month", re.compile(r"\b(?P<part>early|late) " + _MONTH + r"(?:,? (?P<y>\d{4}))?\b(?! \d)")),
    ("mid_month", re.compile(r"\bmid-?" + _MONTH + r"(?:,? (?P<y>\d{4}))?\b")),
    ("month_day", re.compile(r"\b" + _MONTH + r" (?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<y>\d{4})\b)?")),
    ("day_month", re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)? (?:of )?" + _MONTH + r"(?:,? (?P<y>\d{4}))?\b")),
    ("in_month", re.compile(r"\b(?:in|during|since|until|by|for|this|next|last) " + _MONTH
                            + r"(?:,? (?P<y>\d{4}))?\b(?! \d)")),
    ("edge_of_period", re.compile(r"\b(?:(?:by|until|at|from) )?the (?P<edge>start|beginning|end|middle) of "
                                  r"(?P<which>next|this|last|the) (?P<unit>week|month)\b", re.I)),
    ("day_beyond", re.compile(r"\bthe day (?P<beyond>after tomorrow|before yesterday)\b", re.I)),
    ("relative_day", re.compile(r"\b(?P<word>yesterday|today|tonight|tomorrow)\b", re.I)),
    ("ago", re.compile(r"\b" + _NUM + r" (?P<unit>day|week|month|year)s? ago\b", re.I)),
    ("in_n", re.compile(r"\bin " + _NUM + r" (?P<unit>day|week|month)s?\b", re.I)),
    ("relative_weekday", re.compile(r"\b(?P<which>last|next|this|on) " + _WEEKDAY + r"\b", re.I)),
    ("relative_period", re.compile(r"\b(?P<which>last|next|this) (?P<unit>week|weekend|month)\b", re.I)),
]

_PAST_HINT = re.compile(r"\b(?:was|were|went|did|had|ran|moved|left|started|finished|launched|ago|last|yesterday|"
                        r"(?!need\b|speed\b|feed\b|seed\b|indeed\b)\w+ed)\b", re.I)
_FUTURE_HINT = re.compile(r"\b(?:will|'ll|going to|gonna|plan|plans|planning|planned|intend|want to|hope to|"
                          r"next|upcoming|starts|begins|is due|scheduled)\b", re.I)
# A present progressive with a day is an arrangement: "I'm flying out on 3 March", "..., moving on June 1st" (a clause
# opening on its -ing verb). -ing words that are no verb are left out ("during June", "my sister's wedding").
_NOT_A_VERB = (r"(?!(?:during|morning|evening|nothing|something|anything|everything|thing|wedding|building|ceiling|"
               r"sibling|spring|string|king|ring|feeling|meeting)\b)")
_PROGRESSIVE = re.compile(r"(?:\b(?:am|is|are|'m|'re|(?:he|she|it|who|that|there)'s)\s+(?:\w+ly\s+|not\s+)?|^\s*)"
                          + _NOT_A_VERB + r"\w+ing\b", re.I)
# Where a clause ends: the verb a date goes with is in its own clause ("I signed the lease, moving on June 1st": the
# move is a plan whatever the signing was; "I moved on June 1st and I'm loving it": the move is past).
_CLAUSE_END = re.compile(r"[,;:.!?()]|\s[-–—]\s|\b(?:and|but|so|because|though|although|while|whereas)\b", re.I)


def _tense(text: str) -> str:
    """"future" for a plan, "past" for a story, "" when `text` says neither or both. The hints first (cheap); when
    they say nothing, the tenses of the parsed verbs ("took the kids to the zoo on Saturday": an irregular past)."""
    future = bool(_FUTURE_HINT.search(text) or _PROGRESSIVE.search(text))
    past = bool(_PAST_HINT.search(text))
    if not future and not past:
        tenses = {clause.tense for sentence in read(text) for clause in sentence.clauses} - {"present"}
        return next(iter(tenses)) if len(tenses) == 1 else ""
    return "future" if future and not past else "past" if past and not future else ""


def _clause_around(text: str, start: int, end: int) -> str:
    """The clause of `text` that holds `text[start:end]`."""
    before = [m.end() for m in _CLAUSE_END.finditer(text, 0, start)]
    after = _CLAUSE_END.search(text, end)
    return text[before[-1] if before else 0: after.start() if after else len(text)]


def _tense_of(text: str, start: int, end: int, context: str | None = None) -> str:
    """The tense a date at `text[start:end]` is said in: its own clause's, or else the whole sentence's."""
    sentence, offset = text, 0
    if context is not None:
        sentence, offset = (context, context.find(text)) if text in context else (text, 0)
    return _tense(_clause_around(sentence, start + offset, end + offset)) or _tense(context or text)


@dataclass(frozen=True)
class DateMention:
    """A date expression in a text and what it means."""

    start: int
    end: int
    text: str
    day: date  # the day meant, or the first day of the month or stretch meant
    precision: str  # "day" | "month" | "stretch" (a season, "early July": `last_day` and `name` say which)
    last_day: date | None = None
    name: str = ""  # how a stretch reads with its year: "summer 2026", "early July 2026", "winter 2026/27"

    @property
    def iso(self) -> str:
        return self.day.isoformat() if self.precision == "day" else self.day.strftime("%Y-%m")

    @property
    def last(self) -> date:
        """The last day meant: the day, the month's last day, or the stretch's."""
        if self.last_day is not None:
            return self.last_day
        if self.precision == "month":
            return _on(self.day.year, self.day.month, 31)
        return self.day


@dataclass(frozen=True)
class _Stretch:
    first: date
    last: date
    name: str


def _on(year: int, month: int, day: int) -> date:
    """The day of that month, or its last day when the month is shorter ("the 31st of June" is June 30)."""
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def _nearest_year(month: int, day: int, said: date, tense: str = "", whole_month: bool = False) -> date:
    """The year that makes (month, day) fit: for plans the next one on or after the day said (the month said, for
    `whole_month`: "in May" said in May is this May), for the past the last one on or before it, else the nearest."""
    candidates = [_on(year, month, day) for year in (said.year - 1, said.year, said.year + 1)]
    if tense == "future":
        return min(d for d in candidates if d >= (said.replace(day=1) if whole_month else said))
    if tense == "past":
        return max(d for d in candidates if d <= said)
    return min(candidates, key=lambda d: (abs((d - said).days), d < said))


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _number(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _season(name: str, year: int, part: str) -> _Stretch:
    """The months of a season that begins in `year` (winter: December to February), or its early, middle or late
    month (`part`: "early", "mid", "late", or "start", "middle", "end")."""
    first_month, months = SEASONS[name]
    label = f"{name} {year}" if first_month + months <= 13 else f"{name} {year}/{(year + 1) % 100:02d}"
    which = {"early": 0, "start": 0, "beginning": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}.get(part)
    offset, count = (which, 1) if which is not None else (0, months)
    first = _add_months(date(year, first_month, 1), offset)
    last = _add_months(first, count) - timedelta(days=1)
    if part in ("start", "beginning", "middle", "end"):
        return _Stretch(first, last, f"the {part} of {label}")
    return _Stretch(first, last, f"mid-{label}" if part == "mid" else f"{part} {label}" if part else label)


def _nearest_season(name: str, part: str, said: date, tense: str, which: str) -> _Stretch:
    """The season meant, said without its year: "next" is the next one not begun, "last" the last one over, "this"
    the one under way or else, like a season said plainly, the next one for a plan, the last one for a story, the
    nearest one otherwise."""
    options = [_season(name, year, part) for year in range(said.year - 2, said.year + 2)]
    if which == "next":
        return min((s for s in options if s.first > said), key=lambda s: s.first)
    if which == "last":
        return max((s for s in options if s.last < said), key=lambda s: s.first)
    under_way = [s for s in options if s.first <= said <= s.last]
    if under_way:
        return under_way[0]
    if tense == "future":
        return min((s for s in options if s.first > said), key=lambda s: s.first)
    if tense == "past":
        return max((s for s in options if s.last < said), key=lambda s: s.first)
    return min(options, key=lambda s: min(abs((s.first - said).days), abs((s.last - said).days)))


def _resolve_stretch(kind: str, m: re.Match[str], said: date, tense: str) -> _Stretch | None:
    """A season or a part of a month, as the days it covers."""
    groups = m.groupdict()
    part = (groups.get("edge") or groups.get("part") or "").strip().lower().rstrip("-")
    if kind in ("season", "season_year"):
        season = groups["season"].lower()
        if groups.get("y"):
            return _season(season, int(groups["y"]), part)
        return _nearest_season(season, part, said, tense, (groups.get("which") or "").lower())
    month = MONTHS[groups["month"]]
    year = int(groups["y"]) if groups.get("y") else _nearest_year(month, 1, said, tense, whole_month=True).year
    first = date(year, month, 1 if part == "early" else 21)
    last = _on(year, month, 10 if part == "early" else 31)
    return _Stretch(first, last, f"{part} {first.strftime('%B %Y')}")


def _resolve(kind: str, m: re.Match[str], said: date, tense: str) -> tuple[date, str] | None:
    groups = m.groupdict()
    year = int(groups["y"]) if groups.get("y") else None
    if kind == "iso":
        return date(int(groups["y"]), int(groups["m"]), int(groups["d"])), "day"
    if kind in ("edge_of_month", "mid_month", "month_day", "day_month", "in_month"):
        month = MONTHS[groups["month"]]
        if kind == "month_day" or kind == "day_month":
            day_of_month = int(groups["d"])
        elif kind == "mid_month" or groups.get("edge") == "middle":
            day_of_month = 15
        elif groups.get("edge") == "end":
            day_of_month = 31
        else:
            day_of_month = 1
        if year is not None:
            resolved = date(year, month, min(day_of_month, calendar.monthrange(year, month)[1]))
        else:
            resolved = _nearest_year(month, day_of_month, said, tense, whole_month=kind == "in_month")
        return resolved, "month" if kind == "in_month" else "day"
    if kind == "edge_of_period":
        which, unit, edge = groups["which"].lower(), groups["unit"].lower(), groups["edge"].lower()
        step = {"last": -1, "this": 0, "the": 0, "next": 1}[which]
        if unit == "week":
            monday = said - timedelta(days=said.weekday()) + timedelta(weeks=step)
            return monday + timedelta(days={"start": 0, "beginning": 0, "middle": 2, "end": 4}[edge]), "day"
        first = _add_months(said, step)
        last = calendar.monthrange(first.year, first.month)[1]
        return first.replace(day={"start": 1, "beginning": 1, "middle": 15, "end": last}[edge]), "day"
    if kind == "day_beyond":
        return said + timedelta(days=2 if groups["beyond"].lower() == "after tomorrow" else -2), "day"
    if kind == "relative_day":
        offset = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}[groups["word"].lower()]
        return said + timedelta(days=offset), "day"
    if kind == "ago" or kind == "in_n":
        n = _number(groups["n"]) * (-1 if kind == "ago" else 1)
        unit = groups["unit"].lower()
        if unit == "day":
            return said + timedelta(days=n), "day"
        if unit == "week":
            return said + timedelta(weeks=n), "day"
        if unit == "month":
            return _add_months(said, n), "month"
        return None  # years: too coarse for a key date
    if kind == "relative_weekday":
        which, weekday = groups["which"].lower(), WEEKDAYS[groups["weekday"].lower()]
        ahead = (weekday - said.weekday()) % 7
        behind = (said.weekday() - weekday) % 7 or 7
        if which == "last" or (which == "on" and tense == "past"):
            return said - timedelta(days=behind), "day"
        if which == "next":
            return said + timedelta(days=ahead or 7), "day"
        return said + timedelta(days=ahead), "day"
    if kind == "relative_period":
        which, unit = groups["which"].lower(), groups["unit"].lower()
        step = {"last": -1, "this": 0, "next": 1}[which]
        if unit == "week":
            return said + timedelta(weeks=step), "day"
        if unit == "weekend":
            saturday = said + timedelta(days=(5 - said.weekday()) % 7)
            return saturday + timedelta(weeks=step), "day"
        return _add_months(said, step), "month"
    return None


_STRETCH_KINDS = ("season", "season_year", "part_of_month")


def find_dates(text: str, said_at: datetime | date, context: str | None = None) -> list[DateMention]:
    """Every date expression in `text`, resolved against `said_at`, in text order.

    The tense of a date's own clause, or else of `context` (the whole
    sentence, when `text` is part of it), tells plans from the past: "in April"
    is next April in a plan, last April in a story.
    """
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            # "since March" is a March gone by, whatever the rest of the sentence says
            tense = "past" if m.group(0).lower().startswith("since ") else _tense_of(text, m.start(), m.end(), context)
            if kind in _STRETCH_KINDS:
                stretch = _resolve_stretch(kind, m, said, tense)
                if stretch is not None:
                    taken.append((m.start(), m.end()))
                    found.append(DateMention(m.start(), m.end(), m.group(0), stretch.first, "stretch",
                                             stretch.last, stretch.name))
                continue
            try:
                resolved = _resolve(kind, m, said, tense)
            except (ValueError, KeyError):
                resolved = None
            if resolved is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(DateMention(m.start(), m.end(), m.group(0), resolved[0], resolved[1]))
    return sorted(found, key=lambda d: d.start)


def human(mention: DateMention) -> str:
    """How a resolved date reads in a sentence: "2024-06-03", "October 2024", or "summer 2024"."""
    if mention.precision == "day":
        return mention.day.isoformat()
    if mention.precision == "stretch":
        return mention.name
    return mention.day.strftime("%B %Y")


_DAY = r"(?P<{0}>\d{{1,2}})(?:st|nd|rd|th)?"
_TO = r"\s*(?:to|until|till|through|-|–)\s*"
# "from 3 to 10 June", "3-10 June", "from June 3 to 10", "from June 3 to July 2": one stretch of days.
_RANGES = (
    re.compile(r"\b(?:from )?" + _DAY.format("d1") + _TO + _DAY.format("d2") + r" (?:of )?" + _MONTH
               + r"(?:,? (?P<y>\d{4}))?\b"),
    re.compile(r"\b(?:from )?" + _MONTH.replace("month", "m1") + " " + _DAY.format("d1") + _TO
               + r"(?:" + _MONTH.replace("month", "m2") + " )?" + _DAY.format("d2") + r"\b(?:,? (?P<y>\d{4})\b)?"),
)
# "from 2025-06-03 to 2025-06-10": a stretch already resolved (as a fact's sentence says it).
_ISO_RANGE = re.compile(r"\b(?:from )?(?P<first>\d{4}-\d{2}-\d{2})" + _TO + r"(?P<last>\d{4}-\d{2}-\d{2})\b")


@dataclass(frozen=True)
class DateRange:
    """A stretch of days said as one ("from 3 to 10 June") and the days it means."""

    start: int
    end: int
    text: str
    first: date
    last: date


def find_date_range(text: str, said_at: datetime | date) -> DateRange | None:
    """The first stretch of days in `text`, resolved against `said_at`: as said when it says its year, else the
    last one begun on or before that day when its clause speaks of the past, else the next one not yet over."""
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    for pattern in _RANGES:
        m = pattern.search(text)
        if not m:
            continue
        groups = m.groupdict()
        first_month = MONTHS[groups.get("month") or groups["m1"]]
        last_month = MONTHS[groups["m2"]] if groups.get("m2") else first_month
        first_day, last_day = int(groups["d1"]), int(groups["d2"])
        try:
            if groups.get("y"):
                year = int(groups["y"])
                first, last = date(year, first_month, first_day), date(year, last_month, last_day)
            else:
                past = _tense_of(text, m.start(), m.end()) == "past"
                first, last = _nearest_stretch(first_month, first_day, last_month, last_day, said, past)
        except ValueError:
            continue
        if last >= first:
            return DateRange(m.start(), m.end(), m.group(0), first, last)
    m = _ISO_RANGE.search(text)
    if m:
        try:
            first, last = date.fromisoformat(m.group("first")), date.fromisoformat(m.group("last"))
        except ValueError:
            return None
        if last >= first:
            return DateRange(m.start(), m.end(), m.group(0), first, last)
    return None


def _nearest_stretch(first_month: int, first_day: int, last_month: int, last_day: int, said: date,
                     past: bool) -> tuple[date, date]:
    """The days of a stretch said without its year: for the past the last one begun by `said`, else the first one
    not over by `said` ("from 1 to 5 July" said on 2 July is this July's, under way)."""
    stretches = []
    for year in (said.year - 1, said.year, said.year + 1):
        first = _on(year, first_month, first_day)
        stretches.append((first, _nearest_year(last_month, last_day, first, "future")))
    if past:
        return max(s for s in stretches if s[0] <= said)
    return min(s for s in stretches if s[1] >= said)


_RELATIVE = re.compile(r"\b(?:yesterday|tomorrow|ago|last|next|this|in (?:\d|a|an|one|two|three|four|five|six|seven|"
                       r"eight|nine|ten|eleven|twelve|a couple|a few)\b)", re.I)


# A preposition of time that takes its day without "on": "from", "to", "until", "after" 14 June.
_TAKES_A_BARE_DAY = re.compile(r"(?i)\b(?:from|to|until|till|through|between|after|before|since|by) $")


def with_dates_resolved(text: str, said_at: datetime | date) -> str:
    """`text` with its stretch of days and its relative dates said as calendar dates: "I went yesterday" said on
    2023-05-08 -> "I went on 2023-05-07"; "from 3 to 10 June" -> "from 2025-06-03 to 2025-06-10". A memory read
    months later must not say "yesterday"."""
    stretch = find_date_range(text, said_at)
    if stretch is not None:
        text = (f"{text[: stretch.start]}from {stretch.first.isoformat()} to {stretch.last.isoformat()}"
                f"{text[stretch.end:]}")
    for mention in reversed(find_dates(text, said_at)):
        if re.match(r"(?i)this (?:week|weekend|month)", mention.text):
            continue  # the present stretch ("this week") the sentence is about
        if not _RELATIVE.search(mention.text) and re.search(r"\d{4}", mention.text):
            continue  # a calendar date with its year: as said ("3 March" alone is the next or last 3 March)
        before, after = text[: mention.start], text[mention.end:]
        if re.search(r"(?i)\b(?:on|in) $", before):  # "on 3 March" -> "on 2024-03-03", not "on on ..."
            before = before[: -3]
        elif mention.precision == "day" and _TAKES_A_BARE_DAY.search(before):
            text = f"{before}{mention.day.isoformat()}{after}"  # "from 14 June" -> "from 2026-06-14", not "from on"
            continue
        if mention.precision == "day" and re.match(r"'s\b", after):  # "yesterday's class" -> "the 2023-05-07 class"
            text = f"{before}the {mention.day.isoformat()}{after[2:]}"
            continue
        text = before + as_said(mention) + after
    return text


def as_said(mention: DateMention) -> str:
    """How a date reads in a fact, no more precise than it was said: "on 2023-05-07", "in the week of 2023-05-01"
    (for "last week"), "on the weekend of 2023-05-06", "in May 2023"."""
    if mention.precision == "day" and re.search(r"(?i)weekend\b", mention.text):
        return f"on the weekend of {mention.day.isoformat()}"
    if mention.precision == "day" and re.search(r"(?i)week\b", mention.text):
        return f"in the week of {mention.day.isoformat()}"
    if mention.precision == "stretch":  # "by the end of summer" -> "by the end of summer 2026"
        lead = re.match(r"(?i)(in|during|over|by|until|till|from|since|for|at) ", mention.text)
        return f"{lead.group(1) if lead else 'in'} {mention.name}"
    return f"on {mention.day.isoformat()}" if mention.precision == "day" else f"in {human(mention)}"
