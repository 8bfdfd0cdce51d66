"""What a corpus says about itself: the language most of its articles are written in, and the
name they call their product by.

Both are read from the articles alone, and every process that answers tickets needs them
(the language decides whether a ticket in another language can be answered, the name is left
out when the offline drafter compares meanings). Worked out on each start, they cost a warm
one-shot ``triage`` 0.05-0.08 s: the language identifier over up to forty articles and a scan
of every article for the product's name. So they are worked out once, when the index is built,
and kept in its manifest (``persisted.py``); ``Knowledge`` reads them from there, and works
them out itself only for an index in memory, one built before they were kept, or once a
document has been added since the build (the retriever then drops what the manifest kept).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from supportagent.domain import DocKind, Passage

#: Articles sampled for the language, spread evenly over the corpus.
LANGUAGE_SAMPLE = 40


def corpus_language(passages: Sequence[Passage]) -> str:
    """The language most articles are written in (``en`` when none can tell)."""
    from supportagent.language import detect_language  # its tables load on first use

    articles = [p for p in passages if p.kind is DocKind.KB]
    votes: dict[str, int] = {}
    for passage in articles[:: max(len(articles) // LANGUAGE_SAMPLE, 1)]:
        guess = detect_language(passage.text)
        if guess.reliable:
            votes[guess.code] = votes.get(guess.code, 0) + 1
    return max(sorted(votes), key=votes.__getitem__) if votes else "en"


def corpus_own_names(passages: Sequence[Passage]) -> tuple[str, ...]:
    """The name the articles call their product by (``own_name.own_names``), or ()."""
    from supportagent.retrieval.own_name import own_names

    articles: dict[str, list[str]] = {}
    for passage in passages:
        if passage.kind is DocKind.KB:
            articles.setdefault(passage.doc_id, []).append(passage.text)
    return own_names("\n".join(parts) for parts in articles.values())


def corpus_traits(passages: Sequence[Passage]) -> dict[str, Any]:
    """Both, as the index manifest keeps them (plain JSON values)."""
    return {"language": corpus_language(passages), "own_names": list(corpus_own_names(passages))}


def stored_language(traits: Mapping[str, Any] | None) -> str | None:
    """The language an index manifest kept, or None when it kept none (or a damaged one)."""
    value = (traits or {}).get("language")
    return value if isinstance(value, str) and value else None


def stored_own_names(traits: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The product names an index manifest kept, or None when it kept none."""
    value = (traits or {}).get("own_names")
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        return None
    return tuple(value)
