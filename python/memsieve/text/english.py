"""English: the word lists and phrasings the default lexicon is built from (data only).

Each list was written for one purpose, said beside it, and is small on
purpose. memsieve.text.lexicon turns them into ``ENGLISH``; another language
is another module like this one, handed to ``Lexicon``.
"""

from __future__ import annotations

#: Words that say a fact changed: the state-change cues, grouped by what they say.
#: Each entry is a word or phrase whose usual sense is "no longer as before"
#: (negation, ending, replacement, correction, a change of value). Multi-word
#: cues are matched as phrases; "n't" is matched as the ending of a word.
CUES: dict[str, tuple[str, ...]] = {
    "negation": ("not", "n't", "cannot", "no longer", "anymore", "any more", "never again"),
    "replacement": ("instead", "switched", "swapped", "replaced", "changed", "change of plan",
                    "moved", "relocated", "traded"),
    "ending": ("quit", "stopped", "cancelled", "canceled", "sold", "retired", "closed", "ended",
               "finished", "graduated", "lost", "passed away", "died", "divorced", "broke up",
               "split up", "left my", "gave up", "dropped out"),
    "now": ("now", "these days", "nowadays", "from now on", "since then", "became", "become",
            "has become", "turned into"),
    "correction": ("actually", "correction", "oops", "i meant", "rather than", "mistake", "wrong"),
    "value": ("raised", "lowered", "increased", "decreased", "reduced", "went up", "went down",
              "renamed", "rescheduled", "postponed", "pushed back", "brought forward"),
}

#: Words that state a value though the keyword index drops them as stopwords: how
#: often ("once"), when ("9 pm", "after work"), a state ("off"), how many ("few"),
#: A NOOP folds a text only into a memory that says each of these the text says
#: (memsieve.gate.profiles.kde); a contraction is read as its words ("i'm": "am").
VALUE_WORDS = frozenset("""
once twice thrice am pm before after off on over under above below up down
always sometimes often usually rarely seldom occasionally few several many more less fewer most least
half quarter past early late next last first second third both either all other every out back away
""".split())

#: A pronoun's forms as the doer, the receiver and the owner: "my brother owes me" is
#: not folded into "I owe my brother", nor "we borrowed our neighbours' ladder" into
#: "our neighbours borrowed our ladder".
PRONOUN_FORMS = frozenset("i/me/my we/us/our he/him/his she/her they/them/their who/whom/whose".split())

#: Forms of one word that the next word chooses: "a cautious investor" and "an
#: aggressive investor" differ by one word, not two.
WORD_FORMS = frozenset({"a/an"})

