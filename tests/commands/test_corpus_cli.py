"""``arena corpus ...`` end to end on a real database of each backend, as a user runs it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from arena.corpus.market_texts import CORPUS_FILE
from arena.corpus.search import search_news
from arena.db.engine import make_engine
from tests.corpus.docs import doc, write_jsonl

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "data" / "forecastbench"


def _arena(db_url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*args, "--database-url", db_url])
    return result.exit_code, result.stdout, result.stderr


def test_import_then_info_and_list(db_url: str, tmp_path: Path) -> None:
    rows = [
        doc("a", 1, "Rates [bold]held[/bold]", "x"),
        doc("b", 2, "Odds", "y", url="https://polymarket.com/e"),
        doc("c", 3, "Poll", "z"),
    ]
    deny = tmp_path / "deny.txt"
    deny.write_text("news.test\n", encoding="utf-8")
    path = write_jsonl(tmp_path / "news.jsonl", rows)
    code, out, err = _arena(db_url, "corpus", "import", str(path), "--name", "news")
    assert code == 0, err
    assert "Imported corpus news: 2 documents." in out
    assert "restricted source polymarket.com (by its url): 1" in out
    code, out, _ = _arena(db_url, "corpus", "info", "news")
    assert code == 0 and "2025-01-02T00:00:00+00:00 … 2025-01-04T00:00:00+00:00" in out
    assert "1 (restricted sources:" in " ".join(out.split()) and "Autocast competition rules" in " ".join(
        out.split()
    )
    assert "restricted source polymarket.com (by its url): 1" in out
    code, out, _ = _arena(db_url, "corpus", "list")
    assert code == 0 and "news" in out and "2025-01-04" in out
    # --deny-list replaces the default list, --deny adds to it: here polymarket.com is kept.
    again = ["corpus", "import", str(path), "--name", "news", "--replace", "--deny-list", str(deny)]
    code, out, _ = _arena(db_url, *again, "--deny", "example.org")
    assert code == 0 and "3 documents" in out


def test_a_zoneless_publish_time_is_one_line_naming_the_row_and_nothing_is_written(
    db_url: str, tmp_path: Path
) -> None:
    rows = [
        doc("a", 1, "fine", ""),
        {"id": "n7", "published_at": "2025-01-05 10:00", "title": "t", "text": ""},
    ]
    path = write_jsonl(tmp_path / "news.jsonl", rows)
    code, _, err = _arena(db_url, "corpus", "import", str(path), "--name", "news")
    assert code == 2
    assert err.startswith("error: news.jsonl line 2 (id 'n7'): 'published_at'") and err.count("\n") == 1
    code, out, _ = _arena(db_url, "corpus", "list")
    assert code == 0 and "No corpora yet" in out
    code, _, err = _arena(db_url, "corpus", "info", "news")
    assert code == 2 and "no corpus named 'news'" in err


def test_bad_options_are_refused_before_any_work(db_url: str, tmp_path: Path) -> None:
    code, _, err = _arena(db_url, "corpus", "import", str(tmp_path / "none.jsonl"), "--name", "x")
    assert code == 2 and "none.jsonl: no such file" in err
    path = write_jsonl(tmp_path / "a.jsonl", [doc("a", 1, "t", "")])
    code, _, err = _arena(db_url, "corpus", "import", str(path), "--name", "x", "--deny", "not a domain")
    assert code == 2 and "'not a domain' is not a domain" in err


def test_the_bundled_corpus_is_the_bundled_dataset_s_market_texts(tmp_path: Path) -> None:
    """``data/forecastbench/corpus.jsonl`` is exactly what the documented command rebuilds."""
    out = tmp_path / CORPUS_FILE
    result = CliRunner().invoke(app, ["corpus", "build-market-texts", str(BUNDLED), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes() == (BUNDLED / CORPUS_FILE).read_bytes()
    assert "Wrote 487 documents" in result.stdout


def test_the_bundled_corpus_imports_and_answers_as_of_a_round(db_url: str) -> None:
    code, out, err = _arena(db_url, "corpus", "import", str(BUNDLED / CORPUS_FILE), "--name", "forecastbench")
    assert code == 0, err
    assert "487 documents" in out and "dropped" not in out
    opened = datetime(2025, 1, 22, 17, 12, 41, tzinfo=UTC)  # manifold:09U2cQZqCR's open_time
    engine = make_engine(db_url)
    try:
        with engine.connect() as connection:
            at_open, after = (
                {
                    h.id
                    for h in search_news(
                        connection, "forecastbench", "Elon Musk richest person", k=50, before=t
                    )
                }
                for t in (opened, opened + timedelta(seconds=1))
            )
    finally:
        engine.dispose()
    assert after - at_open == {"manifold:09U2cQZqCR"}
