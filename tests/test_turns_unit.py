"""`Turns`: one task at a time per session, in sequence order, gaps skipped after GAP_TIMEOUT."""

from __future__ import annotations

import asyncio
import time

import worker.sessions as sessions
from worker.sessions import Turns


class Recorder:
    """Runs turns and records when each starts and ends, and whether any two overlapped."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.order: list[int] = []
        self.started: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self.active = 0
        self.max_active = 0
        self.t0 = time.monotonic()

    async def run(self, seq: int, after: float = 0.0, hold: float = 0.02) -> None:
        await asyncio.sleep(after)
        async with self.turns.turn(seq):
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.order.append(seq)
            self.started[seq] = time.monotonic() - self.t0
            await asyncio.sleep(hold)
            self.ended[seq] = time.monotonic() - self.t0
            self.active -= 1


def run(coro, limit: float = 5.0):
    async def bounded():
        return await asyncio.wait_for(coro, limit)

    return asyncio.run(bounded())


def test_out_of_order_arrivals_run_in_sequence(monkeypatch):
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 3.0)

    async def scenario():
        rec = Recorder(Turns(1))
        await asyncio.gather(rec.run(3, after=0.0), rec.run(1, after=0.02), rec.run(2, after=0.04))
        return rec

    rec = run(scenario())
    assert rec.order == [1, 2, 3]
    assert rec.max_active == 1
    assert rec.started[2] >= rec.ended[1] and rec.started[3] >= rec.ended[2]
    assert rec.ended[3] < 1.0  # nobody waited for a gap timeout
    assert rec.turns.next == 4


def test_sequence_starts_at_base(monkeypatch):
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 3.0)

    async def scenario():
        rec = Recorder(Turns(7))  # a session that moved here: its first seq on this worker is 7
        await asyncio.gather(rec.run(8), rec.run(7, after=0.02))
        return rec

    rec = run(scenario())
    assert rec.order == [7, 8]
    assert rec.ended[8] < 1.0


def test_seq_zero_does_not_wait_for_order(monkeypatch):
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 3.0)

    async def scenario():
        rec = Recorder(Turns(1))
        waiting = asyncio.ensure_future(rec.run(3))  # waits for 1 and 2
        await rec.run(0, after=0.02)
        assert 3 not in rec.started
        await asyncio.gather(rec.run(1), rec.run(2, after=0.01))
        await waiting
        return rec

    rec = run(scenario())
    assert rec.started[0] < 0.5  # ran at once, not after any timeout
    assert rec.order == [0, 1, 2, 3]
    assert rec.max_active == 1


def test_seq_zero_never_overlaps_another_turn(monkeypatch):
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 3.0)

    async def scenario():
        rec = Recorder(Turns(1))
        await asyncio.gather(
            rec.run(1, hold=0.15),
            rec.run(0, after=0.02, hold=0.15),  # arrives while 1 runs
            rec.run(2, after=0.2, hold=0.02),  # arrives while 0 runs
            rec.run(0, after=0.22, hold=0.02),
        )
        return rec

    rec = run(scenario())
    assert rec.max_active == 1
    assert rec.order[0] == 1
    assert rec.started[0] >= rec.ended[1] or rec.ended[0] <= rec.started[1]
    assert sorted(rec.order) == [0, 0, 1, 2]


def test_gap_is_skipped_after_gap_timeout(monkeypatch):
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 0.2)

    async def scenario():
        rec = Recorder(Turns(1))
        await rec.run(2)  # seq 1 never arrives (its client died after routing)
        await rec.run(3)
        return rec

    rec = run(scenario())
    assert rec.order == [2, 3]
    assert 0.18 <= rec.started[2] < 1.0
    assert rec.started[3] - rec.ended[2] < 0.1  # no second timeout: 3 follows 2 at once
    assert rec.turns.next == 4


def test_gap_skip_keeps_the_order_of_the_waiters(monkeypatch):
    """3 arrives before 2 and 1 never does: skipping 1 must still run 2 before 3."""
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 0.2)

    async def scenario():
        rec = Recorder(Turns(1))
        await asyncio.gather(rec.run(3), rec.run(2, after=0.05))
        return rec

    rec = run(scenario())
    assert rec.order == [2, 3]
    assert rec.max_active == 1


def test_slow_turn_does_not_reorder_the_queue(monkeypatch):
    """No gap at all, just a turn longer than GAP_TIMEOUT: the tasks queued behind it keep their order."""
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 0.2)

    async def scenario():
        rec = Recorder(Turns(1))
        await asyncio.gather(
            rec.run(1, hold=0.5),
            rec.run(3, after=0.02),
            rec.run(2, after=0.04),
        )
        return rec

    rec = run(scenario())
    assert rec.order == [1, 2, 3]
    assert rec.max_active == 1


def test_late_seq_below_next_runs_without_waiting(monkeypatch):
    """A seq the gap skip already passed over still runs (at once) rather than hanging."""
    monkeypatch.setattr(sessions, "GAP_TIMEOUT", 3.0)

    async def scenario():
        rec = Recorder(Turns(5))
        await rec.run(5)
        await rec.run(3)
        return rec

    rec = run(scenario())
    assert rec.order == [5, 3]
    assert rec.started[3] < 1.0
    assert rec.turns.next == 6