#: Who does what a verb says: the words passed over between a subject and its verb, the
#: auxiliaries of the passive and the word before its doer. "I was hired by Ben" is not
#: folded into "I hired Ben"; "Ben hired me" restates it (memsieve.text.voice).
AUXILIARIES = frozenset("""
have has had will would shall should can could may might must do does did just also already recently
finally really still then first soon even often always never not don't didn't doesn't won't
""".split())
PASSIVE_AUXILIARIES = frozenset("am is are was were be been being get gets got gotten getting".split())
AGENT_WORDS = frozenset({"by"})
#: Who gives and who gets: one put in place of another in a text that otherwise lines up with a
#: memory changes it ("a gift from my aunt" / "a gift for my aunt", "I live with" / "without").
ROLE_PREPOSITIONS = frozenset("from to for with without into toward towards against".split())
#: "is knitting" says its verb in the active: the doer is the phrase before "is".
PROGRESSIVE_ENDING = "ing"
#: A verb's past and its participle where they differ, read as one verb ("my dad gave me a
#: car" / "I was given a car by my dad").
VERB_FORMS = frozenset("""
gave/given took/taken wrote/written saw/seen ate/eaten drove/driven chose/chosen spoke/spoken broke/broken
stole/stolen forgot/forgotten bit/bitten hid/hidden rode/ridden shook/shaken woke/woken knew/known grew/grown
threw/thrown drew/drawn flew/flown showed/shown blew/blown wore/worn tore/torn beat/beaten fell/fallen
did/done went/gone sang/sung began/begun rang/rung drank/drunk forgave/forgiven mistook/mistaken
""".split())
#: Verbs a question may ask about an event with where the event was told with another: "where
#: did I go first?" asks about "I visited ..." and "I flew to ...", "what did I watch last?"
#: about "I saw ..." (memsieve.read.versions.ordered_events, memsieve.read.around).
VERB_KIN = frozenset("""
go/visit/travel/fly/drive/trip/head buy/purchase/order see/watch see/visit see/meet start/begin
finish/complete eat/try
""".split())
#: A verb's plain form with its past and participle where they are not the plain form with "ed"
#: (which the index reads as the plain form already): "what did I buy last?" asks about the
#: texts that say "I bought ..." (memsieve.read.versions.ordered_events).
VERB_PASTS = frozenset("""
become/became begin/began/begun bite/bit/bitten blow/blew/blown break/broke/broken
bring/brought build/built buy/bought catch/caught choose/chose/chosen come/came
draw/drew/drawn drink/drank/drunk drive/drove/driven eat/ate/eaten fall/fell/fallen feed/fed feel/felt
fight/fought find/found fly/flew/flown forget/forgot/forgotten get/got/gotten give/gave/given go/went/gone
grow/grew/grown hang/hung hear/heard hide/hid/hidden hold/held keep/kept know/knew/known
lead/led leave/left lend/lent lose/lost make/made mean/meant meet/met pay/paid ride/rode/ridden
ring/rang/rung rise/rose/risen run/ran say/said see/saw/seen seek/sought sell/sold send/sent
shake/shook/shaken shoot/shot show/showed/shown sing/sang/sung sink/sank/sunk sit/sat sleep/slept
speak/spoke/spoken spend/spent stand/stood steal/stole/stolen stick/stuck swim/swam/swum
take/took/taken teach/taught tell/told think/thought throw/threw/thrown understand/understood
wake/woke/woken wear/wore/worn win/won write/wrote/written
""".split())

#: Contractions, read as their two words ("I'm not" says the denial of "I am not"); "'s" is
#: "is" only after the hosts ("it's", "she's"), elsewhere a possessive ("Tom's").
CONTRACTIONS = frozenset("n't/not 'm/am 're/are 'll/will 've/have 'd/would/had 's/is".split())
POSSESSIVE_ENDING = "'s"
CONTRACTION_HOSTS = frozenset("it that he she there here what who where how".split())

#: The verbs that put a fact in the past or the present: "I was a teacher" is
#: not folded into "I am a teacher", nor the other way round (a text without
#: either says no tense: "I work as a nurse" / "I'm a nurse").
PAST_WORDS = frozenset("""
was were went came saw did had got made took gave left bought brought ate drank ran met sold told thought
found began became grew knew wrote spoke broke chose drove flew forgot lost paid sent spent taught won wore
swam sang rode fell felt kept slept built heard held meant stood struck threw understood froze hid hung lent
shook sank stole swept swore tore wept rang sought caught fought dealt dug fled forgave knelt leapt learnt
dreamt shone sprang swung withdrew mistook overslept used
""".split())
PRESENT_WORDS = frozenset("am is are".split())
FUTURE_WORDS = frozenset("will gonna shall".split())

#: A word with this ending is a verb in the past ("worked", "adopted") unless it is
#: one of NOT_PAST (whose two-word entries are a verb after another: "have got" is "have");
#: a text that says nothing but the past is not folded into one that says no tense ("I
#: worked at Google" / "I work at Google").
PAST_ENDING = "ed"
NOT_PAST = frozenset("""
hundred indeed need speed seed feed bleed breed sacred naked wicked kindred rugged beloved aged red bed
wed shed sled fled bred ted ned fred
""".split()) | {"have got", "has got"}

