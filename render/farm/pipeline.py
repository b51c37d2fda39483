"""Frame k's post-render work beside frame k+1's render (issue 33: CPU work overlapped with the render).

A frame's render call (``bpy.ops.render.render``) releases Python's GIL while Cycles renders
(benchmarks/frame_costs.py ``--gil``: a Python thread keeps counting through it), so what a frame
needs after its render and before its files exist can run in a second thread meanwhile: the
legibility reading, the occlusion record, the PNG encoding and the atomic writes. Whatever touches
Blender (building the scene, the mask pre-pass, the render, reading the result back, the
visibility checks on the mask) stays in the calling thread, in the order the serial worker does it.

At most one frame is in flight: frame k's post-render work is collected before frame k+1's starts.
A candidate the reader rejects sends its index back to the front of the queue, and its next
candidate renders next, from the index's own seeded stream; the files are therefore the bytes
:func:`render.farm.worker.render_with_retries` writes (a test checks), only in another order.
Failures surface as the serial worker's do: a deterministic one as the index's ``Outcome`` at once,
an unexpected one (in either thread) retried from the index's first candidate, then reported.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from render.engines.registry import RenderBackend
from render.farm.outputs import write_encoded_scene
from render.farm.worker import (
    UNEXPECTED_FAILURE_RETRIES,
    Outcome,
    RenderJob,
    ShownCandidate,
    accepted_scene,
    encoded_files,
    misread,
    render_shown,
    visibility_failure,
)
from render.model.sampler import SampledScene, SceneSamplingError, candidate_scenes


@dataclass
class IndexState:
    """Where one scene index stands: its candidate stream, how many it drew, why they were rejected."""

    index: int
    job: RenderJob
    candidates: Iterator[SampledScene] = field(init=False)
    attempt: int = 0
    last_reason: str = ""
    failures: int = 0  # unexpected failures so far

    def __post_init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """From the first candidate again (after an unexpected failure, as the serial worker retries)."""
        self.candidates = candidate_scenes(self.job.seed, self.index, self.job.options)
        self.attempt = 0
        self.last_reason = ""


@dataclass(frozen=True)
class DrawnCandidate:
    """A rendered candidate that passed the visibility checks, waiting for its post-render work."""

    state: IndexState
    shown: ShownCandidate


def draw_candidate(session: RenderBackend, state: IndexState) -> DrawnCandidate | Outcome:
    """Render ``state``'s next candidates until one passes the visibility checks (this thread: Blender),
    or the index's attempts are used up (its failure ``Outcome``)."""
    job = state.job
    while state.attempt < job.max_visibility_attempts:
        state.attempt += 1
        shown = render_shown(session, job, next(state.candidates))
        if not shown.problems and shown.frame is not None:
            return DrawnCandidate(state, shown)
        state.last_reason = shown.problems[0]
    return exhausted(state)


def exhausted(state: IndexState) -> Outcome:
    return Outcome(state.index, str(visibility_failure(state.job, state.index, state.last_reason)), state.job.max_visibility_attempts)


def finish_candidate(drawn: DrawnCandidate) -> str | None:
    """The post-render work (the second thread): read the frame (legible only), then record, encode
    and write its files. The reader's first objection when it rejects the candidate, else None."""
    job = drawn.state.job
    problems = misread(drawn.shown, job)
    if problems:
        return problems[0]
    write_encoded_scene(job.layout, drawn.state.index, encoded_files(accepted_scene(drawn.shown, job, drawn.state.attempt), job))
    return None


class Pipeline:
    """Frames of the indices fed to it, rendered in ``session`` one :meth:`step` at a time, each one's
    post-render work in a helper thread while the next renders (at most one in flight)."""

    def __init__(self, session: RenderBackend, job: RenderJob) -> None:
        self.session = session
        self.job = job
        self._queued: deque[IndexState] = deque()  # fresh indices, in the order fed
        self._again: deque[IndexState] = deque()  # indices whose candidate was rejected or failed: they render first
        self._in_flight: tuple[DrawnCandidate, Future] | None = None
        self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ruclevr-post-render")

    def feed(self, index: int) -> None:
        self._queued.append(IndexState(index, self.job))

    @property
    def has_queued(self) -> bool:
        return bool(self._again or self._queued)

    @property
    def busy(self) -> bool:
        """Something is queued or in flight: :meth:`step` has work."""
        return self.has_queued or self._in_flight is not None

    def in_flight_finished(self) -> bool:
        """The frame in flight (if any) has finished its post-render work: :meth:`step` would not wait for it."""
        return self._in_flight is None or self._in_flight[1].done()

    def step(self) -> list[Outcome]:
        """Render the next queued index's next candidate (if any), then settle the frame in flight
        (its work ran meanwhile) and put the new one in flight; the outcomes that finished."""
        state = self._again.popleft() if self._again else (self._queued.popleft() if self._queued else None)
        drawn = None if state is None else guarded_draw(self.session, state, self._again)
        outcomes = [] if self._in_flight is None else list(settled(*self._in_flight, self._again))
        self._in_flight = None
        if isinstance(drawn, Outcome):
            outcomes.append(drawn)
        elif drawn is not None:
            self._in_flight = (drawn, self._helper.submit(finish_candidate, drawn))
        return outcomes

    def close(self) -> None:
        """Wait for the frame in flight, if any (its files are written or its temporaries removed), and stop the helper."""
        self._helper.shutdown(wait=True)


