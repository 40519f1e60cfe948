"""``world.watch`` subscriptions: a live copy of a query's matches, and its notifications."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _requests as rq
from ._timeout import CLIENT_TIMEOUT, Timeout
from .errors import EcsdConnectionError, EcsdError, RpcError

if TYPE_CHECKING:
    from .client import Client

#: What ``Watch.state`` holds: entity id -> {component name: value}.
State = dict[int, dict[str, Any]]


def _entities(listing: Any) -> State:
    return {int(e["entity"]): dict(e.get("components") or {}) for e in listing or ()}


class Watch(Iterator[dict[str, Any]]):
    """One subscription, made by ``Client.watch()``.

    ``state`` starts as the watch's first answer and has every notification the client has
    read applied to it: ``entered`` replaces an entity, ``changed`` merges its components (and
    drops the ``removed`` ones), ``left`` deletes it, ``resync`` replaces everything. The client
    reads notifications whenever it reads at all (during any call, too), so after a call returns
    ``state`` holds every notification the server sent before that call's answer; in a paused
    world that is every change the call made.

    Iterating yields each notification's ``params`` (``subscription``, ``tick``, ``entered``,
    ``changed``, ``left``, maybe ``coalesced`` or ``resync``) in order, waiting up to the client's
    timeout for the next (then ``EcsdTimeoutError``). Iteration stops when the server ends the
    subscription (``end_reason`` says why: ``world_destroyed``, ``world_reloaded``,
    ``server_shutdown``) or it is closed. Notifications nobody has iterated over are kept, at most
    ``max_queue`` of them (the oldest go first; ``dropped`` counts them); ``state`` has them all.

    Closing (``close()``, or leaving a ``with`` block) sends ``world.unwatch``.
    """

    def __init__(self, client: Client, answer: dict[str, Any], world: str | None, max_queue: int) -> None:
        self._client = client
        self.subscription: int = int(answer["subscription"])
        self.world = world
        self.tick: int = int(answer.get("tick", 0))
        self.state: State = _entities(answer.get("entities"))
        self.ended = False
        self.end_reason: str | None = None
        self.dropped = 0
        self._queue: deque[dict[str, Any]] = deque(maxlen=max_queue)

    def __repr__(self) -> str:
        status = f"ended ({self.end_reason})" if self.ended else "live"
        return f"<Watch {self.subscription} tick={self.tick} entities={len(self.state)} {status}>"

    # -- reading ------------------------------------------------------------------------------

    def __iter__(self) -> Watch:
        return self

    def __next__(self) -> dict[str, Any]:
        notification = self.next()
        if notification is None:
            raise StopIteration
        return notification

    def next(self, timeout: Timeout = CLIENT_TIMEOUT, *, wait: bool = True) -> dict[str, Any] | None:
        """The next notification's params, or None once the subscription is over.

        Waits ``timeout`` seconds (default: the client's timeout; None: for ever), then raises
        ``EcsdTimeoutError``. With ``wait=False`` it only looks at what has arrived.
        """
        if not self._queue and not self.ended:
            if wait:
                self._client._pump_until(lambda: bool(self._queue) or self.ended, timeout, self._what)
            else:
                self._client.poll()
        return self._queue.popleft() if self._queue else None

    def until(self, predicate: Callable[[State], bool], timeout: Timeout = CLIENT_TIMEOUT) -> State:
        """Reads notifications until ``predicate(state)`` holds; returns the state.

        Raises ``EcsdTimeoutError`` after ``timeout`` seconds (default: the client's timeout),
        and ``EcsdError`` if the subscription ends first.
        """
        self._client._pump_until(
            lambda: self.ended or predicate(self.state), timeout, f"state of watch {self.subscription} meeting the condition"
        )
        if not predicate(self.state):
            raise EcsdError(f"watch {self.subscription} ended ({self.end_reason}) before the condition held")
        return self.state

    # -- closing ------------------------------------------------------------------------------

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:  # keep the first error; the subscription still ends with the connection
            try:
                self.close()
            except EcsdError:
                pass

    def close(self) -> None:
        """Unsubscribes (``world.unwatch``). Nothing happens if it is over already."""
        if self.ended:
            return
        self.ended, self.end_reason = True, "unwatched"
        self._client._forget_watch(self)
        if self._client.closed:
            return
        try:
            self._client._run(rq.unwatch(self.subscription, self.world))
        except RpcError as e:
            if e.reason != "no_such_subscription":  # the server ended it meanwhile
                raise
        except EcsdConnectionError:
            pass  # a closed connection ends its subscriptions

    unwatch = close

    # -- applying notifications (called by the client) ----------------------------------------

    @property
    def _what(self) -> str:
        return f"notification for watch {self.subscription}"

    def _apply(self, params: dict[str, Any]) -> None:
        if "tick" in params:
            self.tick = int(params["tick"])
        if params.get("ended"):
            self.ended = True
            self.end_reason = str(params.get("reason", "ended"))
            return
        if params.get("resync"):
            self.state = _entities(params.get("entities"))
        else:
            for entry in params.get("entered") or ():
                self.state[int(entry["entity"])] = dict(entry.get("components") or {})
            for entry in params.get("changed") or ():
                components = self.state.setdefault(int(entry["entity"]), {})
                components.update(entry.get("components") or {})
                for name in entry.get("removed") or ():
                    components.pop(name, None)
            for entry in params.get("left") or ():
                self.state.pop(int(entry["entity"]), None)
        if self._queue.maxlen is not None and len(self._queue) == self._queue.maxlen:
            self.dropped += 1
        self._queue.append(params)
