"""The safety gate's semantic detector: each sentence of a ticket against exemplars per risk.

Rules catch the words we thought of; this catches the meaning. Every sentence of the ticket is
embedded offline (MiniLM for English; multilingual-e5 for other languages, when installed)
and compared with the exemplar sentences we wrote for each category (``exemplars/safety/``)
and with harmless ones: hard negatives (``benign.txt``: "this bug is killing me", questions
about security features) and the classifier's exemplars of ordinary tickets. A category fires
when a sentence is close enough to its exemplars and closer to them than to any harmless one,
by thresholds calibrated on data (``safety_semantic.toml``, set by
``bench/safety_calibration.py``). Beside the exemplars, a learned model per embedder
(``safety_model``) gives each sentence a probability per category; a category also fires when
that probability reaches its calibrated threshold, so a risk worded unlike any exemplar can
still be caught.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent import tomlcache
from supportagent.agent.safety_model import RiskModel, shipped_risk_model
from supportagent.domain import Ticket
from supportagent.language import language_of
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.dense import OnnxMiniLM, Vectors
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available
from supportagent.ruletable import asks
from supportagent.sentences import ticket_sentences

#: The categories the detector knows, most severe first: when two fire, the first decides.
CATEGORIES = ("self_harm_risk", "security_incident", "payment_fraud", "legal_threat")
BENIGN = "benign"
THRESHOLDS_FILE = "safety_semantic.toml"
#: The table of ``THRESHOLDS_FILE`` that holds the near share, beside the embedders' tables.
NEAR_TABLE = "near"
ENGLISH = "en"

#: Per sentence, whether something fires.
Mask = npt.NDArray[np.bool_]

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

# A sentence that supposes the event instead of reporting it: "Hypothetically, if my phone got
# stolen, ...", "If my password ever leaked, ...", "What would happen if someone ...". Plain
# "if" is not enough: "if you don't refund me I will sue" and "if someone has my password,
# lock the account" are reports and threats, not suppositions. The rules read it too.
SUPPOSITION = _PATTERNS.compile(
    r"\b(?:hypothetical(?:ly)?|what\s+(?:if|happens\s+if|would\s+happen\s+if)|in\s+case"
    r"|supposing|say\s+(?:someone|somebody)|if\b[^.!?\n]*?\b(?:ever|were\s+to)"
    # the same in the other languages we read (round 11): "se alguém usar um cartão roubado"
    r"|si\s+alguien|se\s+algu[eé]m|si\s+quelqu'un|wenn\s+jemand|falls\s+jemand|se\s+qualcuno"
    r"|als\s+iemand|en\s+caso\s+de|em\s+caso\s+de|en\s+cas\s+de|im\s+falle?|nel\s+caso"
    r"|in\s+het\s+geval|hipot[eé]tic\w*|hypoth[eé]tique\w*|hypothetisch\w*|ipotetic\w*"
    # asking how one would find out (round 20): "how would i know if someone else had logged
    # into my account?"
    r"|how\s+(?:would|do|does|can|could|will|should|might)\s+(?:i|we|you|one|they|anyone)\s+"
    r"(?:\w+\s+)?(?:know|tell|find\s+out|see|notice|spot|check|be\s+told)\s+(?:if|whether|when))\b",
    re.IGNORECASE,
)
# A sentence that says nothing is wrong: "nothing has happened, I'm only asking", "par
# précaution", "Es ist nichts passiert", "per ora va tutto bene" (round 13). Writers add one to
# a harmless question about a risky subject, and the detectors read its "nothing" and "not
# yet" as a risk: four writers' look-alikes in five tune sets fired self-harm on one. Such a
# sentence never fires a category by itself; a detector that would fire on it makes it *near*
# (the ticket reaches a person, as ``uncertain``). "... but nothing happened" (no one acted)
# is a complaint, not a reassurance, and "I paid nothing" is left out.
REASSURANCE = _PATTERNS.compile(
    r"\b(?:"
    # English
    r"(?<!but\s)(?<!and\s)(?<!yet\s)nothing\s+(?:bad\s+|suspicious\s+|strange\s+|unusual\s+)?"
    r"(?:has\s+|have\s+|'s\s+)?(?:yet\s+)?(?:happened|occurred|gone\s+wrong)"
    r"|(?:just|only|purely)\s+(?:asking|wondering|curious|checking)"
    r"|asking\s+(?:in\s+general|generally|hypothetically|for\s+future\s+reference"
    r"|just\s+in\s+case|out\s+of\s+curiosity|ahead\s+of\s+time|in\s+advance)"
    r"|(?:as|out\s+of)\s+a\s+precaution|(?:it'?s|this\s+is)\s+(?:just\s+)?(?:a\s+)?precaution"
    r"|there'?s\s+no\s+(?:damage|problem|issue)\s+(?:yet|so\s+far)"
    # round 15f: "Nothing's stolen", "there's no damage", "not that I've lost it", "not saying
    # you've lost one"
    r"|nothing(?:'s|\s+is|\s+was|\s+has\s+been)\s+(?:actually\s+)?(?:stolen|missing|lost"
    r"|broken|damaged)|there'?s\s+no\s+damage\b"
    r"|not\s+that\s+(?:i'?ve|i\s+have|we'?ve|we\s+have|you'?ve|you\s+have)\s+lost"
    r"|not\s+saying\s+(?:you'?ve|you\s+have|i'?ve|i\s+have)\s+(?:lost|broken|damaged)"
    # and a disclaimer of what is not asked: "I'm not asking for legal advice"
    r"|(?:i'?m|im|i\s+am|we'?re|we\s+are)\s+not\s+(?:asking|looking)\s+for\s+(?:legal\s+advice"
    r"|a\s+refund|anything\s+back|compensation|(?:my|our|the)\s+money\s+back)"
    r"|(?:everything|all)\s+(?:is|'s)\s+(?:fine|ok(?:ay)?|good)\s+(?:for\s+now|so\s+far"
    r"|at\s+the\s+moment)"
    r"|i\s+haven'?t\s+(?:done|bought|clicked|signed\s+up\s+for|ordered|booked)\s+(?:anything|it)"
    r"\s+yet"
    # French
    r"|(?:il\s+)?n'est\s+rien\s+arriv[ée]|rien\s+ne\s+s'est\s+pass[ée]"
    r"|il\s+ne\s+s'est\s+rien\s+pass[ée]|par\s+pr[ée]caution"
    r"|tout\s+va\s+bien\s+pour\s+(?:l'instant|le\s+moment)"
    r"|je\s+n'ai\s+(?:encore\s+)?rien\s+(?:re[çc]u|achet[ée]|fait|cliqu[ée]|sign[ée])"
    r"|je\s+me\s+renseigne"
    # Spanish
    r"|no\s+(?:me\s+)?ha\s+pasado\s+nada|por\s+precauci[óo]n"
    r"|(?:s[óo]lo|solamente)\s+(?:pregunto|es\s+una\s+pregunta)"
    r"|pregunto\s+(?:en\s+general|por\s+si\s+acaso)"
    r"|todav[íi]a\s+no\s+he\s+(?:comprado|hecho|contratado)\s+nada"
    # Italian
    r"|non\s+[èe]\s+(?:ancora\s+)?successo\s+(?:niente|nulla)|per\s+precauzione"
    r"|(?:chiedo|domando)\s+(?:solo|soltanto)|per\s+ora\s+va\s+tutto\s+bene"
    r"|non\s+ho\s+ancora\s+(?:comprato|fatto)\s+(?:niente|nulla)"
    # German
    r"|(?:es\s+)?ist\s+(?:noch\s+)?nichts\s+(?:passiert|vorgefallen|geschehen)|vorsorglich"
    r"|(?:ich\s+)?frage\s+(?:nur|einfach\s+nur)"
    r"|habe\s+(?:noch\s+)?nichts\s+(?:gekauft|angeklickt|bestellt)"
    # Dutch
    r"|er\s+is\s+(?:nog\s+)?niets\s+(?:gebeurd|aan\s+de\s+hand)|uit\s+voorzorg"
    r"|ik\s+vraag\s+(?:het\s+)?(?:alleen|gewoon|maar)"
    # Portuguese
    r"|n[ãa]o\s+(?:aconteceu|se\s+passou)\s+nada|por\s+precau[çc][ãa]o"
    r"|(?:s[óo]|apenas)\s+(?:pergunto|estou\s+a\s+perguntar)"
    r"|ainda\s+n[ãa]o\s+(?:comprei|fiz)\s+nada"
    r")\b",
    re.IGNORECASE,
)
#: Categories a supposing sentence cannot fire ("what if my phone is stolen?"); never
#: self-harm ("what if I just disappeared") nor legal ("if you don't refund me I'll sue").
SUPPOSABLE = frozenset({"security_incident", "payment_fraud"})
#: Categories a question cannot fire by meaning alone (round 26): "Am I liable for anything?",
#: "Is that my responsibility or yours under the permit?" ask where the law stands and read
#: close to a threat. Over the tune data (7,198 tickets) the semantic detector decided legal
#: on a question 4 times, all harmless, and on no legal threat; a threat asked as a question
#: ("do you want to hear from my solicitor?") is the rules' to read.
UNASKED = frozenset({"legal_threat"})
# Death said as a figure of speech: tiredness, boredom, laughter, embarrassment, wanting
# something badly ("dead tired", "mort de rire", "à mourir d'ennui", "me muero de ganas",
# "todmüde", "mi ammazza se ..."), in the languages we read (round 15e), and (round 21) someone
# who "would murder me", and a job "absolutely killed it". A sentence that says
# one cannot fire self-harm by itself; a detector that would fire on it makes it *near*, as
# with REASSURANCE. Not here, as they are also said in earnest: "this is killing me", "I'm
# dying inside", "I could just disappear".
FIGURATIVE_DEATH = _PATTERNS.compile(
    r"\b(?:"
    # English
    r"dead\s+(?:tired|on\s+(?:my|our|their|his|her|your)\s+feet|beat)|bored\s+to\s+(?:death|tears)|scared\s+to\s+death"
    r"|(?:die|died|dying)\s+(?:of|from)\s+(?:embarrassment|shame|laughter|laughing|boredom"
    r"|cringe)|(?:died|dying)\s+laughing|dying\s+to\s+(?:try|know|see|hear|get|go|meet)"
    r"|to\s+die\s+for"
    r"|(?:i'?m|i\s+am|im)\s+dead\b[^.!?\n]{0,60}\b(?:lol|haha|hilarious|so\s+funny|laughing)"
    r"|(?:i'?m|i\s+am|im)\s+dead\s*[,.!]*\s*😂"
    # Round 21: someone else who "would murder me" (the writer in trouble, not in danger from
    # themself), and doing a thing very well ("absolutely killed it", "murdered my fade").
    r"|(?:would|will|'ll|is\s+going\s+to|are\s+going\s+to|gonna)\s+(?:absolutely\s+|literally\s+"
    r"|actually\s+)?(?:kill|murder)\s+me\b(?!\s+(?:myself|if\s+i\s+don'?t))"
    r"|(?:absolutely|totally|completely|really)\s+(?:killed|murdered|smashed|nailed)\s+"
    r"(?:it|my\s+\w+|the\s+\w+|that)|(?:killed|nailed|smashed)\s+it\b"
    # and a thing that is "killing my streak / battery" (not "killing myself").
    r"|(?:is|was|it'?s|its|keeps|kept)\s+killing\s+my\s+(?!self\b)\w+"
    # Round 24: a game, a climb or a class that "nearly finished me off" (a hard level, not
    # the writer's intent).
    r"|(?:nearly|almost|practically|very\s+nearly|just\s+about)\s+(?:finished|did)\s+me\s+(?:off|in)\b"
    # Round 28 (twenty-fifth session): fear of an accident that takes everyone ("it's going to
    # fall out of the sky and we'll all die"; not a wish, "we'd all die"), a product that would
    # "burn my face off", and a writer who "bleeds like a tap". "If I get hit by a bus" is left
    # to the detector: said of a will it is a figure, but "if I got hit by a bus, would anyone
    # notice?" is not.
    r"|(?:we'?ll|we\s+will|we're\s+going\s+to|we\s+are\s+going\s+to)\s+all\s+die\b"
    r"|(?:burn|melt|rip|tear|peel)\s+(?:my|our|her|his|your|the)\s+(?:face|skin|hair|eyebrows|fingers?|hands?|scalp)\s+off"
    r"|bleed(?:s|ing)?\s+like\s+a\s+(?:tap|stuck\s+pig|fountain|sieve)"
    # Round 29 (twenty-sixth session): someone or something else that "will kill me" in five
    # more languages, as round 21 has it in English (a mother's worry, a bad lift that will
    # kill my back). The verb is in the third person only: "me voy a matar", "vou me matar",
    # "je vais me tuer", "mi ammazzo", "ich bringe mich um" are the writer's own act.
    r"|me\s+van?\s+a\s+matar\b|(?:vai|v[ãa]o)\s+me\s+matar\b|me\s+(?:vai|v[ãa]o)\s+matar\b"
    r"|(?:va|vont|allait|allaient)\s+me\s+tuer\b"
    r"|mi\s+(?:ammazz|uccid)(?:a|e|er[àa]|ano|ono|eranno)\b"
    r"|bring(?:t|en)\s+mich\s+(?:noch\s+)?um\b"
    r"|(?:wordt|is)\s+(?:nog\s+)?mijn\s+dood\b"
    # French
    r"|mort(?:e|s|es)?\s+de\s+(?:rire|fatigue|faim|honte|peur)|mourir\s+de\s+rire"
    r"|[àa]\s+mourir\s+d'?\s*(?:ennui|rire)|(?:je\s+suis\s+)?crev[ée]e?\b"
    # Spanish
    r"|muert[oa]s?\s+de\s+(?:risa|cansancio|sue[ñn]o|hambre|verg[üu]enza|miedo)"
    r"|me\s+muero\s+de\s+(?:risa|ganas|hambre|sue[ñn]o|verg[üu]enza|calor|fr[íi]o)"
    # Italian
    r"|mi\s+ammazza\s+se|mort[oaie]\s+di\s+(?:sonno|fame|stanchezza|paura|risate)"
    r"|morire\s+dal\s+ridere|da\s+morire\b"
    # German
    r"|todm[üu]de|zu\s+tode\s+(?:gelangweilt|erschrocken)|totgelacht|tot\s*lachen"
    # Dutch
    r"|doodmoe|dood\s+van\s+het\s+lachen|(?:me\s+)?dood\s*(?:lachen|schamen|vervelen)"
    # Portuguese
    r"|mort[oa]s?\s+de\s+(?:cansa[çc]o|fome|sono|rir|vergonha|medo)|morrer\s+de\s+rir"
    r")",
    re.IGNORECASE,
)
#: A sentence of fewer words than this is too short for its nearest self-harm exemplars to
#: fire the category ("i was asleep." sits as close to them as a farewell does): it is held
#: to near (round 14, tenth session). Self-harm outranks every rule, so such a sentence would
#: otherwise rename a fraud ticket whose rule had matched. Round 15 (eleventh session) holds
#: the learned model to the same: its retrained self-harm class gives "See you there." 0.58;
#: no self-harm ticket of any tune set is caught by the model on a sentence this short alone.
MIN_WORDS = {"self_harm_risk": 4}
_WORD = _PATTERNS.compile(r"\w+")
#: ``language_of(text)`` -> an ISO 639-1 code, or None when it cannot tell.
LanguageOf = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class Threshold:
    """A category fires when a sentence's similarity reaches ``similarity`` and beats the
    nearest hard negatives by at least ``margin``, or when the learned model gives it at least
    ``probability`` (None: the model does not decide)."""

    similarity: float
    margin: float
    probability: float | None = None
    #: The model fires only on a sentence whose margin is at least this (None: any margin):
    #: a sentence far closer to a harmless example than to any exemplar of the category
    #: ("I'd rather talk this through with a person") is not that risk (round 7).
    model_margin: float | None = None
    #: The model fires only on a sentence whose *language-centred* margin (see
    #: :class:`LanguageCentre`) is at least this; a sentence it would fire on below it is
    #: near the risk instead (None: no such gate). Round 13.
    centred_margin: float | None = None
    #: False: a sentence the exemplars fire on is only near the risk (the ticket reaches a
    #: person as ``uncertain``, not as this category). Round 13, e5's self-harm.
    exemplars_fire: bool = True
    #: The model fires only on a sentence at least this similar to the category's exemplars;
    #: one it would fire on below that is near the risk instead (None: no floor). Far from
    #: every exemplar the linear model extrapolates ("Completion for added prototype methods
    #: ## Info ...", similarity 0.23, self-harm 0.71). Round 15d, MiniLM's self-harm.
    model_similarity: float | None = None
    #: The exemplars fire only on a sentence the learned model gives at least this share of
    #: its ``probability`` threshold; one they would fire on below it is near the risk
    #: instead (None: the exemplars fire whatever the model says). The nearest exemplars
    #: read topic ("Card fees" against a card-misuse exemplar, 0.66) where the model, trained
    #: on thousands of harmless sentences besides, reads the sentence (0.10). Round 16.
    exemplar_model_floor: float | None = None


#: A sentence the learned model gives at least this share of a category's threshold, and that
#: fires nothing, is *near* the risk: the classifier then may not answer the ticket (round 7).
DEFAULT_NEAR_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Finding:
    """The sentence of a ticket closest to one category, and how close."""

    category: str
    similarity: float
    margin: float
    sentence: str
    exemplar: str
    model: str
    fired: bool
    #: The learned model's probability of the category for ``sentence`` (None without one).
    probability: float | None = None
    #: What fired: ``exemplars``, ``model``, ``exemplars and model``, or "" when nothing did.
    fired_by: str = ""
    #: Nothing fired, but the model came within the near share of its threshold on
    #: ``sentence`` (which is then the sentence it gave the most).
    near: bool = False


@dataclass(frozen=True, slots=True)
class SentenceScores:
    """A ticket's sentences scored under one embedder: per category, one value a sentence."""

    model: str
    index: ExemplarIndex
    units: list[str]
    sims: Vectors
    similarity: dict[str, Vectors]
    margin: dict[str, Vectors]
    #: Per category, the learned model's probability a sentence (empty without a model).
    probability: dict[str, Vectors] = dataclasses.field(default_factory=dict)
    #: Per category, the margin with the language's own direction taken out of every vector
    #: (empty for an embedder without a :class:`LanguageCentre`).
    centred_margin: dict[str, Vectors] = dataclasses.field(default_factory=dict)

    def _reassured(self) -> Mask:
        """Per sentence, whether it only says that nothing is wrong (``REASSURANCE``)."""
        return np.asarray([REASSURANCE.search(u) is not None for u in self.units], dtype=bool)

    def _figurative(self, category: str) -> Mask:
        """Per sentence, whether it says death as a figure of speech (``FIGURATIVE_DEATH``),
        which holds self-harm alone to near."""
        if category != "self_harm_risk":
            return np.zeros(len(self.units), dtype=bool)
        return np.asarray([FIGURATIVE_DEATH.search(u) is not None for u in self.units], bool)

    def _long_enough(self, category: str) -> Mask:
        """Per sentence, whether it has words enough for either detector to fire ``category``
        (``MIN_WORDS``)."""
        least = MIN_WORDS.get(category, 0)
        return np.asarray([len(_WORD.findall(u)) >= least for u in self.units], dtype=bool)

    def _held_back(self, category: str) -> Mask:
        """Per sentence, whether neither detector may fire ``category`` on it alone, however
        close it is: it only reassures, says death as a figure of speech, or is too short."""
        return self._reassured() | self._figurative(category) | ~self._long_enough(category)

    def _may_fire(self, category: str) -> Mask:
        """Per sentence, whether it may fire ``category`` at all: a sentence that supposes
        the event may not fire a ``SUPPOSABLE`` one, nor a question an ``UNASKED`` one."""
        may = np.ones(len(self.units), dtype=bool)
        if category in SUPPOSABLE:
            may &= np.asarray([SUPPOSITION.search(u) is None for u in self.units], dtype=bool)
        if category in UNASKED:
            may &= np.asarray([not asks(u) for u in self.units], dtype=bool)
        return may

    def by_exemplars(self, category: str, limit: Threshold, *, held: bool = True) -> Mask:
        """Per sentence, whether the nearest exemplars fire ``category`` (with
        ``held=False``: whether they reach its thresholds, even where they may not fire)."""
        if category not in self.similarity or (held and not limit.exemplars_fire):
            return np.zeros(len(self.units), dtype=bool)
        passes: Mask = (
            (self.similarity[category] >= limit.similarity)
            & (self.margin[category] >= limit.margin)
            & self._may_fire(category)
        )
        if held:
            passes &= ~self._held_back(category) & self._model_agrees(category, limit)
        return passes

    def _model_agrees(self, category: str, limit: Threshold) -> Mask:
        """Per sentence, whether the learned model gives ``category`` enough for the
        exemplars to fire it (``exemplar_model_floor``; every sentence without a floor or a
        model)."""
        floor, probability = limit.exemplar_model_floor, self.probability.get(category)
        if floor is None or limit.probability is None or probability is None:
            return np.ones(len(self.units), dtype=bool)
        agrees: Mask = probability >= floor * limit.probability
        return agrees

    def by_model(
        self, category: str, limit: Threshold, share: float = 1.0, *, gated: bool = True
    ) -> Mask:
        """Per sentence, whether the learned model fires ``category`` (reaches ``share`` of
        its threshold: below 1, whether the sentence is near it). ``gated=False`` leaves the
        centred-margin gate, the similarity floor, the reassurance and the sentence's length
        out: what the model would fire on without them."""
        if limit.probability is None or category not in self.probability:
            return np.zeros(len(self.units), dtype=bool)
        passes: Mask = (self.probability[category] >= share * limit.probability) & self._may_fire(
            category
        )
        if limit.model_margin is not None and category in self.margin:
            passes &= self.margin[category] >= limit.model_margin
        if gated and limit.centred_margin is not None and category in self.centred_margin:
            passes &= self.centred_margin[category] >= limit.centred_margin
        if gated and limit.model_similarity is not None and category in self.similarity:
            passes &= self.similarity[category] >= limit.model_similarity
        if gated:
            passes &= ~self._held_back(category)
        return passes

    def held(self, category: str, limit: Threshold) -> Mask:
        """Per sentence, whether a detector would have fired ``category`` but the threshold
        holds it back to *near*: the exemplars where they may not fire, the model below its
        centred-margin gate or its similarity floor, either on too short a sentence or one
        that only reassures."""
        out: Mask = self.by_model(category, limit, gated=False) & ~self.by_model(category, limit)
        out |= self.by_exemplars(category, limit, held=False) & ~self.by_exemplars(category, limit)
        return out

    def fires(self, category: str, limit: Threshold) -> bool:
        return bool(
            self.by_exemplars(category, limit).any() or self.by_model(category, limit).any()
        )


