"""Is a free-text answer supported by its passages? The offline judgement, sentence by sentence.

For drafts that paraphrase (a model's), a verbatim test is no use. Each answer sentence is held
against the passages: the share of its content words they contain (in the passage that covers
it best, and in all of them), its numbers, identifiers and URLs (each must appear), and, with an
embedder, how close in meaning it is to the closest passage sentence. An answer is unsupported
when a claim has a number or name no passage has, or when two or more claims are far from every
passage in both words and meaning. Sentences that only frame the answer ("Based on the
passages, ...", "I hope this helps") are not claims. The thresholds were set on the RAGTruth QA
dev half (``supportagent eval checker ../shared/eval/ragtruth_qa_dev``; docs/drafting.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supportagent.agent.grounding import content_words, fact_keys, mentions

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: A sentence is a weak claim below this share of its content words in one passage ...
MIN_WORD_SUPPORT = 0.5
#: ... unless its meaning is this close to a passage sentence.
MIN_MEANING = 0.85
#: An answer with this many weak claims is unsupported (one may be a loose paraphrase).
MAX_WEAK_CLAIMS = 2

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_FRAME = re.compile(
    r"^(?:based on|according to|from) (?:the )?(?:provided |given )?(?:passages?|information|"
    r"context|text)|^(?:i hope|let me know|in (?:summary|conclusion)|overall,|sure|certainly|"
    r"here (?:is|are)|passage \d)|^(?:the )?(?:provided )?passages? (?:do(?:es)? not|don't)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    text: str
    words: float  # share of content words in the best single passage
    words_all: float  # ... in all passages together
    meaning: float | None  # cosine to the closest passage sentence
    missing_facts: tuple[str, ...]

    @property
    def weak(self) -> bool:
        """Far from every passage in words and in meaning."""
        return self.words < MIN_WORD_SUPPORT and (
            self.meaning is None or self.meaning < MIN_MEANING
        )

    @property
    def supported(self) -> bool:
        return not self.missing_facts and not self.weak


@dataclass(frozen=True, slots=True)
class SupportJudgement:
    sentences: tuple[SentenceSupport, ...]

    @property
    def unsupported(self) -> tuple[SentenceSupport, ...]:
        return tuple(s for s in self.sentences if not s.supported)

    @property
    def supported(self) -> bool:
        """No number or name the passages lack, and fewer than MAX_WEAK_CLAIMS weak claims."""
        if any(s.missing_facts for s in self.sentences):
            return False
        return sum(1 for s in self.sentences if s.weak) < MAX_WEAK_CLAIMS


def claim_sentences(answer: str) -> list[str]:
    """The sentences of ``answer`` that claim something (framing and headings left out)."""
    out = []
    for part in _SPLIT.split(answer):
        text = _BULLET.sub("", part).strip()
        if len(text.split()) < 4 or _FRAME.match(text) or text.endswith(":"):
            continue
        out.append(text)
    return out


def judge_support(
    answer: str, passages: Sequence[str], embed: Embed | None = None
) -> SupportJudgement:
    """How well each claim of ``answer`` is backed by ``passages``."""
    claims = claim_sentences(answer)
    if not claims:
        return SupportJudgement(())
    passage_words = [content_words(p) for p in passages]
    every = set().union(*passage_words) if passage_words else set()
    joined = "\n".join(passages)
    known = fact_keys(joined)
    meaning = _meaning(claims, passages, embed)
    out = []
    for index, claim in enumerate(claims):
        words = content_words(claim)
        best = (
            max((len(words & p) / len(words) for p in passage_words), default=0.0) if words else 1.0
        )
        overall = len(words & every) / len(words) if words else 1.0
        missing = tuple(
            raw
            for key, raw in fact_keys(claim).items()
            if key not in known and not mentions(joined, raw)
        )
        out.append(
            SentenceSupport(
                claim,
                round(best, 3),
                round(overall, 3),
                None if meaning is None else round(meaning[index], 3),
                missing,
            )
        )
    return SupportJudgement(tuple(out))


def _meaning(
    claims: Sequence[str], passages: Sequence[str], embed: Embed | None
) -> list[float] | None:
    if embed is None:
        return None
    sentences = [s for p in passages for s in _SPLIT.split(p) if len(s.split()) >= 3]
    if not sentences:
        return [0.0] * len(claims)
    vectors = np.asarray(embed([*claims, *sentences]), dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors[: len(claims)] @ vectors[len(claims) :].T
    return [float(row.max()) for row in sims]