#: Past verbs that tell of a state, not of a thing that happened: "I lived in Austin" and
#: "The meeting was on Tuesday" may be replaced by a later statement, where "I went to a jazz
#: concert" and, later, "I went to a rock concert" both stay true (memsieve.text.events) ...
STATE_PAST = frozenset("""
was were had used lived worked owned loved liked hated preferred wanted needed knew thought believed
felt meant seemed looked sounded belonged stayed remained kept held lasted cost weighed measured
""".split())
#: The pronouns that do what the next verb says, and the words passed over between one and its
#: verb, when a text is read for a thing someone did ("I just adopted a cat"); any other verb
#: after one of them ("I love", "we have", "I've tried") tells of now or later.
DOERS = frozenset("i we you he she they".split())
#: Verbs of a thing done whose past is spelled as their plain form: after "she" or a name the
#: plain form would take an "s" ("she reads"), so "she read Dune" is past; after one of
#: PLAIN_DOERS it is past only where the text says so otherwise ("I read Dune last month", "I read
#: it and loved it"; "I read every night" is a habit).
PLAIN_PASTS = frozenset("read put cut hit set shut split spread beat cast burst broadcast".split())
PLAIN_DOERS = frozenset("i we you they".split())
EVENT_ADVERBS = frozenset("just also already recently finally really then first even actually eventually".split())
#: A past verb and the word after it that say, as a whole clause, nothing done: "You got this!"
#: and "we got this" cheer someone on. Followed by more words, or by no clause end, the verb is
#: read as any other. "I got it!" and "I got them!" stay things done: after "did you get the job
#: (the pastries)?" they are one.
SET_PHRASES = frozenset({"got this"})

#: The words of a question that ask what happened, not about what: "what happened yesterday?",
#: "what did I get up to last weekend?" ask about a time alone, and the memories of that time
#: answer them before any other (memsieve.read.when).
HAPPENING_WORDS = frozenset("""
happen happened happening do did done doing get got up new anything something everything stuff tell
day news going on
""".split())

#: Words that say a fact is only planned, wished, tried, nearly done or owed, not done or
#: held: "I'm planning to quit my job" is not "I quit my job", nor "I almost missed my
#: flight" "I missed my flight", nor "I'm scheduled for knee surgery" "I had knee surgery". A
#: text that says none of them is not folded into a memory that says one, nor the other way
#: round (memsieve.text.marks). Two-word entries are read as phrases ("going to"; "going"
#: alone is a way to go).
MODAL_WORDS = frozenset("""
plan plans planning planned want wants wanted wanna hope hopes hoping hoped wish wishes wishing intend intends
intending intended considering thinking try tries trying tried attempt attempting attempted expecting aiming
might should must ought almost nearly barely gonna
""".split()) | {"going to", "would like", "about to", "supposed to", "meant to", "scheduled for", "scheduled to",
                "booked for"}

#: Stopwords that say a value when put in another word's place in a text that lines up with its
#: memory ("away until June 3" / "away from June 3", "unless it rains" / "if it rains", "each
#: Friday" / "some Fridays"): the index drops them, so only the alignment sees them change.
PLACED_VALUE_WORDS = frozenset("until unless if each some any can could will would".split())

#: Words that say a fraction, and the value each says: "half a pound" is 0.5 pound, "a pound
#: and a half" 1.5 (memsieve.text.amounts). The index reads both as "pound" and "half".
FRACTION_WORDS = {"half": 0.5, "quarter": 0.25, "quarters": 0.25}
#: Words that count one thing in such a phrase ("a pound and a half").
ONE_WORDS = frozenset({"a", "an"})
#: Words after a fraction that make it a time of day, not an amount ("half past six", "a quarter to nine").
CLOCK_WORDS = frozenset({"past", "to", "after"})
#: Units a measure of one is said in with "a" or "an" ("for about an hour", "once a week"): the
#: index reads "an hour" as the word "hour" alone, where "two hours" is 2 and "hour", so a text
#: that says an hour could be folded into a memory that says two (memsieve.text.amounts).
ONE_UNITS = frozenset("second minute hour day night week weekend month year decade mile kilometer pound kilo "
                      "dollar euro".split())