def pipelined_outcomes(session: RenderBackend, job: RenderJob, indices: Iterable[int]) -> Iterator[Outcome]:
    """Render and write ``indices`` in ``session`` through a :class:`Pipeline`; one ``Outcome`` per
    index, in the order they finish."""
    pipeline = Pipeline(session, job)
    try:
        for index in indices:
            pipeline.feed(index)
            yield from pipeline.step()
        while pipeline.busy:
            yield from pipeline.step()
    finally:
        pipeline.close()


def guarded_draw(session: RenderBackend, state: IndexState, again: deque[IndexState]) -> DrawnCandidate | Outcome | None:
    """:func:`draw_candidate`, its failures handled as the serial worker handles them (None: retried later)."""
    try:
        return draw_candidate(session, state)
    except SceneSamplingError as failure:
        return Outcome(state.index, str(failure))
    except Exception as failure:  # noqa: BLE001 - one scene's crash must not end the run
        return failed_unexpectedly(state, failure, again)


def settled(drawn: DrawnCandidate, work: Future, again: deque[IndexState]) -> Iterator[Outcome]:
    """The outcome of a frame's post-render work: its index finished, failed, or queued to render again."""
    state = drawn.state
    try:
        rejection = work.result()
    except Exception as failure:  # noqa: BLE001 - one scene's crash must not end the run
        outcome = failed_unexpectedly(state, failure, again)
        if outcome is not None:
            yield outcome
        return
    if rejection is None:
        yield Outcome(state.index, None, state.attempt)
    elif state.attempt >= state.job.max_visibility_attempts:
        state.last_reason = rejection
        yield exhausted(state)
    else:
        state.last_reason = rejection
        again.appendleft(state)


def failed_unexpectedly(state: IndexState, failure: Exception, again: deque[IndexState]) -> Outcome | None:
    """Retry the index from its first candidate (as the serial worker does), or report it once retries are spent."""
    state.failures += 1
    if state.failures > UNEXPECTED_FAILURE_RETRIES:
        error = f"scene {state.index}: {type(failure).__name__}: {failure}\n{''.join(traceback.format_exception(failure, limit=3))}"
        return Outcome(state.index, error.strip())
    state.restart()
    again.appendleft(state)
    return None


# --- a worker process serving its tasks through a pipeline (render/farm/local_workers.py) ----------

#: Seconds between looks at the task pipe while the frame in flight finishes its post-render work.
POLL_SECONDS = 0.005


def serve_pipelined(connection: Connection, pipeline: Pipeline, send: Callable[[Outcome], None]) -> None:
    """Render the scene indices received on ``connection`` through ``pipeline`` and ``send`` each
    outcome, until told to stop (None: the held indices are finished first) or the parent is gone.
    The scheduler gives such a worker two indices at a time, so the next one is at hand when a frame's
    post-render work goes to the helper thread."""
    while True:
        if not pipeline.has_queued and task_comes_first(connection, pipeline):
            try:
                task = connection.recv()
            except EOFError:  # the parent is gone
                return
            if task is None:
                while pipeline.busy:
                    for outcome in pipeline.step():
                        send(outcome)
                return
            pipeline.feed(task)
        for outcome in pipeline.step():  # with nothing queued: settles the frame in flight
            send(outcome)


def task_comes_first(connection: Connection, pipeline: Pipeline) -> bool:
    """Wait until a task is waiting (True) or the frame in flight has finished its post-render work
    (False, and no task is waiting); with nothing in flight, a task is all there is to wait for."""
    if not pipeline.busy:
        return True
    while not pipeline.in_flight_finished():
        if connection.poll(POLL_SECONDS):
            return True
    return connection.poll()
