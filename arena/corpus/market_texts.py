"""The demo corpus: a replay dataset's own market texts, each published when its market opened.

Offline and free of licensing surprises (the texts are the dataset's, under its licence), and
honest about time: a market's question and description exist from its open time, so a bettor
searching at a round sees the texts of markets already open then, never of markets opened
later. A market without an open time is left out (its publish time would be a guess). The texts
carry no prices, comments or resolutions, and no venue URL (which the deny-list would refuse).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.corpus.documents import CorpusError, Document, read_documents
from markets.placement import staged_file
from markets.replay.load import ReplayDataset

CORPUS_FILE = "corpus.jsonl"
BUNDLED_CORPUS = "forecastbench-markets"  # the name `arena demo` imports the bundled texts under
SOURCE_SUFFIX = " market text"  # every document's source: "DATASET market text"


@dataclass(frozen=True, slots=True)
class MarketTexts:
    documents: list[Document]
    without_open_time: int


def market_text_documents(dataset: ReplayDataset) -> MarketTexts:
    """One document per market with an open time: title = question, text = question and
    description (the venue's rules, i.e. its resolution criteria), in market-id order."""
    documents: list[Document] = []
    for market_id, market in dataset.markets.items():
        if market.open_time is None:
            continue
        body = "\n\n".join(part for part in (market.question, market.description.strip()) if part)
        documents.append(
            Document(
                id=market_id,
                published_at=market.open_time,
                title=market.question,
                text=body,
                source=f"{dataset.info.name}{SOURCE_SUFFIX}",
            )
        )
    return MarketTexts(documents, len(dataset.markets) - len(documents))


def write_market_texts(path: Path, documents: list[Document], *, replace: bool = False) -> None:
    """Write ``documents`` as a corpus file at ``path``, one line each, atomically
    (``markets.placement``); ``replace`` replaces only a market-texts file written before."""
    with staged_file(path, "market-texts corpus file", replace=replace, record=is_market_texts) as partial:
        partial.write_text("".join(d.to_json() + "\n" for d in documents), encoding="utf-8")


def is_market_texts(path: Path) -> bool:
    """``path`` is a corpus file of market texts (every document's source ends ``market text``)."""
    try:
        with path.open("rb") as stream:
            return all((d.source or "").endswith(SOURCE_SUFFIX) for _, d in read_documents(stream, str(path)))
    except (OSError, CorpusError):
        return False
