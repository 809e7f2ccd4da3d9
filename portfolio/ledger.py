"""One agent's ledger: cash and positions, advanced only by fills (zipline's ``Ledger`` shape).

Decisions and settlements are turned into fills, and fills are the only thing that changes
the ledger, so ``Ledger.from_fills(rules, fills, agent_id=...)`` rebuilds exactly the same
ledger from a stored log. Marks are the one thing fills do not carry: a rebuilt ledger takes
the last stored marks through ``restore_marks``.

Every operation is atomic: it checks everything, then changes state, so an error (a rejected
decision, an inconsistent fill, a missing payout, a bad mark price) leaves the ledger as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType

from portfolio.actions import Action, Bet
from portfolio.execution import buy_fill, sell_fill
from portfolio.fills import Fill, FillKind
from portfolio.money import ZERO, exact, on_money_grid
from portfolio.positions import FillRejected, Mark, Position
from portfolio.quotes import Quotes
from portfolio.rules import Rules
from portfolio.settlement import settlement_fills
from portfolio.units import AgentId, MarketId, Money, Price, Shares
from portfolio.validation import LegError, check_actions, decision_max_bet
from portfolio.valuation import FreshMarks, Prices, Valuation, remark, valuation

Target = tuple[MarketId, str]  # (market_id, outcome)


class DecisionRejected(ValueError):
    """A decision with at least one invalid leg; nothing was executed. ``errors`` lists every problem."""

    def __init__(self, errors: Sequence[LegError]) -> None:
        self.errors = tuple(errors)
        super().__init__("decision rejected: " + "; ".join(e.reason for e in self.errors))


class Ledger:
    """Cash, positions and the bookkeeping that makes fills replayable, for one agent."""

    def __init__(self, rules: Rules, agent_id: AgentId) -> None:
        if not on_money_grid(rules.bankroll):
            raise ValueError(f"rules.bankroll {rules.bankroll} has digits below the micro-dollar")
        self.rules = rules
        self.agent_id = agent_id
        self._cash = rules.bankroll
        self._positions: dict[str, Position] = {}
        self._open: dict[MarketId, dict[str, str]] = {}  # market -> outcome -> its one open position
        self._opened: dict[Target, int] = {}  # positions ever opened per market outcome (for ids)
        self._settled: set[MarketId] = set()  # markets this ledger has settled positions in
        self._applied: set[tuple[str, int]] = set()  # (decision_id, leg) of every decision fill
        self._realized = Money(ZERO)
        self._open_list: list[Position] | None = None  # open_positions(), until a change (marks keep it)

    @classmethod
    def from_fills(
        cls,
        rules: Rules,
        fills: Iterable[Fill],
        *,
        agent_id: AgentId,
        marks: Mapping[str, Mark] | None = None,
    ) -> Ledger:
        """Replay a fill log (in the order it happened), then restore the last stored marks."""
        ledger = cls(rules, agent_id)
        for fill in fills:
            ledger.apply_fill(fill)
        ledger.restore_marks(marks or {})
        return ledger

    # -- reads -------------------------------------------------------------------------------

    @property
    def cash(self) -> Money:
        return self._cash

    @property
    def realized_pnl(self) -> Money:
        """P/L realised by every sell and settlement so far."""
        return self._realized

    @property
    def positions(self) -> Mapping[str, Position]:
        """Every position ever held (open, closed, settled) by id; read-only."""
        return MappingProxyType(self._positions)

    @property
    def settled_markets(self) -> frozenset[MarketId]:
        return frozenset(self._settled)

    def open_positions(self, market_id: MarketId | None = None) -> list[Position]:
        """Open positions (only ``market_id``'s if given), in the order their markets were entered.
        The full list is kept until a fill changes it (a replay asks for it many times a day)."""
        if market_id is not None:
            return [self._positions[pid] for pid in self._open.get(market_id, {}).values()]
        if self._open_list is None:
            self._open_list = [
                self._positions[pid] for outcomes in self._open.values() for pid in outcomes.values()
            ]
        return list(self._open_list)

    def open_markets(self) -> frozenset[MarketId]:
        """The markets this ledger holds an open position in (cheaper than listing the positions)."""
        return frozenset(self._open)

    def open_position_id(self, market_id: MarketId, outcome: str) -> str | None:
        return self._open.get(market_id, {}).get(outcome)

    def max_bet(self) -> Money:
        """The max bet of a decision starting now (from the current cash)."""
        return decision_max_bet(self.rules, self._cash)

    @exact
    def check(
        self,
        actions: Sequence[Action],
        quotes: Quotes,
        *,
        closed_markets: Mapping[MarketId, datetime] | None = None,
    ) -> list[LegError]:
        """What ``apply_decision`` would refuse, without executing anything."""
        return check_actions(
            actions,
            cash=self._cash,
            rules=self.rules,
            quotes=quotes,
            positions=_OpenPositionsView(self._positions),
            settled_markets=self._settled,
            closed_markets=closed_markets,
        )

    @exact
    def valuation(self, at: datetime) -> Valuation:
        """The portfolio at its current marks (no new prices; see ``mark``)."""
        return self._valuation(at, self.open_positions())

    # -- changes -----------------------------------------------------------------------------

    @exact
    def apply_decision(
        self,
        actions: Sequence[Action],
        quotes: Quotes,
        at: datetime,
        *,
        decision_id: str | None = None,
        closed_markets: Mapping[MarketId, datetime] | None = None,
    ) -> list[Fill]:
        """Execute every leg at ``quotes`` or none: raises ``DecisionRejected`` with all problems
        (a leg on one of ``closed_markets``, closed for trading, is one)."""
        _require_aware(at)
        errors = self.check(actions, quotes, closed_markets=closed_markets)
        if errors:
            raise DecisionRejected(errors)
        max_bet = self.max_bet()
        fills = [
            buy_fill(
                action,
                quotes=quotes,
                agent_id=self.agent_id,
                position_id=self._position_id_for(action.market_id, action.outcome),
                max_bet=max_bet,
                leg=leg,
                decision_id=decision_id,
                at=at,
            )
            if isinstance(action, Bet)
            else sell_fill(
                action,
                self._positions[action.position_id],
                quotes=quotes,
                agent_id=self.agent_id,
                leg=leg,
                decision_id=decision_id,
                at=at,
            )
            for leg, action in enumerate(actions)
        ]
        self._apply_all(fills)
        return fills

    @exact
    def apply_fill(self, fill: Fill) -> None:
        """Advance the ledger by one fill (replay); raises ``FillRejected`` if it cannot apply."""
        self._apply_all([fill])

    @exact
    def settle(
        self, market_id: MarketId, payouts: Mapping[str, Price], at: datetime, *, void: bool = False
    ) -> list[Fill]:
        """Pay out (or, if ``void``, refund) every open position in ``market_id``.

        ``payouts`` is dollars per share per outcome (ignored when void). A market this ledger
        already settled is a no-op, so re-running a settlement job is harmless. Raises
        ``SettlementRejected`` (and changes nothing) when a held outcome has no valid payout.
        """
        _require_aware(at)
        if market_id in self._settled:
            return []
        fills = settlement_fills(
            self.open_positions(market_id),
            agent_id=self.agent_id,
            market_id=market_id,
            payouts=payouts,
            at=at,
            void=void,
        )
        self._apply_all(fills)
        return fills

    @exact
    def mark(self, prices: Prices | FreshMarks, at: datetime) -> Valuation:
        """Re-price open positions from ``prices`` (market -> outcome -> price) and value the portfolio.

        Positions without a price keep their last real mark, flagged stale. ``prices`` may be a
        ``FreshMarks`` built for ``at``, so that many ledgers marked at one instant share it.
        """
        _require_aware(at)
        marks = prices if isinstance(prices, FreshMarks) else FreshMarks(prices, at)
        if marks.at != at:
            raise ValueError(f"marks built for {marks.at.isoformat()} used at {at.isoformat()}")
        marked = [remark(p, marks) for p in self.open_positions()]
        for position in marked:
            self._positions[position.position_id] = position
        self._open_list = marked  # the same positions, in the same order, at their new marks
        return self._valuation(at, marked)

    def restore_marks(self, marks: Mapping[str, Mark]) -> None:
        """Put back stored marks after a replay; a fill's own mark wins when it is newer."""
        for pid in marks:
            position = self._positions.get(pid)
            if position is None or not position.is_open:
                raise ValueError(
                    f"cannot restore a mark for {pid!r}: not an open position of {self.agent_id!r}"
                )
        for pid, mark in marks.items():
            current = self._positions[pid].mark
            if current is None or mark.at >= current.at:
                self._positions[pid] = self._positions[pid].marked(mark)
        self._open_list = None

    # -- internals ---------------------------------------------------------------------------

    def _valuation(self, at: datetime, open_positions: Sequence[Position]) -> Valuation:
        """The portfolio with ``open_positions`` (every open one, in ``open_positions()``'s order)."""
        return valuation(
            at=at,
            bankroll=self.rules.bankroll,
            cash=self._cash,
            open_positions=open_positions,
            realized_pnl=self._realized,
        )

    def _position_id_for(self, market_id: MarketId, outcome: str) -> str:
        """The open position a bet adds to, or a fresh id: a closed position is never reopened."""
        existing = self.open_position_id(market_id, outcome)
        if existing is not None:
            return existing
        n = self._opened.get((market_id, outcome), 0) + 1
        while f"{market_id}|{outcome}|{n}" in self._positions:
            n += 1
        return f"{market_id}|{outcome}|{n}"

    def _apply_all(self, fills: Sequence[Fill]) -> None:
        """Check every fill against the state the previous ones leave, then commit them together."""
        staged: dict[str, Position] = {}
        cash = self._cash
        keys: set[tuple[str, int]] = set()
        for fill in fills:
            self._check_fill(fill, staged, keys)
            current = staged.get(fill.position_id) or self._positions.get(fill.position_id)
            staged[fill.position_id] = Position.open(fill) if current is None else current.apply(fill)
            cash = Money(cash + fill.cash_delta)
            if cash < 0:
                raise FillRejected(f"fill {fill.describe()}: would leave cash at {cash}")
            if fill.key is not None:
                keys.add(fill.key)
        for fill in fills:
            self._commit(fill, staged[fill.position_id])

    def _check_fill(self, fill: Fill, staged: Mapping[str, Position], keys: set[tuple[str, int]]) -> None:
        """Ledger-level rules a position cannot see: ownership, duplicates, one open position per outcome."""
        exists = fill.position_id in staged or fill.position_id in self._positions
        open_id = self._open_id(fill.market_id, fill.outcome, staged)
        problem = None
        if fill.agent_id != self.agent_id:
            problem = f"belongs to agent {fill.agent_id!r}, not {self.agent_id!r}"
        elif fill.key is not None and (fill.key in self._applied or fill.key in keys):
            problem = "was already applied"
        elif not exists and fill.kind is not FillKind.BUY:
            problem = f"position {fill.position_id!r} does not exist"
        elif fill.kind is FillKind.BUY and fill.market_id in self._settled:
            problem = f"buys into market {fill.market_id!r}, which is already settled"
        elif fill.kind is FillKind.BUY and open_id not in (None, fill.position_id):
            problem = (
                f"opens a second position on {fill.outcome!r} of {fill.market_id!r}; {open_id!r} is open"
            )
        if problem:
            raise FillRejected(f"fill {fill.describe()}: {problem}")

    def _open_id(self, market_id: MarketId, outcome: str, staged: Mapping[str, Position]) -> str | None:
        """The open position on the market outcome once the staged fills are taken into account."""
        for pid, position in staged.items():
            if (position.market_id, position.outcome) == (market_id, outcome) and position.is_open:
                return pid
        open_id = self.open_position_id(market_id, outcome)
        return None if open_id is None or open_id in staged else open_id

    def _commit(self, fill: Fill, position: Position) -> None:
        self._open_list = None
        target = (position.market_id, position.outcome)
        if position.position_id not in self._positions:
            self._opened[target] = self._opened.get(target, 0) + 1
        self._positions[position.position_id] = position
        outcomes = self._open.setdefault(position.market_id, {})
        if position.is_open:
            outcomes[position.outcome] = position.position_id
        elif outcomes.get(position.outcome) == position.position_id:
            del outcomes[position.outcome]
        if not outcomes:
            del self._open[position.market_id]
        if fill.kind is FillKind.SETTLE:
            self._settled.add(fill.market_id)
        if fill.key is not None:
            self._applied.add(fill.key)
        self._cash = Money(self._cash + fill.cash_delta)
        self._realized = Money(self._realized + fill.realized_pnl)

    def _state(self) -> tuple[object, ...]:
        return (
            self.rules,
            self.agent_id,
            self._cash,
            self._positions,
            self._opened,
            self._settled,
            self._applied,
            self._realized,
        )

    def __eq__(self, other: object) -> bool:
        """Same rules, agent, cash, positions (marks included) and replay bookkeeping."""
        return isinstance(other, Ledger) and self._state() == other._state()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        held = len(self.open_positions())
        return f"Ledger(agent_id={self.agent_id!r}, cash={self._cash}, open_positions={held})"


def _require_aware(at: datetime) -> None:
    if at.tzinfo is None:
        raise ValueError(f"time {at.isoformat()} has no time zone; ledger times must be timezone-aware")


class _OpenPositionsView(Mapping[str, tuple[MarketId, str, Shares]]):
    """The ledger's open positions as ``check_actions`` reads them, without copying them per decision."""

    def __init__(self, positions: Mapping[str, Position]) -> None:
        self._positions = positions

    def __getitem__(self, position_id: str) -> tuple[MarketId, str, Shares]:
        position = self._positions[position_id]
        if not position.is_open:
            raise KeyError(position_id)
        return position.market_id, position.outcome, position.shares

    def __iter__(self) -> Iterator[str]:
        return (pid for pid, p in self._positions.items() if p.is_open)

    def __len__(self) -> int:
        return sum(1 for _ in self)
