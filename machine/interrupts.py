"""Waiting in the main thread for work done in another, with Ctrl-C counted, not raised.

Only the main thread receives Ctrl-C, as `KeyboardInterrupt` raised wherever it happens
to be.  Raised in the middle of a future's own locking, it can leave a lock held for
ever, and the program can then never end.  So while the main thread waits for a
future, each Ctrl-C calls the next of the caller's handlers instead (the first may
ask the work to stop, the second may stop harder), and the caller decides afterwards,
out of every lock, what the presses mean.  One more press than there are handlers
raises `KeyboardInterrupt` as usual, for a wait that will not end.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # concurrent.futures brings logging: a wait imports it, not every start
    from concurrent.futures import Future

T = TypeVar("T")


def wait_through_ctrl_c(future: Future[T], handlers: Sequence[Callable[[], None]]) -> tuple[T, int]:
    """`future`'s result and how many times Ctrl-C was pressed while it was awaited.

    Call it from the main thread only: signal handlers can be set nowhere else.
    """
    presses = 0

    def press(number: int) -> Callable[[int, object], None]:
        def pressed(signum: int, frame: object) -> None:
            nonlocal presses
            presses = number
            # The next press is the next handler's, or past the last, KeyboardInterrupt.
            after = press(number + 1) if number < len(handlers) else signal.default_int_handler
            signal.signal(signal.SIGINT, after)
            handlers[number - 1]()

        return pressed

    from concurrent.futures import wait

    previous = signal.signal(signal.SIGINT, press(1))
    try:
        # In slices: Python may leave a Ctrl-C that comes just as a wait begins untaken
        # until the wait ends; here that is the slice's end, not the future's.
        while not wait([future], timeout=0.2).done:
            continue
        return future.result(), presses
    finally:
        signal.signal(signal.SIGINT, previous)
