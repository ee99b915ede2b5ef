"""The words and patterns by which a question or a text says when (``memsieve.text.when`` reads them).

Every pattern reads text as ``memsieve.text.when._plain`` spells it: casefolded, plain
apostrophes, one space between words. English only; every word list of the time stage is here.
"""

from __future__ import annotations

import calendar
import re

#: Spelled-out counts a question uses with a unit ("three weeks ago").
COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3, "several": 4,
}
#: Unit -> (its length in days, the half-width of the window around "N units ago", in days).
UNITS = {"day": (1, 1), "week": (7, 3), "fortnight": (14, 5), "month": (30, 15), "year": (365, 120)}
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
#: Abbreviated weekdays, read only after "last" ("last sat"): "on sun", "this sat" are too often no day.
WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5,
                "sun": 6}
FULL_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS = dict(FULL_MONTHS)
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name != "May"})
MONTHS["sept"] = 9
#: Words that ask for the earliest or the latest of several versions of a fact.
EARLIEST = ("first", "earliest", "initially", "originally", "at first", "in the beginning", "to begin with",
            "the oldest")
LATEST = ("most recent", "most recently", "latest", "last time", "currently", "current", "right now", "these days",
          "nowadays", "now", "still", "anymore", "any more", "the newest", "lately", "at the moment", "at present",
          "presently")
#: Of the latest's words, those that ask about the present: they win over an earliest word said
#: anywhere ("the first aid kit I bought, where is it now?" asks where it is now).
PRESENT = ("currently", "right now", "these days", "nowadays", "now", "at the moment", "at present", "presently")
#: Nouns "first" is part of, where it orders nothing ("first aid", "my first name", "first of all").
FIRST_NOUNS = ("aid", "name", "names", "floor", "floors", "class", "lady", "base", "person", "language", "edition",
               "gear", "place", "prize", "mate", "responder", "responders", "cousin", "cousins", "grade", "half",
               "quarter", "round", "period", "inning", "chapter", "act", "thing in", "thing on", "thing tomorrow",
               "thing today", "thing tonight", "things first", "of all", "off",
               "and foremost", "hand", "rate", "degree", "team", "string", "world", "down", "light", "course",
               "impression", "impressions", "baseman", "officer", "minister", "amendment", "lieutenant",
               "week of", "weekend of", "days of")
#: Words that may follow a bare "may" or an abbreviated month that is a month ("in May and June",
#: "in Dec when ..."); any other word makes it none ("this may sound", "Mar del Plata").
AFTER_MONTH = frozenset(
    "and or to through thru until till when while before after of last this that i we he she they my our at in "
    "on for is was were did so then".split())
#: Words that make "<month> <number> <word>" a count, not a date ("march 5 miles", "may 3 times").
UNIT_NOUNS = frozenset(
    "mile miles km kms kilometer kilometers kilometre kilometres meter meters metre metres feet foot ft yards "
    "laps time times minute minutes mins min hour hours hrs second seconds secs day days week weeks month months "
    "year years people persons kids children dollars bucks euros pounds lbs lb kg kilos grams steps reps sets "
    "pages books items pieces points goals cups percent".split())

def count_of(word: str) -> int:
    """A count said in digits or in words ("3", "three", "a couple of")."""
    return int(word) if word.isdigit() else COUNT_WORDS[word]


_COUNT = "|".join(sorted((re.escape(w) for w in COUNT_WORDS), key=len, reverse=True))
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUM = rf"\d+(?:\.\d+)?|{_COUNT}"
_UNIT = "day|week|fortnight|month|year"

#: "two weeks ago", "half a year ago", "a week and a half ago", "1.5 years ago".
AGO = re.compile(rf"\b(?:(half)\s+an?|({_NUM})(\s+and\s+a\s+half)?)\s+({_UNIT})s?(\s+and\s+a\s+half)?\s+ago\b")
PAST = re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(\d+|{_COUNT})\s+({_UNIT})s?\b")
#: What is to come, dated from when it is said: "tomorrow", "tonight", "next month". ("In two
#: weeks" is left to its number, a value a fold may not lose anyway: read as a phrase it also
#: took a length of time, "finished in three days", for a date.)
AHEAD = re.compile(r"\b(?:day after tomorrow|tomorrow|tonight|next\s+(?:week|fortnight|month|year|weekend))\b")
#: "the last month", "over the last year", "in the last week": trailing, like "the past month"
#: ("the last week of June" is none: its month is read).
TRAILING = re.compile(r"\bthe\s+(?:last|past)\s+(week|fortnight|month|year)\b(?!\s+of\b)")
LAST_UNIT = re.compile(r"\b(last|this|past)\s+(week|fortnight|month|year|weekend)\b")
#: "the week before last", "the weekend before last": one unit before "last week".
BEFORE_LAST = re.compile(r"\b(?:the\s+)?(week|weekend|month|year)\s+before\s+last\b")
#: "over the weekend", "on the weekend": the last one, in a question about the past ("what did I do
#: over the weekend?"); none in one about a habit or a plan ("what do I usually do on the weekend?").
OVER_WEEKEND = re.compile(r"\b(?:over|on|during|at)\s+the\s+weekend\b(?!\s+of\b)")
#: Words before a date that set the window off from its day: "the week before August 3, 2023",
#: "two weeks before ...", "the Sunday before ...", "the Saturday after ...", "last weekend before ..."
#: (matched at the end of the question's words before the date).
RELATIVE_TO_DATE = re.compile(
    rf"\b(?:({_COUNT}|\d+)\s+(day|week|month|year)s?|the\s+(day|week|weekend|{'|'.join(WEEKDAYS)})"
    r"|(?:last\s+|that\s+)?(weekend))\s+(before|after)\s+(?:on\s+|the\s+)?$")