#: Words before "a"/"an" that make the unit a measure, not a thing ("for an hour", "once a week",
#: "more than a year"; not "have a nice day" or "a day trip" after "for").
MEASURE_LEADS = frozenset("for about around almost nearly over under within in every once twice per than".split())

#: Words that join two clauses, each of which says its own values: "my brother lives in Denver
#: and my sister lives in Austin" says Austin of the sister (memsieve.text.clauses).
CLAUSE_JOINTS = frozenset("and but while whereas although".split())

#: Words a restatement adds without saying more: "as I said", "honestly", "lol". A text
#: that lines up with a memory and adds only these is a repeat (memsieve.text.marks).
FILLER_WORDS = frozenset("""
honestly frankly basically literally seriously truly lol haha hehe lmao btw anyway anyways like said mention
mentioned told say tell know guess mean um uh hmm right yeah yep yes ok okay well again though too also
definitely totally just really pretty quite kind sort
""".split())

#: Words that deny what a text says. Two texts whose denials differ say opposite
#: things however alike their other words ("I smoke" / "I don't smoke"), so
#: neither is folded into the other; "n't" is read as "not".
POLARITY_WORDS = frozenset("not no never nothing nobody none nowhere neither nor without cannot".split())

#: Signs that name a currency: "80 pounds" and "80 euros" differ by a word the
#: index holds, "£80" and "€80" only by a sign it does not.
CURRENCY_SIGNS = "$£€¥₹₩₽¢₺₪฿"

#: Cues that are the ending of a word, not a word: "don't", "aren't", "wasn't".
CUE_SUFFIXES: tuple[str, ...] = ("n't",)

#: Words that name a person by their relation to the speaker. A fact's subject is
#: often such a person ("my sister Lena ..."), and two facts about one person are
#: not versions of each other for sharing her: a version shares what changed.
#: Professions are left out: "works as a dentist" is what a fact says, not who.
RELATIONS = frozenset("""
mother mum mom father dad parent parents son daughter child children kid kids baby wife husband
partner boyfriend girlfriend fiance fiancee spouse brother sister sibling uncle aunt cousin niece
nephew grandmother grandfather grandma grandpa granny grandparents grandson granddaughter
in-law stepmother stepfather stepson stepdaughter friend colleague coworker co-worker manager boss
neighbour neighbor roommate flatmate housemate landlord landlady
""".split())

#: Relation words that name the same person as another: whom a text is about reads them as it
#: ("forget my mom's birthday" is the mother's; memsieve.text.subjects).
RELATION_ALIASES = {"mom": "mother", "mum": "mother", "dad": "father", "grandma": "grandmother",
                    "granny": "grandmother", "grandpa": "grandfather", "kid": "child", "kids": "children",
                    "coworker": "colleague", "co-worker": "colleague", "neighbor": "neighbour"}

#: Words that name the speaker: a text whose first person reference is one of
#: these is about the user (memsieve.text.subjects).
SELF_WORDS = frozenset("i me my mine myself we us our ours ourselves i'm i've i'd i'll we're we've we'd we'll".split())

#: The first-person possessives among them: before a relation word ("my mother")
#: they name that person, not the user.
SELF_POSSESSIVES = frozenset({"my", "our"})

#: Pronouns for someone other than the speaker: "forget her birthday" is not the user's.
OTHER_PRONOUNS = frozenset(
    "he him his himself she her hers herself they them their theirs themselves he's she's they're".split())

#: Animals a fact is often about, named like a relation ("my dog weighs 30 kilos" is
#: not the user's weight). Read only for whom a fact is about, not as relations.
COMPANIONS = frozenset("dog dogs cat cats puppy kitten pet pets parrot hamster rabbit horse pony".split())

