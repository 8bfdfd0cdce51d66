"""The command line's garbage collector: a young collection every 50,000 allocations, not 700.

Imported first by ``supportagent.cli``, before the command modules import typer and rich,
since those imports are the first of the allocations this is about. Importing the libraries
and building a triage's rule tables and models allocates some 130,000 containers that live as
long as the process; at Python's default of a young collection every 700 allocations that
was about 200 collections, 0.08 s CPU of a one-shot ``triage`` (a tenth of it), and every
50,000 it is two, 0.035 s. Cycles are still collected, in long-running commands too
(``worker``, ``ui``), only in larger batches: at most that many young objects wait for one.
"""

from __future__ import annotations

import gc

#: Allocations between two collections of the youngest generation (Python's default: 700).
YOUNG_COLLECTION_EVERY = 50_000


def collect_in_larger_batches() -> None:
    """Raise the youngest generation's threshold; the older generations' stay as they are."""
    young, middle, oldest = gc.get_threshold()
    if young:  # 0: the collector was switched off on purpose, and stays off
        gc.set_threshold(max(young, YOUNG_COLLECTION_EVERY), middle, oldest)


collect_in_larger_batches()