THRESHOLD_KEYS = frozenset(
    {
        "similarity",
        "margin",
        "probability",
        "model_margin",
        "centred_margin",
        "exemplars_fire",
        "model_similarity",
        "exemplar_model_floor",
    }
)


def load_thresholds(text: str | None = None) -> dict[str, dict[str, Threshold]]:
    """Per embedder (``minilm``, ``e5``), per category, the calibrated thresholds."""
    if text is None:
        text = (
            resources.files("supportagent.agent")
            .joinpath(THRESHOLDS_FILE)
            .read_text(encoding="utf-8")
        )
    data = tomlcache.loads(text, THRESHOLDS_FILE)  # tomllib.loads, kept between processes
    out: dict[str, dict[str, Threshold]] = {}
    for model, table in data.items():
        if model == NEAR_TABLE:
            continue
        if not isinstance(table, dict):
            raise ValueError(f"{THRESHOLDS_FILE}: [{model}] must be a table")
        out[model] = {}
        for category, values in table.items():
            if category not in CATEGORIES:
                raise ValueError(f"{THRESHOLDS_FILE}: unknown category {category!r}")
            unknown = sorted(set(values) - THRESHOLD_KEYS)
            if unknown:
                raise ValueError(
                    f"{THRESHOLDS_FILE} [{model}] {category}: unknown keys {', '.join(unknown)}"
                )
            probability = values.get("probability")
            model_margin = values.get("model_margin")
            centred = values.get("centred_margin")
            floor = values.get("model_similarity")
            agree = values.get("exemplar_model_floor")
            out[model][category] = Threshold(
                float(values["similarity"]),
                float(values["margin"]),
                None if probability is None else float(probability),
                None if model_margin is None else float(model_margin),
                None if centred is None else float(centred),
                bool(values.get("exemplars_fire", True)),
                None if floor is None else float(floor),
                None if agree is None else float(agree),
            )
    return out


