"""Handing scene indices to long-lived workers: retries after a worker dies, and recycling.

The same rules hold for local worker processes (:mod:`render.farm.local_workers`) and Ray actors
(:mod:`render.farm.ray_executor`); each supplies a :class:`WorkerBackend`, and :class:`Scheduler` does
the bookkeeping:

* a worker gets one index at a time, so a worker's death names exactly one scene (``depth`` > 1: a
  pipelined worker, render/farm/pipeline.py, holds that many; its death sends each back, counting a
  crash for each, and each is then held alone, so a second death names the scene that kills);
* a scene whose worker died is given to a fresh worker, at most ``crash_retries`` more times, then
  reported by index (its ``Outcome`` carries the error) while every other scene goes on;
* a worker that dies before its Blender session opened costs no scene an attempt, but after
  ``MAX_FAILED_STARTS`` such deaths in a row the run stops: nothing would ever render;
* a worker is replaced by a fresh one after ``recycle_after`` scenes, or as soon as its resident
  memory after a scene exceeds ``max_rss_mb`` (Blender's memory creeps up over long runs).

Every index given to :meth:`Scheduler.run` comes back exactly once, as a finished or failed ``Outcome``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from render.farm.worker import Outcome

#: Worker deaths before the session opened, in a row, after which the run gives up.
MAX_FAILED_STARTS = 3


@dataclass(frozen=True)
class WorkerPolicy:
    recycle_after: int = 1000  # scenes one worker renders before a fresh one replaces it; 0 = never
    max_rss_mb: float = 4096.0  # replace a worker whose RSS after a scene is above this; 0 = no cap
    crash_retries: int = 2  # how often a scene whose worker died is given to a fresh worker

    def needs_recycling(self, scenes: int, rss_bytes: int) -> str | None:
        """Why a worker that has rendered ``scenes`` scenes and holds ``rss_bytes`` should be replaced."""
        if self.recycle_after and scenes >= self.recycle_after:
            return f"{scenes} scenes rendered"
        if self.max_rss_mb and rss_bytes > self.max_rss_mb * 2**20:
            return f"RSS {rss_bytes / 2**20:.0f} MB above {self.max_rss_mb:g} MB"
        return None


class Ready(NamedTuple):
    """The worker in ``slot`` opened its session and can render."""

    slot: int
    pid: int


class Done(NamedTuple):
    """The worker in ``slot`` finished its scene (written, or failed in an ordinary way)."""

    slot: int
    outcome: Outcome
    rss_bytes: int


class Died(NamedTuple):
    """The worker in ``slot`` is gone (killed, crashed, out of memory, could not start)."""

    slot: int
    reason: str


class WorkerBackend(Protocol):
    """Starts workers in numbered slots and reports what they do, as events."""

    def start(self, slot: int) -> None: ...

    def submit(self, slot: int, index: int) -> None: ...

    def wait(self) -> list[Ready | Done | Died]: ...

    def stop(self, slot: int) -> None: ...

    def close(self) -> None: ...


@dataclass
class WorkerRecord:
    """What one worker process (or actor) did, for logs and the memory benchmark."""

    slot: int
    pid: int | None = None
    scenes: int = 0
    rss_bytes: list[int] = field(default_factory=list)  # after each scene
    ended: str | None = None  # why it stopped: recycled, died, finished


class PendingIndices:
    """The indices still to hand out: retried ones first, then the rest drawn lazily from an iterable,
    so a range of any length is never held as a list."""

    def __init__(self, indices: Iterable[int]) -> None:
        self._retries: deque[int] = deque()
        self._rest = iter(indices)
        self._next: int | None = None

    def __bool__(self) -> bool:
        if self._retries or self._next is not None:
            return True
        self._next = next(self._rest, None)
        return self._next is not None

    def popleft(self) -> int:
        if self._retries:
            return self._retries.popleft()
        if not self:
            raise IndexError("no index left")
        index, self._next = self._next, None
        return index  # type: ignore[return-value]  # not None: checked by bool(self)

    def peek(self) -> int:
        """The index :meth:`popleft` would give."""
        if self._retries:
            return self._retries[0]
        if not self:
            raise IndexError("no index left")
        return self._next  # type: ignore[return-value]  # not None: checked by bool(self)

    def appendleft(self, index: int) -> None:
        self._retries.appendleft(index)

    def __iter__(self) -> Iterator[int]:
        while self:
            yield self.popleft()

    def clear(self) -> None:
        self._retries.clear()
        self._rest = iter(())
        self._next = None


class Scheduler:
    """Runs indices over ``slots`` workers of ``backend`` under ``policy``; see the module docstring.

    ``workers`` keeps a :class:`WorkerRecord` per worker started, in start order.
    """

    def __init__(self, backend: WorkerBackend, slots: int, policy: WorkerPolicy, log: Callable[[str], None] | None = None,
                 after_death: Callable[[int], None] | None = None, depth: int = 1) -> None:
        self.backend = backend
        self.slots = slots
        self.policy = policy
        self.log = log or (lambda line: None)
        self.after_death = after_death or (lambda index: None)
        self.depth = depth  # indices one worker holds at a time
        self.workers: list[WorkerRecord] = []
        self._pending = PendingIndices(())
        self._busy: dict[int, list[int]] = {}  # slot -> the indices its worker holds, in the order given
        self._retiring: dict[int, str] = {}  # slot -> why its worker is replaced once it holds nothing
        self._current: dict[int, WorkerRecord] = {}  # slot -> its live worker
        self._crashes: Counter[int] = Counter()
        self._failed_starts = 0

    def run(self, indices: Iterable[int]) -> Iterator[Outcome]:
        self._pending = PendingIndices(indices)
        try:
            for slot in range(self.slots):
                if not self._pending:
                    break
                self._start(slot)
                self._assign(slot)
            while self._busy:
                for event in self.backend.wait():
                    if event.slot not in self._busy:
                        continue  # a stopped worker's last word, or a run given up
                    if isinstance(event, Ready):
                        self._current[event.slot].pid = event.pid
                        self._failed_starts = 0
                        continue
                    if isinstance(event, Done):
                        yield from self._finished(event, self._release(event.slot, event.outcome.index))
                    else:
                        self._retiring.pop(event.slot, None)
                        yield from self._died(event, self._busy.pop(event.slot))
                    self._refill(event.slot)
        finally:
            self.backend.close()

    def _release(self, slot: int, index: int) -> int:
        """Take ``index`` off what ``slot``'s worker holds (it answered for it)."""
        held = self._busy[slot]
        if index not in held:
            raise RuntimeError(f"worker {slot} answered for scene {index}, not {' or '.join(map(str, held))}")
        held.remove(index)
        if not held:
            del self._busy[slot]
        return index

    def _finished(self, event: Done, index: int) -> Iterator[Outcome]:
        record = self._current[event.slot]
        record.scenes += 1
        record.rss_bytes.append(event.rss_bytes)
        yield event.outcome
        reason = self.policy.needs_recycling(record.scenes, event.rss_bytes)
        if reason and self._pending and event.slot not in self._retiring:
            self.log(f"worker {event.slot} (pid {record.pid}) recycled after scene {index}: {reason}")
            self._retiring[event.slot] = reason  # replaced once it holds nothing (_refill)

    def _died(self, event: Died, held: list[int]) -> Iterator[Outcome]:
        """The indices the dead worker held: back to the queue, or failed; then a fresh worker if work is left."""
        record = self._current[event.slot]
        record.ended = f"died: {event.reason}"
        for index in held:
            self.after_death(index)
        if record.pid is None:  # died before its session opened: not the scenes' fault
            self._failed_starts += 1
            for index in reversed(held):
                self._pending.appendleft(index)
            if self._failed_starts >= MAX_FAILED_STARTS:
                yield from self._give_up(event.reason)
                return
        else:
            retried = []
            for index in held:
                self._crashes[index] += 1
                attempt = self._crashes[index]
                if attempt > self.policy.crash_retries:
                    yield Outcome(index, f"scene {index}: its worker died {attempt} times, last: {event.reason}")
                else:
                    self.log(f"worker {event.slot} (pid {record.pid}) died rendering scene {index} ({event.reason}); "
                             f"retrying the scene on a fresh worker (retry {attempt} of {self.policy.crash_retries})")
                    retried.append(index)
            for index in reversed(retried):
                self._pending.appendleft(index)
        if self._pending:
            self._start(event.slot)

    def _refill(self, slot: int) -> None:
        """Give ``slot`` the next indices (up to ``depth`` held), replace its worker once it holds nothing
        after recycling was asked, or let it go when nothing is left."""
        record = self._current.get(slot)
        if record is None or record.ended is not None:
            return
        if slot in self._retiring:
            if slot in self._busy:
                return
            reason = self._retiring.pop(slot)
            if self._pending:
                record.ended = f"recycled: {reason}"
                self.backend.stop(slot)
                record = self._start(slot)
        while self._pending and self._has_room(slot):
            self._assign(slot)
        if slot not in self._busy:
            record.ended = "finished"
            self.backend.stop(slot)

    def _has_room(self, slot: int) -> bool:
        """``slot``'s worker may take the next index: it holds fewer than ``depth``, and an index sent back
        after a death is held alone (so that a second death names the scene that kills its worker)."""
        held = self._busy.get(slot, [])
        if not held:
            return True
        return len(held) < self.depth and not any(self._crashes[index] for index in (*held, self._pending.peek()))

    def _start(self, slot: int) -> WorkerRecord:
        record = WorkerRecord(slot)
        self.workers.append(record)
        self._current[slot] = record
        self.backend.start(slot)
        return record

    def _assign(self, slot: int) -> None:
        index = self._pending.popleft()
        self._busy.setdefault(slot, []).append(index)
        self.backend.submit(slot, index)

    def _give_up(self, reason: str) -> Iterator[Outcome]:
        left = [index for held in self._busy.values() for index in held] + list(self._pending)
        self._busy.clear()
        self._pending.clear()
        for index in sorted(left):
            yield Outcome(index, f"scene {index}: not rendered, workers die before their Blender session opens "
                                 f"({MAX_FAILED_STARTS} in a row; last: {reason})")
