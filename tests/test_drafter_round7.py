"""The offline drafter's seventh round, on hand-made passages about an invented allotment
garden service: "them" leans on the sentence before it, as "it" and "those" do, so the topic
the customer named there picks the article; and "how many" asks for a count of things, which
a price, a share or a length of time does not give.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, kb, minilm, quoted
from supportagent.agent.questions import AnswerKind, classify_question, has_answer
from supportagent.domain import Ticket
from supportagent.engines.extract import split_sentences, table_row
from supportagent.engines.offline import OfflineEngine

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
        "I want this season's watering logs in a spreadsheet. Where do I get them out of Plotbook?",
        START,
        INTRO,
        DOWNLOAD,
    )
    assert got[0] == "Go to **Settings > Records > Download**."
    assert INTRO.text not in got


def test_how_many_asks_for_a_count_which_a_price_does_not_give() -> None:
    question = classify_question("How many plots does Sprout cover before I pay extra?")
    assert question.kind is AnswerKind.NUMBER
    assert question.focus == "count"
    assert not has_answer("Each plot above your plan's limit costs $3 a month.", question)
    assert not has_answer("Extra plots are billed within 5 days.", question)
    assert has_answer("Sprout covers up to 4 plots.", question)
    assert has_answer("Failed reminders are retried 3 times over 2 hours.", question)
    # Asked how much, a price answers; asked how many more, a margin does.
    assert classify_question("How much does an extra plot cost?").focus == "money"
    assert classify_question("How many more plots can we add?").focus == "margin"


def test_a_count_question_is_answered_by_the_count_not_by_the_price_beside_it() -> None:
    got = quoted(
        "Plots on the middle plan",
        "We're growing this spring. How many plots does Sprout cover before I pay extra?",
        kb(
            "kb-plans",
            "You can add more plots than your plan includes. Each plot above your plan's limit "
            "costs $3 a month, and this price is the same on every plan.",
            "Plots above the limit",
            "Plans and billing",
        ),
        kb(
            "kb-plans",
            "Plotbook has three plans:\n\n- **Seed**: up to 2 plots, $5 a month.\n"
            "- **Sprout**: up to 6 plots, $12 a month.\n- **Orchard**: up to 20 plots, "
            "$30 a month.",
            "The three plans",
            "Plans and billing",
        ),
    )
    assert any("6 plots" in s for s in got)
    # The price of a plot above the limit is no count of plots, and is not quoted for one.
    assert not any("$3 a month" in s for s in got)


# ---------------------------------------------------------------------------- tables

PLANS_TABLE = kb(
    "kb-plans",
    "| plan | price | plots included |\n| --- | --- | --- |\n| Seed | $5 a month | 2 |\n"
    "| Sprout | $12 a month | 6 |\n| Orchard | quoted | by agreement |\n\n"
    "Every plan includes the watering reminders.",
    "The three plans",
    "Plans and billing",
)


def test_a_table_row_is_a_labelled_item_under_its_header() -> None:
    assert split_sentences(PLANS_TABLE.text) == [
        "Seed: price $5 a month; plots included 2",
        "Sprout: price $12 a month; plots included 6",
        "Orchard: price quoted; plots included by agreement",
        "Every plan includes the watering reminders.",
    ]
    # A row that does not fit its header is left out, not guessed at.
    assert table_row(["plan", "price"], ["Seed", "$5", "extra"]) == ""


def test_a_row_answers_a_count_and_the_checker_finds_it_in_its_passage() -> None:
    ticket = Ticket("T-7", "Plots", "How many plots does Sprout include before I pay extra?")
    engine = OfflineEngine(embed=minilm().embed)
    evidence = hits(PLANS_TABLE)
    draft = engine.draft(ticket, evidence)
    assert draft.sentences[0].text == "Sprout: price $12 a month; plots included 6"
    assert engine.check(ticket, draft, evidence).passed


def test_how_many_business_days_asks_how_long_not_how_many() -> None:
    question = classify_question("How many business days until a plot swap is confirmed?")
    assert question.focus != "count"
    assert has_answer("A swap is confirmed within 5 business days.", question)