def _near_table(text: str | None) -> Mapping[str, Any]:
    if text is None:
        text = (
            resources.files("supportagent.agent")
            .joinpath(THRESHOLDS_FILE)
            .read_text(encoding="utf-8")
        )
    table: Mapping[str, Any] = tomlcache.loads(text, THRESHOLDS_FILE).get(NEAR_TABLE, {})
    return table


def load_near_share(text: str | None = None) -> float:
    """The near share of ``safety_semantic.toml`` (``[near] share``), or the default."""
    return float(_near_table(text).get("share", DEFAULT_NEAR_SHARE))


def load_near_shares(text: str | None = None) -> dict[str, float]:
    """The near share per category: ``[near] share``, unless the table names the category
    (``self_harm_risk = 0.6``: a lower share, so a wider band, for the gravest one)."""
    table = _near_table(text)
    default = float(table.get("share", DEFAULT_NEAR_SHARE))
    unknown = sorted(set(table) - {"share", *CATEGORIES})
    if unknown:
        raise ValueError(f"{THRESHOLDS_FILE} [{NEAR_TABLE}]: unknown keys {', '.join(unknown)}")
    return {category: float(table.get(category, default)) for category in CATEGORIES}


@functools.cache
def _default_thresholds() -> dict[str, dict[str, Threshold]]:
    return load_thresholds()