#: The opening of a request to forget, up to its verb: cut before the subject is read
#: ("Could you please forget ...", "Delete ...", "Stop storing ...").
REQUEST_OPENING = (
    r"^.*?\b(?:forget|delete|remove|erase|wipe|scrap|discard|purge|(?:stop|quit)\s+(?:remembering|storing|keeping)"
    r"|(?:don'?t|do not)\s+(?:keep|store|remember))\b"
)

#: The request's own framing, where the user speaks of having said it ("what I told
#: you about", "that I mentioned"): cut too, so its "I" does not make the user the subject.
REQUEST_FRAMING = (
    r"\b(?:everything|anything|all|what|that|things?|stuff)?\s*(?:i|we)\s+(?:said|told|mentioned|shared|wrote|"
    r"typed|say|tell|mention)(?:\s+(?:you|to you))?\b"
)

#: Words a request to forget is made of, not what it is about.
REQUEST_WORDS = frozenset((
    "please forget delete remove erase wipe drop scrap discard purge clear keep store save remember "
    "don't do not anymore any more everything anything all about what that which i you me told said "
    "mentioned shared shouldn't have should told tell info information stuff thing things details "
    "detail ever again my mine our the a an of from regarding concerning "
    # what a request is padded with: thanks, interjections, hedges, and the question words of
    # "forget how much I weigh"
    "thanks thank ok okay oh gosh really actually sorry hey um uh well just now pls plz kindly also too "
    # "everything you know about Sandy": what the assistant knows is the request's framing
    "know knew known remember remembered "
    "how much many where when who whom whose why"
).split())

#: A clause that asks *not* to forget ("don't forget my birthday", "never forget ..."): dropped from a
#: request, which then asks only what its other clauses ask. Matched on lowercased text, apostrophes folded.
#: The negation may stand a few words before the verb ("I don't want you to forget", "don't you dare
#: delete"), the verb may be any of its forms ("make sure it's not forgotten"), and a clause that asks
#: to keep ("remember my birthday") or dreads the loss ("forgetting it would be terrible") is one too.
_LOSE = r"(?:forget|forgets|forgot|forgotten|delete|deleted|remove|removed|erase|erased|wipe|wiped|purge|purged" \
        r"|lose|lost)"
KEEP_REQUEST = (
    r"\b(?:don'?t|do not|dont|never|not|won'?t|will not|shouldn'?t|should not|mustn'?t|must not|can'?t|"
    r"cannot|wouldn'?t|would not|didn'?t|did not|doesn'?t|does not|haven'?t|have not|hasn'?t|has not|"
    r"isn'?t|wasn'?t|aren'?t|weren'?t|no one|nobody)\s+(?:[\w']+\s+){0,4}?" + _LOSE + r"\b"
    r"|^\s*(?:(?:please|pls|kindly|do|always|just|and|so)\s+)*(?:remember|keep|save|store|hold on to|hang on to)\b"
    r"|^(?=.*\b(?:terrible|awful|bad|sad|horrible|shame|disaster|unacceptable|upsetting|mistake|hurt)\b)"
    r".*\b(?:forgetting|deleting|erasing|losing|if you (?:ever )?" + _LOSE + r")\b"
    # a question about forgetting, not a request ("did you forget my birthday?", "why have you deleted ...")
    r"|^\s*(?:(?:why|when|how come|so)\s+)?(?:did|have|has|had|do|does|were|was)\s+(?:you|it|they|we)\b"
    r"(?:\s+[\w']+){0,3}?\s+" + _LOSE + r"\b"
    # a complaint about what was done ("you forgot my birthday last year")
    r"|\byou(?:'ve|'d)?\s+(?:[\w']+\s+){0,2}?(?:forgot|forgotten|deleted|erased|removed|lost|wiped|purged)\b"
    # someone else's words ("my sister said forget it", "he told me to delete ..."); the user's own stay
    r"|\b(?!(?:i|we)\b)[a-z']+\s+(?:said|says|told\s+\w+|tells\s+\w+|asked\s+\w+|asks\s+\w+|wants?\s+\w+|"
    r"wanted\s+\w+|thinks?|thought)\s+(?:(?:that|to|you|me|i|we|should|would|could|must)\s+)*" + _LOSE + r"\b"
    # what the user may ask one day ("maybe tomorrow I'll ask you to delete ...", "if I tell you to forget ...")
    r"|\b(?:i'?ll|i will|i might|i may|i could|if i|if we|when i)\s+(?:[\w']+\s+){0,3}?(?:ask|tell)\s+you\s+to\b"
)

