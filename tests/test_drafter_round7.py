"""The offline drafter's seventh round, on hand-made passages about an invented allotment
garden service: "them" leans on the sentence before it, as "it" and "those" do, so the topic
the customer named there picks the article; and "how many" asks for a count of things, which
a price, a share or a length of time does not give.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import kb, quoted

START = kb(
    "kb-start",
    "1. Sign up and choose a plan.\n"
    "2. Go to **Plots > Add plot**, give it a name and pick its site.\n"
    "3. Invite your neighbours from **Members > Invite**.",
    "Setting up your first plot",
    "Getting started",
)
INTRO = kb(
    "kb-start",
    "Plotbook keeps every plot's watering, sowing and harvest logs in one place and sends a "
    "reminder when a bed is dry.",
    "Intro",
    "Getting started",
)
DOWNLOAD = kb(
    "kb-records",
    "1. Go to **Settings > Records > Download**.\n"
    "2. Pick the plots and the dates.\n"
    "3. Choose CSV for the logs, or PDF for a summary.",
    "Downloading your logs",
    "Records and downloads",
)


def test_them_leans_on_the_sentence_before_it() -> None:
    # Alone, "Where do I get them out of Plotbook?" is closest to the product's introduction;
    # "them" is the watering logs the sentence before wants in a spreadsheet.
    got = quoted(
        "Getting our logs out",
        "I want this season's watering logs in a spreadsheet. "
        "Where do I get them out of Plotbook?",
        START,
        INTRO,
        DOWNLOAD,
    )
    assert got[0] == "Go to **Settings > Records > Download**."
    assert INTRO.text not in got