class LanguageCentre:
    """Takes each language's own direction out of a multilingual embedder's vectors.

    Under multilingual-e5, two sentences in the same language are close for being in it: an
    ordinary German sentence sits nearer a German self-harm exemplar than an English harmless
    one, and the learned model reads "not English" as a little risky, since the exemplars it
    learned from hold more foreign risks than foreign harmless sentences. Subtracting, from a
    sentence's vector, the mean vector of the exemplars written in its language (and from
    each exemplar the mean of its own language), then normalising again, leaves mostly what
    the sentence says (round 13; the idea of centring multilingual vectors per language is
    known from work on the language neutrality of such encoders). A language no exemplar is
    written in is centred on the mean of all of them.
    """

    def __init__(self, indexes: Sequence[ExemplarIndex], language_of: LanguageOf) -> None:
        self.indexes = tuple(indexes)
        self.language_of = language_of
        self._lock = threading.Lock()
        self._ready: tuple[dict[str, Vectors], Vectors, dict[int, Vectors]] | None = None

    def _build(self) -> tuple[dict[str, Vectors], Vectors, dict[int, Vectors]]:
        if self._ready is None:
            with self._lock:
                if self._ready is None:
                    matrices = [index.matrix() for index in self.indexes]
                    languages = [
                        np.asarray([self.language_of(t) or ENGLISH for t in i.exemplars.texts])
                        for i in self.indexes
                    ]
                    stacked = np.vstack(matrices)
                    every = np.concatenate(languages)
                    means = {
                        str(code): stacked[every == code].mean(axis=0)
                        for code in sorted(set(every.tolist()))
                    }
                    overall = stacked.mean(axis=0)
                    centred = {
                        id(index): self._centre_rows(matrix, codes, means, overall)
                        for index, matrix, codes in zip(
                            self.indexes, matrices, languages, strict=True
                        )
                    }
                    self._ready = (means, overall, centred)
        return self._ready

    @staticmethod
    def _centre_rows(
        vectors: Vectors,
        codes: npt.NDArray[np.str_],
        means: Mapping[str, Vectors],
        overall: Vectors,
    ) -> Vectors:
        shifted = vectors - np.stack([means.get(str(c), overall) for c in codes])
        return _unit(shifted)

    def centre(self, vectors: Vectors, language: str | None) -> Vectors:
        """``vectors`` (sentences of one text in ``language``) centred and normalised."""
        means, overall, _ = self._build()
        mean = means.get(language or ENGLISH, overall)
        return _unit(vectors - mean)

    def matrix(self, index: ExemplarIndex) -> Vectors:
        """The exemplar vectors of ``index`` (one of this centre's), centred."""
        return self._build()[2][id(index)]