#: "what did I buy before the standing desk?": the events a question sets off from another
#: (memsieve.read.around); the last "before" or "after" of the question, and what follows it.
SET_OFF_EVENT = re.compile(r"\b(before|after)\s+(?!(?:last|that|then|now|this|it)\b)([^?!.]+?)\s*[?!.]*$")
#: Units a question's "ago" may count in besides ``AGO``'s ("two nights ago", "3 hours ago", "three
#: weekends ago"); read for a question's window only, not for the dates a text says.
AGO_MORE = re.compile(rf"\b({_NUM})\s+(night|hour|minute|weekend)s?\s+ago\b")
#: Parts of a month or a year, weeks of a month, hours, decades, "this past Monday", "the previous
#: week" and abbreviated units: a question's window only (memsieve.text.when_parts).
_PART = r"(?:(early|mid|late)[\s-]+|the\s+(beginning|start|middle|end)\s+of\s+)"
PART_OF_MONTH = re.compile(rf"\b{_PART}(?:({_MONTH})\b(?:\.?,?\s+(?:of\s+)?(\d{{4}})\b)?|(last|this|the)\s+month\b)")
PART_OF_YEAR = re.compile(rf"\b{_PART}(?:((?:19|20)\d{{2}})\b(?!['.,:/-]?\d)|(last|this|the)\s+year\b)")
WEEK_OF_MONTH = re.compile(rf"\bthe\s+(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+week\s+of\s+({_MONTH})\b"
                           r"(?:\.?,?\s+(?:of\s+)?(\d{4})\b)?")
HOURS = re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(\d+|{_COUNT})\s+(?:hours?|hrs?)\b")
DECADES_AGO = re.compile(r"\b(a|one|two|three|\d+)\s+decades?\s+ago\b")
DECADE = re.compile(r"\b(?:in|during|from|of)\s+the\s+(?:(19|20)|')?(\d)0'?s\b")
ABBR_AGO = re.compile(rf"\b(\d+|{_COUNT})\s+(wks?|mos?|yrs?)\.?\s+ago\b")
ABBR_UNITS = {"wk": "week", "wks": "week", "mo": "month", "mos": "month", "yr": "year", "yrs": "year"}
THIS_PAST_WEEKDAY = re.compile(r"\bthis\s+past\s+(" + "|".join(WEEKDAYS) + r")\b")
PREVIOUS_UNIT = re.compile(r"\bthe\s+(?:previous|prior|preceding)\s+(week|weekend|month|year)\b")
#: "on the 15th" (of this month or the last), not "on the 3rd floor", "on the 2nd try".
DAY_OF_THIS_MONTH = re.compile(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b"
                               r"(?=\s*(?:[?.!,;]|$)|\s+(?:and|or|when|at|in|i|we|did|was|were|with)\b)")
#: "since Monday", "this afternoon", "the other week": a question's window only.
SINCE_WEEKDAY = re.compile(r"\bsince\s+(" + "|".join(WEEKDAYS) + r")\b")
THIS_AFTERNOON = re.compile(r"\b(this afternoon|earlier today)\b")
OTHER_WEEK = re.compile(r"\bthe other week\b")
ASKED_IN_PAST = re.compile(r"\b(?:did|was|were|had|happened|went|came)\b")
#: The seasons, as the northern hemisphere's meteorological ones: name -> first month (winter's
#: December belongs to the winter whose January follows it).
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = "|".join(SEASONS)
#: "last summer", "in the spring", "during the winter of 2022", "summer 2023": a season after a word
#: that dates it, or before a year ("spring water", "my fall on the ice" are none).
SEASON = re.compile(rf"\b(?:(last|this|past|in|during|over|since)\s+(?:the\s+)?({_SEASON})\b(?:\s+(?:of\s+)?(\d{{4}})\b)?"
                    rf"|({_SEASON})\s+(?:of\s+)?(\d{{4}})\b)(?!['-])")
