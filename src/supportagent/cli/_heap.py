"""The command line's garbage collector: a young collection every 50,000 allocations, not 700.

Imported first by ``supportagent.cli``, before the command modules import typer and rich,
since those imports are the first of the allocations this is about. Importing the libraries
and building a triage's rule tables and models allocates some 130,000 containers that live as
long as the process; at Python's default of a young collection every 700 allocations that
was about 200 collections, 0.08 s CPU of a one-shot ``triage`` (a tenth of it), and every
50,000 it is two, 0.035 s. Cycles are still collected, in long-running commands too
(``worker``, ``ui``), only in larger batches: at most that many young objects wait for one.

The console script also freezes the heap twice on its way to the command (``gc.freeze``, as
Python's documentation describes for a process's start-up): once the command modules are
imported (``own_process``, some 29,000 containers) and once the settings are loaded
(``settled``, another 36,000: typer's parameter types, pydantic, our settings). What is
frozen is never traced again, and the count towards the next young collection starts over,
so a one-shot ``triage`` (33,000 more for its pipeline and index, 2,000 for its ticket) runs
no collection at all, where it ran two (0.03-0.05 s CPU). The price is the cyclic garbage of
start-up (about 1,200 objects, what those two collections found), kept until the process
exits. A process that embeds the app (tests, servers) is not frozen: what is alive there
when its settings are read is not the command line's to keep.
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


#: Set by the console script (``cli.main``): this process runs one command and ends.
_own_process = False


def own_process() -> None:
    """The console script starts: freeze what its imports made (see the module's notes)."""
    global _own_process
    _own_process = True
    gc.freeze()


def settled() -> None:
    """The command's settings are loaded: in the console script, freeze what start-up made."""
    if _own_process:
        gc.freeze()


collect_in_larger_batches()
