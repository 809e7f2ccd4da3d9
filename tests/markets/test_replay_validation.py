"""Every way a dataset can be wrong gets a one-line error naming the file, row and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markets.replay import DatasetError, DatasetInfo, load_dataset
from markets.replay.columns import parse_probability
from markets.replay.format import write_info

MARKETS = """venue,venue_id,question,outcomes,resolution,resolved_at
polymarket,0xabc,Will it rain?,"[""YES"",""NO""]",YES,2025-01-10T00:00:00+00:00
manifold,m1,Will it snow?,"[""YES"",""NO""]",,
"""
PRICES = """market_id,date,price
polymarket:0xabc,2025-01-01,0.40
polymarket:0xabc,2025-01-02,0.45
manifold:m1,2025-01-01,0.1
"""
MULTI_MARKETS = """venue,venue_id,question,outcomes,resolution,winner,resolved_at
manifold,m2,Who wins?,"[""A"",""B"",""C""]",OUTCOME,B,2025-02-01T00:00:00Z
"""
MULTI_PRICES = """market_id,observed_at,outcome,price
manifold:m2,2025-01-01T12:00:00Z,A,0.2
manifold:m2,2025-01-01T12:00:00Z,B,0.5
manifold:m2,2025-01-01T12:00:00Z,C,0.3
"""
INFO = DatasetInfo(name="tiny", version="1", source="handmade", license="CC0", created_with="tests")


def write(directory: Path, markets: str = MARKETS, prices: str = PRICES) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "markets.csv").write_text(markets)
    (directory / "prices.csv").write_text(prices)
    write_info(directory, INFO)
    return directory


def error_for(directory: Path) -> str:
    with pytest.raises(DatasetError) as caught:
        load_dataset(directory)
    message = str(caught.value)
    assert "\n" not in message
    prefix = f"{directory}/"  # every message starts with the file's path
    assert message.startswith(prefix), message
    return message.removeprefix(prefix)


def test_valid_samples_load(tmp_path: Path) -> None:
    assert len(load_dataset(write(tmp_path / "a")).markets) == 2
    multi = load_dataset(write(tmp_path / "b", MULTI_MARKETS, MULTI_PRICES))
    assert multi.resolutions["manifold:m2"].payouts == {"A": 0, "B": 1, "C": 0}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("0.45", "1.2", "prices.csv row 2, field 'price': '1.2' is not a price in [0, 1] (outside [0, 1])"),
        (
            "0.45",
            "-0.01",
            "prices.csv row 2, field 'price': '-0.01' is not a price in [0, 1] (outside [0, 1])",
        ),
        ("0.45", "NaN", "prices.csv row 2, field 'price': 'NaN' is not a price in [0, 1] (not finite)"),
        ("0.45", "inf", "prices.csv row 2, field 'price': 'inf' is not a price in [0, 1] (not finite)"),
        ("0.45", "0.4x", "prices.csv row 2, field 'price': '0.4x' is not a price in [0, 1]"),
        (
            "0.45",
            "0.12345678901",
            "prices.csv row 2, field 'price': '0.12345678901' is not a price in [0, 1] "
            "(more than 10 decimal places)",
        ),
        ("0.45", "", "prices.csv row 2, field 'price': is empty"),
        (
            "2025-01-02",
            "2025-02-30",
            "prices.csv row 2, field 'date': '2025-02-30' is not a date (expected YYYY-MM-DD)",
        ),
        (
            "2025-01-02",
            "2025/01/02",
            "prices.csv row 2, field 'date': '2025/01/02' is not a date (expected YYYY-MM-DD)",
        ),
        (
            "2025-01-02,0.45",
            "2025-01-01,0.45",
            "prices.csv row 2: duplicate of row 1 (market_id=polymarket:0xabc, date=2025-01-01)",
        ),
        (
            "manifold:m1,",
            "manifold:zz,",
            "prices.csv row 3, field 'market_id': unknown market 'manifold:zz' "
            "(not in markets.csv; ids are venue:venue_id)",
        ),
    ],
)
def test_price_errors(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in PRICES
    assert error_for(write(tmp_path, prices=PRICES.replace(old, new, 1))).startswith(expected)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("polymarket,0xabc", "kalshi,0xabc", "markets.csv row 1, field 'venue': 'kalshi' is not a venue"),
        ("Will it rain?", "", "markets.csv row 1, field 'question': is empty"),
        (",YES,", ",MAYBE,", "markets.csv row 1, field 'resolution': 'MAYBE' is not a resolution"),
        (",YES,2025-01-10T00:00:00+00:00", ",YES,", "markets.csv row 1, field 'resolved_at': is empty"),
        (
            "2025-01-10T00:00:00+00:00",
            "2025-01-10T00:00:00",
            "markets.csv row 1, field 'resolved_at': '2025-01-10T00:00:00' is not a time "
            "(expected ISO 8601 with a zone",
        ),
        (
            "manifold,m1,Will it snow?",
            "polymarket,0xabc,Again?",
            "markets.csv row 2, field 'venue_id': duplicate market",
        ),
        (
            '"[""YES"",""NO""]",,',
            '"[""YES""]",,',
            "markets.csv row 2, field 'outcomes': '[\"YES\"]': expected a JSON list",
        ),
        ('"[""YES"",""NO""]",,', "YES|NO,,", "markets.csv row 2, field 'outcomes': 'YES|NO' is not JSON"),
        (
            "2025-01-10T00:00:00+00:00",
            "2025-01-01T12:00:00+00:00",
            "markets.csv row 1, field 'resolved_at': 2025-01-01T12:00:00+00:00 is before the market's "
            "first price (prices.csv row 1, usable from 2025-01-02T00:00:00+00:00)",
        ),
    ],
)
def test_market_errors(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in MARKETS
    assert error_for(write(tmp_path, markets=MARKETS.replace(old, new, 1))).startswith(expected)


def test_resolution_at_first_usable_time_is_allowed(tmp_path: Path) -> None:
    """Resolving exactly when the first price becomes usable is not "before" it: never open, valid."""
    markets = MARKETS.replace("2025-01-10T00:00:00+00:00", "2025-01-02T00:00:00+00:00")
    assert "polymarket:0xabc" in load_dataset(write(tmp_path, markets=markets)).resolutions


@pytest.mark.parametrize(
    ("markets", "prices", "expected"),
    [
        (
            MARKETS.replace("resolved_at\n", "resolved_at,colour\n"),
            PRICES,
            "markets.csv: unknown column(s) 'colour'",
        ),
        (MARKETS.replace(",resolution,", ",outcome,"), PRICES, "markets.csv: missing column(s) 'resolution'"),
        (
            MARKETS,
            PRICES.replace("market_id,date,price", "market_id,date,value"),
            "prices.csv: missing column(s) 'price'",
        ),
        (
            MARKETS,
            PRICES.replace("market_id,date,price", "market_id,day,price"),
            "prices.csv: unknown column(s) 'day'",
        ),
        (
            MARKETS,
            "market_id,date,observed_at,price\n",
            "prices.csv: expected exactly one time column, 'date' (daily close, usable next day "
            "00:00 UTC) or 'observed_at' (usable from that instant); found ['date', 'observed_at']",
        ),
        (MARKETS, "", "prices.csv: the file is empty (expected a header row)"),
        (
            MULTI_MARKETS,
            MULTI_PRICES.replace("12:00:00Z,C", "12:00:00Z,D"),
            "prices.csv row 3, field 'outcome': 'D' is not an outcome of manifold:m2 ['A', 'B', 'C']",
        ),
        (
            MULTI_MARKETS,
            MULTI_PRICES.rsplit("\n", 2)[0] + "\n",
            "prices.csv row 1, field 'outcome': prices at this time cover ['A', 'B']; "
            "expected all of ['A', 'B', 'C']",
        ),
        (
            MULTI_MARKETS,
            MULTI_PRICES.replace(
                "manifold:m2,2025-01-01T12:00:00Z,C", "manifold:m2,2025-01-01T12:00:00+00:00,B"
            ),
            "prices.csv row 3: duplicate of row 2 "
            "(market_id=manifold:m2, observed_at=2025-01-01T12:00:00+00:00, outcome=B)",
        ),
        (
            MULTI_MARKETS,
            MULTI_PRICES.replace("T12:00:00Z,C", "T12:00:00,C"),
            "prices.csv row 3, field 'observed_at': '2025-01-01T12:00:00' is not a time "
            "(expected ISO 8601 with a zone",
        ),
        (
            MULTI_MARKETS.replace("OUTCOME,B", "OUTCOME,Z"),
            MULTI_PRICES,
            "markets.csv row 1, field 'winner': 'Z' is not one of the outcomes ['A', 'B', 'C']",
        ),
        (
            MULTI_MARKETS.replace("OUTCOME,B", "YES,"),
            MULTI_PRICES,
            "markets.csv row 1, field 'resolution': YES needs outcomes",
        ),
    ],
)
def test_table_errors(tmp_path: Path, markets: str, prices: str, expected: str) -> None:
    assert error_for(write(tmp_path, markets, prices)).startswith(expected)


def test_not_a_dataset_directory(tmp_path: Path) -> None:
    (tmp_path / "markets.csv").write_text(MARKETS)
    with pytest.raises(DatasetError) as caught:
        load_dataset(tmp_path)
    assert str(caught.value).startswith(
        f"{tmp_path} is not a replay dataset: missing dataset.json, prices.csv"
    )
    assert "arena data import-forecastbench" in str(caught.value)
    with pytest.raises(DatasetError, match="nope: not a directory"):
        load_dataset(tmp_path / "nope")


def test_dataset_json_problems(tmp_path: Path) -> None:
    directory = write(tmp_path)
    info = json.loads((directory / "dataset.json").read_text())
    (directory / "dataset.json").write_text(json.dumps({**info, "license": ""}))
    assert error_for(directory) == "dataset.json: field 'license' is missing or empty (expected a string)"
    (directory / "dataset.json").write_text(json.dumps({**info, "format_version": 7}))
    assert (
        "expected format 'bettor-arena-replay' version 1, found 'bettor-arena-replay' version 7"
        in error_for(directory)
    )
    (directory / "dataset.json").write_text("{not json")
    assert error_for(directory).startswith("dataset.json: not valid JSON")


def test_edited_files_fail_the_content_hash(tmp_path: Path) -> None:
    directory = write(tmp_path)
    (directory / "prices.csv").write_text(PRICES.replace("0.45", "0.46"))
    message = error_for(directory)
    assert message.startswith("dataset.json: content_hash sha256:")
    assert f"arena data rehash {directory}" in message


def test_first_bad_row_is_reported_not_a_later_one(tmp_path: Path) -> None:
    """Parsing happens per distinct value, yet the row named is the earliest bad one in the file."""
    prices = "market_id,date,price\n" + "".join(
        f"polymarket:0xabc,2024-12-{day:02d},{value}\n"
        for day, value in [(1, "0.5"), (2, "7"), (3, "0.5"), (4, "NaN"), (5, "7")]
    )
    assert error_for(write(tmp_path, prices=prices)).startswith("prices.csv row 2, field 'price': '7'")


@pytest.mark.parametrize(
    ("markets", "prices", "old", "new", "expected"),
    [
        (MARKETS, PRICES, "manifold:m1,", ",", "prices.csv row 3, field 'market_id': is empty"),
        (MARKETS, PRICES, "2025-01-02", "  ", "prices.csv row 2, field 'date': is empty"),
        (MARKETS, PRICES, "0.45", " ", "prices.csv row 2, field 'price': is empty"),
        (
            MULTI_MARKETS,
            MULTI_PRICES,
            "2025-01-01T12:00:00Z,B",
            ",B",
            "prices.csv row 2, field 'observed_at': is empty",
        ),
        (MULTI_MARKETS, MULTI_PRICES, ",B,", ", ,", "prices.csv row 2, field 'outcome': is empty"),
        # Two blank cells: the id, time and price columns are named before the outcome's.
        (MULTI_MARKETS, MULTI_PRICES, ",B,0.5", ",,", "prices.csv row 2, field 'price': is empty"),
    ],
)
def test_blank_price_cells_are_named_empty(
    tmp_path: Path, markets: str, prices: str, old: str, new: str, expected: str
) -> None:
    """Blank cells are found only once a check fails; the message must still say "is empty"."""
    assert old in prices
    assert error_for(write(tmp_path, markets, prices.replace(old, new, 1))).startswith(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", "0"),
        ("1", "1"),
        ("1.", "1"),
        (".5", "0.5"),
        ("0.4696", "0.4696"),
        ("1.0000000000", "1.0000000000"),
        ("0.0000000001", "1E-10"),
        ("00.5", "0.5"),
        (" 0.25 ", "0.25"),
        ("2.5E-1", "0.25"),
        ("-0", "-0"),
    ],
)
def test_prices_plain_or_not_parse_to_the_same_exact_value(text: str, expected: str) -> None:
    """Plainly written prices take a fast path; it must agree with the general rules."""
    assert str(parse_probability(text)) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0.12345678901", "more than 10 decimal places"),
        ("1.00000000000", "more than 10 decimal places"),
        ("1.0000000001", "outside"),
        ("-0.1", "outside"),
        ("NaN", "not finite"),
    ],
)
def test_prices_the_fast_path_must_not_take_are_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_probability(text)
