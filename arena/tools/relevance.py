"""Ranking market texts by relevance to a query: BM25 over question and description.

Built once per round over the open markets (``RoundFacts.cached``) and queried by every agent;
the question is counted twice, as it names what the market is about. Plain Python, no index on
disk: a round holds at most a few thousand open markets.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_K1 = 1.2
_B = 0.75


def terms(text: str) -> list[str]:
    """Lower-case words (letters and digits) of ``text``."""
    return _WORD.findall(text.casefold())


@dataclass(frozen=True)
class TextIndex:
    """Term counts per document, document lengths and document frequencies."""

    counts: Mapping[str, Counter[str]]
    lengths: Mapping[str, int]
    frequency: Counter[str]
    mean_length: float

    @classmethod
    def build(cls, documents: Iterable[tuple[str, str, str]]) -> TextIndex:
        """From (id, question, description) triples."""
        counts: dict[str, Counter[str]] = {}
        for key, question, description in documents:
            words = terms(question) * 2 + terms(description)
            counts[key] = Counter(words)
        lengths = {key: sum(c.values()) for key, c in counts.items()}
        frequency: Counter[str] = Counter()
        for c in counts.values():
            frequency.update(c.keys())
        mean = sum(lengths.values()) / len(lengths) if lengths else 0.0
        return cls(counts, lengths, frequency, mean)

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best (id, score) pairs with a positive score; ties by id."""
        wanted = set(terms(query))
        total = len(self.counts)
        scored = []
        for key, counts in self.counts.items():
            score = 0.0
            for term in wanted & counts.keys():
                df = self.frequency[term]
                idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
                tf = counts[term]
                norm = 1 - _B + _B * self.lengths[key] / (self.mean_length or 1)
                score += idf * tf * (_K1 + 1) / (tf + _K1 * norm)
            if score > 0:
                scored.append((key, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored[:limit]
