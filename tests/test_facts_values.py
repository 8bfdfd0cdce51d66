"""Values of every common kind (measures with a unit, times of day, windows), compared only
with values of their own kind; and the conflicts and traps they make. The passages are about
invented services (street lighting, grain silos, parcel lockers), worded for these tests."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, hits, minilm, resolved
from drafting import section as kb
from supportagent.agent.facts import (
    quantities,
    scope_names,
    scope_of,
    window_bounds,
)
from supportagent.agent.grounding import check_grounding, exception_flags
from supportagent.domain import DocKind, Passage, Ticket
from supportagent.engines.offline import OfflineEngine


def one(text: str) -> tuple[str, Decimal]:
    [q] = quantities(text)
    return q.dimension, q.base_value


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a pipe 10 millimetres wide", "a 10mm pipe"),
        ("a 1.5 km walk", "1500 metres away"),
        ("at 1500 m", "1.5 kilometres"),
        ("a 2 kg bag", "2000 grams of seed"),
        ("holds 3 L", "3 litres of water"),
        ("below 50 °F", "below 10 °C"),
        ("4 degrees", "4 degrees Celsius"),
        ("five per cent", "5%"),
        ("ten millimetres", "10 mm"),
        ("a 2 kW heater", "2000 watts"),
        ("100 Mbps", "100 mbps"),
        ("2 GB", "2048 MB"),
    ],
)
def test_one_value_in_two_spellings_is_one_value(a: str, b: str) -> None:
    assert one(a) == one(b)


def test_each_kind_of_measure_has_its_own_dimension() -> None:
    texts = {
        "length": "8 m",
        "mass": "12 kg",
        "volume": "250 ml",
        "temperature": "-2 °C",
        "power": "60 W",
        "energy": "3 kWh",
        "bandwidth": "20 Mbps",
        "percent": "15 per cent",
        "length/hour": "30 km/h",
    }
    assert {dim: one(text)[0] for dim, text in texts.items()} == {d: d for d in texts}


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("lamps dim 23:30-05:00", (1410, 300)),
        ("between 1 and 4 am", (60, 240)),
        ("from 10 to 2 pm", (600, 840)),
        ("from midnight to 6 a.m.", (0, 360)),
        ("open 9am\u20135pm", (540, 1020)),
        ("between 12:00 and 14:00 UTC", (720, 840)),
    ],
)
def test_a_window_is_one_value_with_two_ends(text: str, bounds: tuple[int, int]) -> None:
    [q] = quantities(text)
    assert (q.dimension, window_bounds(q)) == ("window", bounds)


def test_a_temperature_below_zero_keeps_its_sign() -> None:
    assert one("below -4 °C") == ("temperature", Decimal(-4))
    assert one("at \u22124 degrees") == ("temperature", Decimal(-4))
    assert quantities("a range of 2-3 kg, -4 days") == []


def test_a_time_of_day_is_not_a_window_and_not_a_duration() -> None:
    [q] = quantities("The first truck leaves at 6:45 pm.")
    assert (q.dimension, q.value, window_bounds(q)) == ("clock", Decimal(1125), None)
    [q] = quantities("Readings are sent at 07:00.")
    assert q.dimension == "clock"


@pytest.mark.parametrize(
    "text",
    [
        "Works on 5G and shows 4K video.",
        "The screen is 16:9.",
        "A budget of $5m was approved.",
        "Stand a metre back from the door.",
        "Press 1 and then 2 to confirm.",
        "The score was 3-1.",
    ],
)
def test_no_measure_where_there_is_none(text: str) -> None:
    assert [q for q in quantities(text) if q.dimension not in ("usd",)] == []


def test_scopes_of_models_regions_and_sites_and_rules_that_hold_for_all() -> None:
    names = scope_names(["The Corvid 2 model has a bigger hopper. Our Eastmarch region is wet."])
    assert names == {"Corvid 2": "model", "Eastmarch": "region"}
    assert scope_of("The Corvid 2 reads every 10 minutes.", (), names) == (
        ("model:corvid 2",),
        False,
    )
    assert scope_of("In the Eastmarch region it waits.", (), names)[0] == ("region:eastmarch",)
    assert scope_of("Silos alarm at 40 °C, whichever sensor you fit.")[1]
    assert scope_of("The same on all of our depots.")[1]
    # Words that name no model or region.
    assert scope_of("Older models and every region wait longer.") == ((), False)


# ---------------------------------------------------------------------------- conflicts

DIMMING = kb(
    "kb-dimming",
    "Overnight dimming",
    "Street lights drop to half output between 23:00 and 05:00 in every district.",
    title="Lighting schedules",
)


def test_two_windows_for_one_subject_contradict_when_the_rule_holds_everywhere() -> None:
    ticket = resolved(
        "RT-61",
        "The Quayside lights were still at full output at midnight. Is that a fault?",
        "No fault: Quayside lights are on their own timer and only drop to half output from "
        "1 am to 6 am.",
    )
    [conflict] = conflicts_of(DIMMING, ticket, links={"RT-61": ("kb-dimming",)})
    assert conflict.kind == "contradiction"
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {
        "between 23:00 and 05:00",
        "from 1 am to 6 am",
    }


def test_a_measure_for_one_model_is_an_exception_drafted_citing_both_and_flagged() -> None:
    article = kb(
        "kb-alarm",
        "Heat alarm",
        "A silo raises a heat alarm when the grain core reaches 35 °C.",
        title="Alarms",
    )
    ticket = resolved(
        "RT-62",
        "Our Corvid 2 silo alarmed later than the others. Why?",
        "The Corvid 2 model has a deeper probe, so its heat alarm waits until 40 degrees.",
    )
    links = {"RT-62": ("kb-alarm",)}
    [conflict] = conflicts_of(article, ticket, links=links)
    assert (conflict.kind, conflict.specific.scope) == ("exception", ("model:corvid 2",))
    engine = OfflineEngine(embed=minilm().embed)
    engine.use_links(lambda d: links.get(d, ()))
    draft = engine.draft(
        Ticket("T-9", "Heat alarm", "At what temperature does the heat alarm go off?"),
        hits(article, ticket),
    )
    cited = {c for s in draft.sentences for c in s.citations}
    assert {article.id, ticket.id} <= cited
    assert check_grounding(draft, [article, ticket], conflicts=[conflict]).passed
    assert exception_flags(draft, [conflict]) == ("scoped_exception",)


def test_a_regional_threshold_in_words_for_its_unit_is_found_without_a_link() -> None:
    article = kb(
        "kb-watering",
        "Rain delay",
        "A watering cycle is cancelled when 8 mm of rain is forecast, on every farm.",
        title="Watering",
    )
    ticket = resolved(
        "RT-63",
        "Why did the Fenward region water despite the rain?",
        "In the Fenward region a watering cycle is cancelled only once 12 millimetres of rain "
        "is forecast.",
    )
    [conflict] = conflicts_of(article, ticket)
    assert conflict.kind == "contradiction"  # the rule says it holds on every farm
    assert conflict.specific.scope == ("region:fenward",)


@pytest.mark.parametrize(
    "other",
    [
        # The same value in other words: no disagreement.
        resolved(
            "RT-64",
            "When do the lights dim?",
            "They drop to half output from 11 pm to 5 am.",
        ),
        # A time of day and a window are values of different kinds.
        resolved(
            "RT-65",
            "When do the street lights come on?",
            "Street lights switch on at 18:30 and drop to half output later on.",
        ),
        # Two scopes: two cases.
        kb(
            "kb-quayside",
            "Quayside",
            "In the Quayside district street lights drop to half output between 01:00 and 06:00.",
        ),
    ],
)
def test_no_conflict_for_one_value_two_kinds_or_other_cases(other: Passage) -> None:
    base = DIMMING
    if other.kind is DocKind.KB:
        base = kb(
            "kb-dimming",
            "Overnight dimming",
            "In the Hillside district street lights drop to half output between 23:00 and 05:00.",
            title="Lighting schedules",
        )
    assert conflicts_of(base, other, links={other.doc_id: ("kb-dimming",)}) == []


def test_values_of_one_kind_about_different_things_do_not_conflict() -> None:
    depot = kb("kb-depot", "Depot hours", "The depot counter is staffed 07:00-19:00 on weekdays.")
    assert conflicts_of(DIMMING, depot) == []
    lockers = kb(
        "kb-lockers",
        "Locker sizes",
        "A locker takes parcels up to 20 kg. Lockers stand 180 cm tall.",
        title="Parcel lockers",
    )
    ticket = resolved(
        "RT-66",
        "Will a long parcel fit in a locker?",
        "The largest compartment is 60 cm deep, so a parcel longer than that will not fit.",
    )
    assert conflicts_of(lockers, ticket, links={"RT-66": ("kb-lockers",)}) == []
    # Two articles, two weights about different things.
    bags = kb("kb-bags", "Seed bags", "A seed bag weighs 25 kg when full.")
    trailer = kb("kb-trailer", "Trailers", "A trailer can carry up to 750 kg of feed.")
    assert conflicts_of(bags, trailer) == []


def test_a_price_per_period_and_half_an_hour() -> None:
    assert [(q.raw, q.unit) for q in quantities("billed at €4.20 weekly")] == [
        ("€4.20 weekly", "eur/week")
    ]
    [q] = quantities("within half an hour")
    assert q.base_value == Decimal(1800)


def test_a_window_and_the_time_it_ends_are_not_one_value_against_another_time() -> None:
    # The article gives one time of day; the linked ticket gives a window and, later, the
    # time it ends: two values of the family, so the ticket's clock is not paired alone.
    article = kb(
        "kb-report",
        "Morning report",
        "The silo report is e-mailed at 06:00 each day.",
        title="Reports and quiet times",
    )
    ticket = resolved(
        "RT-67",
        "Can the phone stay silent at night?",
        "Yes. Silent time now runs from 22:00 to 05:30. Anything held back reaches you at 05:30.",
    )
    assert conflicts_of(article, ticket, links={"RT-67": ("kb-report",)}) == []


def test_one_measure_each_worded_apart_is_one_subject_when_they_mean_alike() -> None:
    article = kb(
        "kb-uploads",
        "When footage is sent",
        "The yard camera sends its recordings between 09:00 and 17:00, for all customers.",
        title="Yard camera",
    )
    ticket = resolved(
        "RT-68",
        "Our northern depot's camera seems to go quiet in the afternoon. Why?",
        "For depots in the Northern region the yard camera sends its recordings from 10:00 "
        "until 13:00 only.",
    )
    [conflict] = conflicts_of(article, ticket)  # no link
    assert (conflict.kind, conflict.specific.scope) == ("contradiction", ("region:northern",))


def test_a_limit_on_a_count_of_things_is_a_value_of_that_thing() -> None:
    from supportagent.agent.facts import limit_counts

    found = limit_counts("A hub pairs up to 16 lockers; a kiosk holds as many as 40 locker doors.")
    assert [(q.raw, q.dimension, q.value) for q in found] == [
        ("16 lockers", "count:locker", Decimal(16)),
        ("40 locker", "count:locker", Decimal(40)),
    ]
    assert limit_counts("up to 3 business days, up to 8 times") == []  # read as before
    article = kb("kb-hubs", "Hub capacity", "A hub pairs up to 16 lockers of any size.")
    ticket = resolved(
        "RT-69",
        "How many lockers can the Hub XL drive?",
        "The Hub XL model pairs as many as 40 lockers.",
    )
    [conflict] = conflicts_of(article, ticket, links={"RT-69": ("kb-hubs",)})
    assert conflict.kind == "exception"
    assert conflict.specific.scope == ("model:hub xl",)
    # Counts of different things are never compared.
    staff = kb("kb-staff", "Staff logins", "Each site can have up to 16 staff logins.")
    assert conflicts_of(article, staff) == []