#: A clause that names what is to be kept out of the request ("... except my birthday", "not my email",
#: "instead of my phone number"): it asks nothing, and lends no words to the asking clause.
REQUEST_EXCEPTION = (
    r"^\s*(?:(?:and|but|though|yet)\s+)?(?:not|except(?: for)?|other than|rather than|apart from|aside from|"
    r"excluding|instead of|save for|leave out|leaving out)\b"
)

#: A clause that takes back what the request asked before it ("forget my birthday? no wait, keep it"):
#: the clauses before it ask nothing then.
RETRACT_REQUEST = (
    r"^\s*(?:(?:no|oh|um|uh|actually|hmm|sorry|on second thought)\s+)*(?:wait|never ?mind|scratch that|"
    r"cancel(?: that| it)?|keep (?:it|that|them|those)|leave (?:it|that|them|those)|don'?t(?: do it)?|ignore that)"
    r"(?:\s+(?:please|then|after all|actually|for now))*\s*$"
)

#: Where a request's clauses part: punctuation, and "but" ("don't forget mine, but forget Tom's").
CLAUSE_BREAK = (r"[,;.!?]+|\bbut\b(?!\s+not\b)|\binstead\b(?!\s+of\b)"
                r"|(?=\b(?:except|other than|rather than|apart from|aside from|excluding|instead of|but not)\b)")

#: Where one request to forget names two of the user's own things ("forget my address and my job"): an
#: "and" or a comma before a first-person possessive. Each side is then asked on its own (memsieve.write.forgetting).
REQUEST_CONJUNCTION = r"(?:\s*,\s*(?:(?:and|&|as well as|plus)\s+)?|\s+(?:and|&|as well as|plus)\s+)(?=(?:my|our)\b)"

#: Words that ask for the older version of a fact, not the fact itself.
#: A fact a request to forget names by its noun, and how a memory states it without the noun:
#: "forget Leo's job" names "Leo works as a chef" (memsieve.write.forgetting). Each pattern reads
#: the text lowercased; only the plain ways of saying the fact, not every word near it ("I work
#: out", "it worked" state no job).
FACT_STATEMENTS = (
    ("job", r"\b(?:works?|worked|working)\s+(?:as|at|for)\b|\b(?:employed|hired)\s+(?:as|at|by)\b"),
    ("address", r"\b(?:lives?|living)\s+(?:in|at|on|near)\b"),
    ("birthday", r"\bborn\s+on\b|\bborn\s+in\s+(?:(?:19|20)\d\d|january|february|march|april|may|june|july|"
                 r"august|september|october|november|december)\b"),
    ("allergy", r"\ballergic\s+to\b"),
    ("salary", r"\b(?:earns?|earning)\s+(?:about\s+|around\s+|over\s+)?(?:[$€£]\s?\d|\d[\d,.]*\s*(?:k\b|dollars|"
               r"euros|pounds|(?:a|an|per)\s+(?:year|month|hour|week)))"),
)
#: Words by which a request to forget asks for everything about its subject ("everything about my
#: Japan trip"), not one fact: every memory that holds part of it goes.
BROAD_WORDS = frozenset({"everything", "anything", "all"})
OLD_WORDS = frozenset({"old", "previous", "former", "earlier", "past", "outdated", "prior", "before"})

