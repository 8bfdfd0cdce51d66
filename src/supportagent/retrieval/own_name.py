"""The name a knowledge base calls its own product by, and text with that name left out.

Every article of a product's knowledge base names the product ("Hivecast watches your beehives
for you", "Restaurants work late, so Forkline support does too"), and so does a customer's
question ("Can Forkline manage our kitchen's recipe costs?"). To a sentence embedding the
shared name is a strong likeness that says nothing: within one product's corpus it is on every
page. The offline drafter therefore compares meanings with the name left out (``masked``).

The name is found from the articles alone (``own_names``): the capitalised word that the most
articles use, at least half of them, that is written inside a sentence at least once (so not
"This" or "When") and never in lower case in prose (so not "Owner" or "Settings", and not a word
of the language), code, addresses and URLs left out. A plan name (capitalised, never in lower
case) is used by fewer articles than the product's own name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

#: What is not prose: code blocks and spans, e-mail addresses, URLs and host names. A host
#: name's first label is taken whole (``++``): a shorter run of it is never followed by a dot,
#: so nothing is lost, and an ordinary word no longer backtracks letter by letter (the
#: substitution alone: 4.8 -> 3.2 s over our eval articles x60, 1.8 -> 1.6 s over the demo's x200).
_NOT_PROSE = re.compile(
    r"```.*?```|`[^`\n]*`|\S+@\S+|\b\w+://\S+|\b[\w-]++(?:\.[\w-]+)+\b", re.DOTALL
)
_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w-]*[a-z]\b")
#: A capitalised word inside a sentence: after a lower-case word, a digit or a comma.
_INSIDE = re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][a-z][\w-]*[a-z]\b")
#: Share of the articles that must use the name.
LEAST_SHARE = 0.5

V = TypeVar("V")


def own_names(articles: Iterable[str], least_share: float = LEAST_SHARE) -> tuple[str, ...]:
    """The product's own name as ``articles`` (one text an article) use it, or () when no
    word qualifies (pure)."""
    texts = [_NOT_PROSE.sub(" ", text) for text in articles]
    if not texts:
        return ()
    used: Counter[str] = Counter()
    inside: set[str] = set()
    for text in texts:
        used.update(set(_CAPITALISED.findall(text)))
        inside.update(_INSIDE.findall(text))
    prose = "\n".join(texts)
    for word, count in sorted(used.items(), key=lambda item: (-item[1], item[0])):
        if count < least_share * len(texts):
            break
        if word in inside and re.search(rf"\b{re.escape(word.lower())}\b", prose) is None:
            return (word,)
    return ()


#: A word before the name that makes it a modifier: "the Pickwren plugin", "our Echofold shows".
_MODIFIED = r"(?:the|a|an|our|your|their|my|this|that)\s+"


def without_names(text: str, names: Sequence[str]) -> str:
    """``text`` with each of ``names`` left out: dropped where it names what follows ("the
    Pickwren plugin": "the plugin"), said as "it" elsewhere ("Does Tidewell hold the sale?":
    "Does it hold the sale?"; "its" for "Hivecast's") (pure)."""
    for name in names:
        word = re.escape(name)
        text = re.sub(rf"\b({_MODIFIED}){word}\s+", r"\1", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{word}'s\b", "its", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{word}\b", "it", text, flags=re.IGNORECASE)
    return text


def masked(
    embed: Callable[[Sequence[str]], V] | None, names: Sequence[str]
) -> Callable[[Sequence[str]], V] | None:
    """``embed`` that leaves ``names`` out of every text it is given (``embed`` itself when
    there is no name to leave out)."""
    if embed is None or not names:
        return embed
    inner = embed

    def embed_without_names(texts: Sequence[str]) -> V:
        return inner([without_names(text, names) for text in texts])

    return embed_without_names