def _unit(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    out: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


class SemanticSafety:
    """Scores a ticket's sentences against the safety exemplars with the right embedder."""

    def __init__(
        self,
        english: ExemplarIndex,
        multilingual: ExemplarIndex | None = None,
        *,
        negatives: Mapping[str, ExemplarIndex] | None = None,
        language_of: LanguageOf | None = None,
        thresholds: Mapping[str, Mapping[str, Threshold]] | None = None,
        models: Mapping[str, RiskModel] | None = None,
        near_share: float | Mapping[str, float] | None = None,
        centres: Mapping[str, LanguageCentre] | None = None,
    ) -> None:
        self.indexes = {"minilm": english, **({"e5": multilingual} if multilingual else {})}
        #: Per embedder, more harmless text (the classifier's exemplars: questions, bug
        #: reports, billing requests) that a risky sentence must be further from.
        self.negatives = dict(negatives or {})
        self.language_of = language_of
        self.thresholds = thresholds if thresholds is not None else _default_thresholds()
        #: Per category, a sentence at this share of a model threshold is near the risk (1.0:
        #: never near).
        if near_share is None:
            near_share = load_near_shares() if thresholds is None else 1.0
        if isinstance(near_share, Mapping):
            self.near_shares = {c: float(near_share.get(c, 1.0)) for c in CATEGORIES}
        else:
            self.near_shares = dict.fromkeys(CATEGORIES, float(near_share))
        #: Per embedder, the learned model over sentence vectors (none: exemplars alone).
        self.models = dict(models or {})
        #: Per multilingual embedder, its language centring (round 13).
        self.centres = dict(centres or {})

    def model_for(self, ticket: Ticket) -> str:
        """``e5`` for a ticket not in English (when it is installed), else ``minilm``."""
        return self._model_and_language(ticket)[0]

    def _model_and_language(self, ticket: Ticket) -> tuple[str, str | None]:
        if "e5" not in self.indexes or self.language_of is None:
            return "minilm", ENGLISH
        language = self.language_of(ticket.text)
        return ("minilm" if language in (None, ENGLISH) else "e5"), language

    def scores(self, ticket: Ticket, sentences: Sequence[str] | None = None) -> SentenceScores:
        """Every sentence's similarity to each category and its margin over the negatives."""
        units = list(sentences) if sentences is not None else ticket_sentences(ticket)
        model, language = self._model_and_language(ticket)
        index = self.indexes[model]
        if not units:
            return SentenceScores(model, index, [], np.zeros((0, 0), np.float32), {}, {})
        return self.scores_of(model, units, index.embed(units), language)

    def scores_of(
        self, model: str, units: list[str], vectors: Vectors, language: str | None = None
    ) -> SentenceScores:
        """:meth:`scores` for sentences already embedded under ``model``, written in
        ``language`` (what a language centre, when the embedder has one, centres them on)."""
        index = self.indexes[model]
        sims = index.similarities(vectors)
        by_label = index.label_scores(sims)
        benign = by_label[BENIGN]
        other = self.negatives.get(model)
        if other is not None:
            harmless = other.label_scores(other.similarities(vectors)).values()
            benign = np.maximum.reduce([benign, *harmless])
        similarity = {c: by_label[c] for c in CATEGORIES if c in by_label}
        margin = {c: v - benign for c, v in similarity.items()}
        learned = self.models.get(model)
        probability = {}
        if learned is not None:
            probability = {
                c: v for c, v in learned.probabilities(vectors).items() if c in CATEGORIES
            }
        centred = self._centred_margins(model, vectors, language)
        return SentenceScores(model, index, units, sims, similarity, margin, probability, centred)

    def _centred_margins(
        self, model: str, vectors: Vectors, language: str | None
    ) -> dict[str, Vectors]:
        """Per category, the margin over the harmless examples with every vector centred on
        its language (empty without a centre for ``model``)."""
        centre = self.centres.get(model)
        if centre is None:
            return {}
        index = self.indexes[model]
        moved = centre.centre(vectors, language)
        by_label = index.label_scores(np.einsum("ij,kj->ik", moved, centre.matrix(index)))
        benign = by_label[BENIGN]
        other = self.negatives.get(model)
        if other is not None:
            sims = np.einsum("ij,kj->ik", moved, centre.matrix(other))
            benign = np.maximum.reduce([benign, *other.label_scores(sims).values()])
        return {c: v - benign for c, v in by_label.items() if c in CATEGORIES}

    def findings(self, ticket: Ticket, sentences: Sequence[str] | None = None) -> list[Finding]:
        """For each category, the closest sentence of ``ticket``, most severe category first."""
        scored = self.scores(ticket, sentences)
        limits = self.thresholds.get(scored.model, {})
        out = []
        for category in CATEGORIES:
            if category not in scored.similarity or category not in limits:
                continue
            similarity, margin = scored.similarity[category], scored.margin[category]
            limit = limits[category]
            by_exemplars = scored.by_exemplars(category, limit)
            by_model = scored.by_model(category, limit)
            probability = scored.probability.get(category)
            share = self.near_shares[category]
            fired = bool(by_exemplars.any() or by_model.any())
            near = np.zeros(len(scored.units), dtype=bool)
            if not fired:
                # A sentence near the risk: the model at a share of its threshold, or a
                # detector held back to near by the threshold (round 13).
                near = scored.held(category, limit)
                if share < 1.0:
                    near |= scored.by_model(category, limit, share, gated=False)
            # The deciding sentence: the closest one the exemplars fire on, else the one the
            # model is surest of among those it fires on (or is near), else the closest.
            if by_exemplars.any():
                pool, key = np.flatnonzero(by_exemplars), similarity
            elif (by_model.any() or near.any()) and probability is not None:
                pool, key = np.flatnonzero(by_model | near), probability
            else:
                pool, key = np.arange(len(scored.units)), similarity
            best = int(pool[int(np.argmax(key[pool]))])
            exemplar, _ = scored.index.nearest(scored.sims[best], category)
            fired_by = " and ".join(
                name
                for name, hits in (("exemplars", by_exemplars), ("model", by_model))
                if hits[best]
            ) or ("exemplars" if by_exemplars.any() else "model" if by_model.any() else "")
            out.append(
                Finding(
                    category,
                    round(float(similarity[best]), 4),
                    round(float(margin[best]), 4),
                    scored.units[best],
                    exemplar,
                    scored.index.model_id,
                    bool(by_exemplars.any() or by_model.any()),
                    None if probability is None else round(float(probability[best]), 4),
                    fired_by,
                    bool(near.any()),
                )
            )
        return out

    def detect(self, ticket: Ticket) -> Finding | None:
        """The most severe category that fires, or None."""
        return next((f for f in self.findings(ticket) if f.fired), None)

    def detect_or_near(self, ticket: Ticket) -> Finding | None:
        """The most severe category that fires; else the most severe one the ticket is near
        (a finding with ``near`` set and ``fired`` false); else None."""
        return fired_or_near(self.findings(ticket))


def fired_or_near(found: Sequence[Finding]) -> Finding | None:
    """Of findings ordered most severe first: the first that fires, else the first that is
    near, else None."""
    return next((f for f in found if f.fired), None) or next((f for f in found if f.near), None)


@functools.cache
def default_semantic_safety() -> SemanticSafety:
    """MiniLM for English, multilingual-e5 for the rest when its package is installed; the
    classifier's exemplars as more harmless examples; the shipped learned model per embedder.
    Built once per process."""
    safety, triage = load_exemplars("safety"), load_exemplars("triage")
    minilm = OnnxMiniLM()
    negatives = {"minilm": ExemplarIndex(triage, minilm)}
    models = {"minilm": shipped_risk_model(minilm.model_id)}
    multilingual = None
    centres = {}
    if multilingual_available():
        e5 = MultilingualE5()
        multilingual = ExemplarIndex(safety, e5)
        negatives["e5"] = ExemplarIndex(triage, e5)
        models["e5"] = shipped_risk_model(e5.model_id)
        centres["e5"] = LanguageCentre((multilingual, negatives["e5"]), language_of)
    return SemanticSafety(
        ExemplarIndex(safety, minilm),
        multilingual,
        negatives=negatives,
        language_of=language_of,
        models={name: m for name, m in models.items() if m is not None},
        centres=centres,
    )


_PATTERNS.save()