#: A request to forget addresses the memory itself: "forget what I said about X",
#: "please forget my old address", "delete that from your memory". Matched on
#: lowercased text with apostrophes folded.
FORGET_REQUEST = (
    r"\bforget\s+(?:about|all|everything|what|that|this|my|the|anything|those|these|i|me|our|his|her|their|"
    r"which|where|who|whom|when|how)\b"
    r"|\bplease\s+(?:remove|delete|erase|wipe)\b"
    r"|\b(?:don'?t|do not|stop)\s+(?:keep|keeping|store|storing|save|saving)\s+(?:my|that|this|what|any)\b"
    r"|\b(?:erase|wipe|delete|remove|scrap|drop)\b[^.!?]*\b(?:memory|memories|records?|notes?|"
    r"what (?:i|we) (?:said|told|mentioned|shared))\b"
    r"|\b(?:stop|don'?t|do not)\s+(?:remembering|remember)\s+(?:my|that|this|what|any|it)\b"
    r"|\bno longer (?:remember|keep|store)\b"
)

#: ... and a reminder ("don't forget to call mum") or a speaker who cannot recall
#: ("I don't remember my PIN") is not one, whatever else the text says.
NOT_A_FORGET_REQUEST = (
    r"\b(?:don'?t|do not|never|not to|won'?t|didn'?t|did not)\s+(?:\w+\s+)?forget\b"
    r"|\b(?:i|we)\s+(?:don'?t|do not|can'?t|cannot|no longer)\s+remember\b"
)

#: A question about what the assistant said in an earlier chat: "you mentioned",
#: "what did you recommend", "you were telling me". Matched on lowercased text with
#: apostrophes folded; a present-tense request ("can you recommend a film?") is not one.
ASSISTANT_SAID = (
    r"\byou\s+(?:(?:had|were|have|once|also|just|already|then)\s+)?(?:told|mentioned|said|recommended|suggested|"
    r"gave|provided|listed|described|explained|shared|wrote|made|named|proposed|offered|advised|showed|"
    r"pointed out|came up with|included|referred|quoted|cited|telling|explaining|describing|suggesting|"
    r"recommending|talking)\b"
    r"|\b(?:did|had|have)\s+you\s+(?:ever\s+)?(?:tell|mention|say|recommend|suggest|give|provide|list|describe|"
    r"explain|share|write|make|name|propose|offer|advise|show|point out|come up with|include|cite)\b"
)

#: ... and one about what the user said ("I told you", "I mentioned"), which wins over
#: talk of an earlier chat below.
USER_SAID = r"\b(?:i|we)\s+(?:(?:had|have|once|also|just|already)\s+)?(?:told you|mentioned|said|shared|wrote|typed)\b"

#: Talk of an earlier chat, which without USER_SAID points at what the assistant said
#: there: "our previous conversation about ...", "we talked about".
EARLIER_CHAT = (
    r"\b(?:our|the|that|this|a)\s+(?:previous|last|earlier|past|prior|recent|other)\s+"
    r"(?:chat|conversation|discussion|talk|exchange|session)s?\b"
    r"|\bwe\s+(?:(?:had|have|once|also|just|already)\s+)?(?:talked|discussed|chatted|spoke|went over|covered)\b"
)

#: Month names, for dates written out the way a conversation writes them ("8 May 2023").
MONTHS: tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July", "August",
                           "September", "October", "November", "December")

#: Words that may stand before the noun a clause opens with ("the", "my"): they do
#: not stop "my flight 22 leaves at noon" from opening with its subject.
DETERMINERS = frozenset("""
the a an my our your his her their its this that these those each every
""".split())

#: Nouns whose number is the value of an attribute, not the name of a thing:
#: "code 4471 opens the gate" states the code. A noun followed by a number
#: otherwise names which one ("room 101", "bus 12", "flight 22").
VALUE_LABELS = frozenset("""
code pin password passcode number no score total count price cost fee rate age weight height size
balance budget salary rent temperature speed extension ext zip postcode
""".split())
