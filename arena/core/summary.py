"""A job's one-line summary that also says whether the run found work, and what it left undone.

``arena serve``'s jobs return a line of text that ``job_run`` stores and ``arena status`` shows.
Two facts travel with it: ``idle`` (the run found nothing to do: logged at DEBUG, so a service's
INFO log has a line per run that did something) and ``warnings`` (what failed while the rest was
done, e.g. a venue listing that answered 503 halfway through a sync: the run is *partial*, never
*ok*). It is a ``str``, so code and tests that only read the text are unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence


class Summary(str):
    """A summary line; ``idle`` and ``warnings`` as in the module docstring."""

    idle: bool
    warnings: tuple[str, ...]

    def __new__(cls, text: str, *, idle: bool = False, warnings: Sequence[str] = ()) -> Summary:
        summary = super().__new__(cls, text)
        summary.idle = idle
        summary.warnings = tuple(warnings)
        return summary


def idle_of(text: str) -> bool:
    """Whether a job's returned line said it found nothing to do (a plain ``str`` did something)."""
    return isinstance(text, Summary) and text.idle


def warnings_of(text: str) -> tuple[str, ...]:
    """What a job's returned line says went wrong in part (none for a plain ``str``)."""
    return text.warnings if isinstance(text, Summary) else ()