#: "Q3", "q1 2024", "the first quarter of 2023", "last quarter", "this quarter".
QUARTER = re.compile(r"\b(?:q([1-4])|the\s+(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter"
                     r"|(last|this|past)\s+quarter)\b(?:\s+(?:of\s+)?(\d{4})\b)?")
WEEKDAY = re.compile(r"\b(last|this|on)\s+(" + "|".join(WEEKDAYS) + r")\b")
WEEKDAY_SHORT = re.compile(r"\b(last)\s+(" + "|".join(sorted(WEEKDAY_ABBR, key=len, reverse=True)) + r")\b\.?(?!['-])")
DAY_OF_MONTH = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b(?![.,:/-]?\d)")
DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(st|nd|rd|th)?\s+(of\s+)?({_MONTH})\b(?:\.?,?\s+(\d{{4}})\b)?")
IN_MONTH = re.compile(rf"\b(?:in|during|since|of|last|this)\s+({_MONTH})\b(?:\.?,?\s+(?:of\s+)?(\d{{4}})\b)?")
#: "March 2024", "sept. 2023" without a preposition.
MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b(?![.,:/-]?\d)")
#: "in 2023", "during 2022", "since 2021", "the summer of 2019": the whole year.
YEAR = re.compile(r"\b(?:in|during|since|throughout|of|from|the year)\s+((?:1[89]|20|21)\d{2})\b(?!['.,:/-]?\d)")
#: "2024-02-29": ISO-8601's date.
ISO_DATE = re.compile(r"(?<![\d/.-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d/-])")
#: "2/29/2024", "on 3/4": month first (day first only when the first number cannot be a month).
NUMERIC_DATE = re.compile(r"(?:\b(on|since|from)\s+)?(?<![\d/.-])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])")
#: "tonight" and "this weekend" ask about what is to come ("a film to watch tonight"): no window.
YESTERDAY = re.compile(r"\b(day before yesterday|yesterday|last night|today|this morning|this evening)\b")
RECENTLY = re.compile(r"\b(?<!most )(recently|the other day|lately)\b")  # "most recently" is an order
#: ("in the beginning of November" is a window, not the earliest.)
ORDER_EARLIEST = re.compile(r"\b(" + "|".join(re.escape(w) + (r"(?!\s+of\b)" if w == "in the beginning" else "")
                                            for w in EARLIEST) + r")\b")
ORDER_LATEST = re.compile(r"\b(" + "|".join(re.escape(w) for w in LATEST) + r")\b")
ORDER_PRESENT = re.compile(r"\b(" + "|".join(re.escape(w) for w in PRESENT) + r")\b")
#: "the last concert I went to", "when did I last see Tom": "last" asks for the latest where it dates
#: nothing ("last week", "last Monday", "last March", "last summer", "the last 10 days", "last
#: night" are windows, "last season" a period; "at last" is "finally"; "last name" names nothing).
_DATED_BY_LAST = "|".join(["week", "weekend", "fortnight", "month", "year", "night", "quarter", "time", "times",
                           "name", "names", "minute", "second", "season", "semester", "term", "resort", "straw", "but", "of", r"\d", *_COUNT.split("|"),
                           *WEEKDAYS, *WEEKDAY_ABBR, *(re.escape(m) for m in MONTHS),
                           "spring", "summer", "autumn", "fall", "winter",
                           "christmas", "xmas", "thanksgiving", "easter", "halloween"])
ORDER_LAST = re.compile(rf"(?<!\bat )(?<!\bbefore )\blast\b(?!\s+(?:{_DATED_BY_LAST})\b|\s*\d)")
NOT_ORDER_FIRST = re.compile(r"\bfirst[\s-]+(?:" + "|".join(re.escape(w) for w in FIRST_NOUNS) + r")\b")
SINCE_BEFORE = re.compile(r"\b(?:ever\s+)?since\s+$")
_NEXT_WORD = re.compile(r"\.?\s+([a-z]+)")
_NEXT_NUMBER = re.compile(r"\.?\s+\d+\b")


def month_is_said(q: str, word: str, end: int) -> bool:
    """Whether the month name ``word`` (ending at ``end`` in ``q``, no day nor year after it) names
    a month: not a possessive ("May's dog", "Jan's car"), and a bare "may" or an abbreviation only
    before the end, punctuation, a number or a word of ``AFTER_MONTH`` ("this may sound", "Mar del Plata")."""
    if q.startswith("'", end):
        return False
    if word in FULL_MONTHS and word != "may":
        return True
    if number := _NEXT_NUMBER.match(q, end):  # "in may 5 times"
        return not counts_units(q, number.end())
    nxt = _NEXT_WORD.match(q, end)
    return nxt is None or nxt.group(1) in AFTER_MONTH


def counts_units(q: str, end: int) -> bool:
    """Whether the word after ``end`` makes a number a count of units ("march 5 miles")."""
    nxt = _NEXT_WORD.match(q, end)
    return nxt is not None and nxt.group(1) in UNIT_NOUNS
