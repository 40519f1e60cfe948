"""A blocking JSON-RPC client for one ecsd connection."""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from . import _requests as rq
from ._framing import LineDecoder, encode
from ._requests import Components, EntityRef, QueryType, Request
from ._timeout import CLIENT_TIMEOUT, Timeout
from .errors import EcsdConnectionError, EcsdTimeoutError, ProtocolError, RpcError
from .pipeline import Pending, Pipeline
from .watch import Watch

T = TypeVar("T")

_RECV_BYTES = 1 << 16


class Client:
    """One connection to ecsd. Not thread-safe: use one client per thread.

    ``token`` is sent with ``server.auth`` right after connecting. ``world`` is added as
    ``params.world`` to every ``world.*`` call that names none (all but ``world.list``).
    ``timeout`` is how many seconds to wait for each answer (and for the connection);
    None waits for ever. Raises ``EcsdConnectionError`` when the server cannot be reached and
    ``RpcError`` when the token is refused.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 7777,
        token: str | None = None,
        world: str | None = None,
        timeout: float | None = 5.0,
    ) -> None:
        self.host = host
        self.port = port
        self.world = world
        self.timeout = timeout
        self._decoder = LineDecoder()
        self._next_id = 1
        self._waiting: dict[int, str] = {}  # id -> method, in the order sent (answers come in it)
        self._answers: dict[int, Any] = {}
        self._watches: dict[int, Watch] = {}
        self._closed_because = ""
        self._last_error: RpcError | None = None  # an error line no request was waiting for
        self._selector: selectors.BaseSelector | None = None
        try:
            self._sock: socket.socket | None = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise EcsdConnectionError(f"cannot connect to ecsd at {host}:{port}: {e}") from e
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if token is not None:
            try:
                self.call("server.auth", {"token": token})
            except BaseException:
                self.close()
                raise

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection (which ends its watches on the server). Idempotent."""
        self._lost("the client was closed")

    @property
    def closed(self) -> bool:
        return self._sock is None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ecsd_client.Client {self.host}:{self.port} world={self.world!r} {state}>"

    # -- raw calls ----------------------------------------------------------------------------

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Sends one request and returns its ``result``; raises ``RpcError`` for an error answer."""
        return self._run(rq.call(method, params))

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Sends a JSON-RPC notification: it runs, but nothing is answered, not even an error."""
        self._send(encode(self._message(None, method, dict(params) if params is not None else None)))

    def poll(self) -> None:
        """Routes every message that has already arrived, without waiting: watch notifications
        are applied to their ``Watch.state`` (calls do this by themselves)."""
        sock = self._check_open()
        while True:
            while (line := self._decoder.pop()) is not None:
                self._route(self._parse(line))
            sock.setblocking(False)
            try:
                self._receive(None, _nonblocking=True)
            except BlockingIOError:
                return

    def pipeline(self) -> Pipeline:
        """Calls queued on the pipeline go out in one write when it runs; see ``Pipeline``."""
        return Pipeline(self)

    # -- typed helpers (docs/protocol.md names the methods) -----------------------------------

    def ping(self) -> str:
        return self._run(rq.ping())

    def info(self) -> dict[str, Any]:
        return self._run(rq.info())

    def create_world(
        self,
        name: str,
        *,
        tick_hz: float | None = None,
        gravity: float | Mapping[str, float] | None = None,
        bounds: Mapping[str, float | None] | None = None,
        paused: bool | None = None,
    ) -> dict[str, Any]:
        """``world.create``; returns the new world's ``world.info``."""
        return self._run(rq.create_world(name, tick_hz=tick_hz, gravity=gravity, bounds=bounds, paused=paused))

    def destroy_world(self, name: str) -> dict[str, Any]:
        """``world.destroy``; returns the server's result, ``{"destroyed": name}``."""
        return self._run(rq.destroy_world(name))

    def list_worlds(self) -> list[str]:
        return self._run(rq.list_worlds())

    def world_info(self, *, world: str | None = None) -> dict[str, Any]:
        return self._run(rq.world_info(world))

    def spawn(self, components: Components | None = None, *, world: str | None = None) -> int:
        """``world.spawn_entity``; returns the new entity's id."""
        return self._run(rq.spawn(components, world))

    def spawn_many(self, entities: Iterable[Components], *, world: str | None = None) -> list[int]:
        """``world.spawn_entities`` (all or none); returns the ids in order."""
        return self._run(rq.spawn_many(entities, world))

    def get(
        self, entity: EntityRef, components: Iterable[str] | None = None, *, world: str | None = None
    ) -> dict[str, Any]:
        """``world.get_components``; returns ``{"Name": value}`` (every component by default)."""
        return self._run(rq.get(entity, components, world))

    def insert(self, entity: EntityRef, components: Components, *, world: str | None = None) -> dict[str, Any]:
        """``world.insert_components``: adds each component or replaces its whole value; returns
        the server's result, ``{"entity": id}``."""
        return self._run(rq.insert(entity, components, world))

    def mutate(self, entity: EntityRef, component: str, path: str, value: Any, *, world: str | None = None) -> Any:
        """``world.mutate_components``: sets one field; returns the component's whole new value."""
        return self._run(rq.mutate(entity, component, path, value, world))

    def remove(self, entity: EntityRef, components: Iterable[str], *, world: str | None = None) -> dict[str, Any]:
        """``world.remove_components`` (all or none); returns the server's result, ``{"entity": id}``."""
        return self._run(rq.remove(entity, components, world))

    def despawn(self, entity: EntityRef, *, world: str | None = None) -> bool:
        """``world.despawn_entity``; returns ``True`` (its ``despawned``, as ``despawn_many`` returns
        how many)."""
        return self._run(rq.despawn(entity, world))

    def despawn_many(self, entities: Iterable[EntityRef], *, world: str | None = None) -> int:
        """``world.despawn_entities`` (all or none); returns how many died."""
        return self._run(rq.despawn_many(entities, world))

    def query(
        self,
        q: QueryType,
        fields: Iterable[str] | None = None,
        limit: int | None = None,
        *,
        page_size: int = 1000,
        world: str | None = None,
    ) -> list[dict[str, Any]]:
        """``world.query``, page after page: every match (or the first ``limit``) as
        ``[{"entity": id, "components": {...}}]`` in ascending id order.

        In a running world the pages may see different ticks; pause it for an exact answer.
        """
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        names = list(fields) if fields is not None else None
        found: list[dict[str, Any]] = []
        while limit is None or len(found) < limit:
            want = page_size if limit is None else min(page_size, limit - len(found))
            page = self._run(rq.query_page(q, names, want, len(found), world))
            entities = page["entities"]
            found.extend(entities)
            if not entities or len(found) >= page["total"]:
                break
        return found

    def step(self, ticks: int = 1, *, world: str | None = None) -> int:
        """``world.step``: runs ``ticks`` ticks now, paused or not; returns the new tick."""
        return self._run(rq.step(ticks, world))

    def pause(self, *, world: str | None = None) -> dict[str, Any]:
        return self._run(rq.pause(world))

    def resume(self, *, world: str | None = None) -> dict[str, Any]:
        return self._run(rq.resume(world))

    def cast(
        self,
        caster: EntityRef,
        spell: str,
        target: EntityRef | None = None,
        amount: float | None = None,
        *,
        world: str | None = None,
    ) -> dict[str, Any]:
        """``world.cast_spell``: queued on the caster, cast at the start of the next tick.
        Returns ``{"caster", "spell", "takes_effect_at_tick"}``."""
        return self._run(rq.cast(caster, spell, target, amount, world))

    def systems(self, *, world: str | None = None) -> list[dict[str, Any]]:
        """``world.list_systems``: the pipeline in tick order."""
        return self._run(rq.systems(world))

    def hash(self, *, world: str | None = None) -> str:
        """``world.hash``: 16 hex digits over every live entity and component value."""
        return self._run(rq.state_hash(world))

    def save(self, *, world: str | None = None) -> dict[str, Any]:
        """``world.save`` (needs a server with ``--data-dir``)."""
        return self._run(rq.save(world))

    def load(self, *, world: str | None = None) -> dict[str, Any]:
        """``world.load``: back to what the snapshot and journal hold (ends the world's watches)."""
        return self._run(rq.load(world))

    def describe(self, entity: EntityRef, *, world: str | None = None) -> dict[str, Any]:
        """``world.describe_entity``: ``{"entity", "components", "systems", "changes"}``."""
        return self._run(rq.describe(entity, world))

    def components(self, *, world: str | None = None) -> list[dict[str, Any]]:
        """``world.list_components``: every type, ``{"name", "kind", "fields", "count"}``."""
        return self._run(rq.components(world))

    def register_component(
        self, name: str, fields: Mapping[str, Any] | None = None, *, world: str | None = None
    ) -> dict[str, Any]:
        """``world.register_component`` (no fields: a tag); returns the new type as
        ``components()`` lists it."""
        return self._run(rq.register_component(name, fields, world))

    def spells(self, *, world: str | None = None) -> list[dict[str, Any]]:
        """``world.list_spells``: ``[{"name", "description"}]`` (``cast`` casts one)."""
        return self._run(rq.spells(world))

    def define_system(
        self,
        name: str,
        query: str,
        source: str,
        phase: str = "simulation",
        *,
        order: int | None = None,
        every: int | None = None,
        world: str | None = None,
    ) -> dict[str, Any]:
        """``world.define_system``: a system written in Lua 5.4 (docs/scripting.md), or the one of
        that name replaced from the next tick on; returns ``{"name", "replaced", "from_tick"}``. A
        syntax error raises ``EcsdError`` (``invalid_params``) with its line and column."""
        return self._run(rq.define_system(name, query, source, phase, order, every, world))

    def remove_system(self, name: str, *, world: str | None = None) -> dict[str, Any]:
        """``world.remove_system``: takes a Lua system out; ``{"name", "removed"}``."""
        return self._run(rq.remove_system(name, world))

    def define_spell(self, name: str, source: str, *, world: str | None = None) -> dict[str, Any]:
        """``world.define_spell``: a spell written in Lua 5.4 that ``cast`` casts; ``{"name", "replaced"}``."""
        return self._run(rq.define_spell(name, source, world))

    def remove_spell(self, name: str, *, world: str | None = None) -> dict[str, Any]:
        """``world.remove_spell``: takes a Lua spell out; ``{"name", "removed"}``."""
        return self._run(rq.remove_spell(name, world))

    def define_action(self, name: str, source: str, *, world: str | None = None) -> dict[str, Any]:
        """``world.define_action``: an action written in Lua 5.4 (its chunk returns
        ``function(w, caller, args)``) that ``call_action`` runs; ``{"name", "replaced"}``."""
        return self._run(rq.define_action(name, source, world))

    def call_action(self, name: str, args: Any = None, *, world: str | None = None) -> Any:
        """``world.call_action``: runs the action now, between two ticks, as this connection's
        identity; returns whatever it returned (None for ``nil``). An action that raises changes
        nothing and raises ``RpcError`` ``action_failed`` with the script's message; a player
        calling faster than ``--action-rate`` gets ``rate_limited`` (``data["retry_after"]``)."""
        return self._run(rq.call_action(name, args, world))

    def remove_action(self, name: str, *, world: str | None = None) -> dict[str, Any]:
        """``world.remove_action``: ``{"name", "removed"}``."""
        return self._run(rq.remove_action(name, world))

    def actions(self, *, world: str | None = None) -> list[dict[str, Any]]:
        """``world.list_actions``: ``[{"name", "calls", "failures", "last_error"?}]``."""
        return self._run(rq.actions(world))

    def define_prefab(self, name: str, components: Components, *, world: str | None = None) -> dict[str, Any]:
        """``world.define_prefab`` (defines or redefines); returns the server's result, ``{"name"}``."""
        return self._run(rq.define_prefab(name, components, world))

    def spawn_prefab(
        self,
        name: str,
        count: int | None = None,
        overrides: Components | None = None,
        *,
        world: str | None = None,
    ) -> list[int]:
        """``world.spawn_prefab``: ``count`` entities (default 1), ``overrides`` merged field by
        field; returns their ids."""
        return self._run(rq.spawn_prefab(name, count, overrides, world))

    def prefabs(self, *, world: str | None = None) -> list[dict[str, Any]]:
        """``world.list_prefabs``: ``[{"name", "components"}]``."""
        return self._run(rq.prefabs(world))

    def export_world(self, *, world: str | None = None, seal: bool = False, chunk_bytes: int | None = None) -> str:
        """Every chunk of one ``world.export``: the world's snapshot text (one tick's, however long
        the reading takes), as ``ecsctl export`` writes it and ``import_world`` reads it."""
        first: dict[str, Any] = rq.params(world, max_bytes=chunk_bytes)
        if seal:
            first["seal"] = True
        answer = self.call("world.export", first)
        parts = [answer["data"]]
        offset = len(answer["data"].encode("utf-8"))
        while not answer["done"]:
            answer = self.call(
                "world.export", rq.params(world or answer["world"], export=answer["export"], offset=offset)
            )
            parts.append(answer["data"])
            offset += len(answer["data"].encode("utf-8"))
        return "".join(parts)

    def import_world(
        self, name: str, text: str, *, paused: bool | None = None, chunk_bytes: int = 200_000
    ) -> dict[str, Any]:
        """Creates world ``name`` from a snapshot text (``export_world``'s, or a file ``ecsctl
        export`` wrote), sent with ``world.import`` in chunks of at most ``chunk_bytes``; returns the
        last answer, ``{"world", "bytes", "done": True, "tick", "entities"}``."""
        data = text.encode("utf-8")
        offset = 0
        while True:
            end = min(offset + chunk_bytes, len(data))
            while end < len(data) and end > offset and (data[end] & 0xC0) == 0x80:
                end -= 1  # never inside a UTF-8 sequence: each chunk is text of its own
            final = end >= len(data)
            params: dict[str, Any] = {"world": name, "data": data[offset:end].decode("utf-8"), "offset": offset}
            if final:
                params["final"] = True
                if paused is not None:
                    params["paused"] = paused
            answer = self.call("world.import", params)
            if final:
                return answer
            offset = end

    def watch(
        self,
        query: QueryType,
        fields: Iterable[str] | None = None,
        every: int = 1,
        *,
        world: str | None = None,
        max_queue: int = 10_000,
    ) -> Watch:
        """``world.watch``: subscribes and returns a ``Watch`` holding the matches now.

        Its ``state`` follows every notification the client reads, whatever call reads it.
        """
        request = rq.watch(query, fields, every, world)
        [request_id] = self._submit([request])
        # Reading stops right after this answer, so no notification of the new subscription is
        # routed before it is registered.
        result = self._result(request_id, request)
        watch = Watch(self, result, world if world is not None else self.world, max_queue)
        self._watches[watch.subscription] = watch
        return watch

    # -- machinery shared with Pipeline and Watch ---------------------------------------------

    def _run(self, request: Request[T]) -> T:
        [request_id] = self._submit([request])
        return self._result(request_id, request)

    def _run_pipeline(self, calls: Sequence[Pending[Any]]) -> None:
        """Sends every call in one write, then fills each ``Pending`` with its answer."""
        ids = self._submit([p.request for p in calls])
        try:
            for index, (request_id, pending) in enumerate(zip(ids, calls)):
                try:
                    pending._set_value(self._result(request_id, pending.request))
                except RpcError as e:
                    e.index = index
                    pending._set_error(e)
        finally:
            for request_id in ids:  # after a timeout, the rest are dropped when they come
                self._waiting.pop(request_id, None)
                self._answers.pop(request_id, None)

    def _submit(self, requests: Sequence[Request[Any]]) -> list[int]:
        self._check_open()
        ids = list(range(self._next_id, self._next_id + len(requests)))
        data = b"".join(
            encode(self._message(request_id, r.method, r.params)) for request_id, r in zip(ids, requests)
        )
        self._next_id += len(requests)
        for request_id, r in zip(ids, requests):
            self._waiting[request_id] = r.method
        self._send(data)
        return ids

    def _result(self, request_id: int, request: Request[T]) -> T:
        try:
            self._pump_until(lambda: request_id in self._answers, CLIENT_TIMEOUT, f"answer to {request.method}")
        except EcsdTimeoutError:
            self._waiting.pop(request_id, None)  # its answer is dropped if it comes later
            raise
        answer = self._answers.pop(request_id)
        if "error" in answer:
            raise RpcError.from_error(answer["error"], request.method)
        return request.convert(answer.get("result"))

    def _message(self, request_id: int | None, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        params = self._with_world(method, params)
        if params is not None:
            message["params"] = params
        return message

    def _with_world(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        if self.world is None or not method.startswith("world.") or method == "world.list":
            return params
        if params is None:
            return {"world": self.world}
        if "world" in params:
            return params
        return {**params, "world": self.world}

    def _pump_until(self, done: Callable[[], bool], timeout: Timeout, waiting_for: str) -> None:
        """Reads and routes messages, one at a time, until ``done()`` holds.

        Raises ``EcsdTimeoutError`` when it does not within ``timeout`` seconds.
        """
        if done():
            return
        seconds = self.timeout if timeout is CLIENT_TIMEOUT else timeout
        assert not isinstance(seconds, type(CLIENT_TIMEOUT))
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while not done():
                self._route(self._read_message(deadline))
        except EcsdTimeoutError:
            raise EcsdTimeoutError(f"no {waiting_for} from ecsd within {seconds} s") from None

    def _read_message(self, deadline: float | None) -> Any:
        while True:
            line = self._decoder.pop()
            if line is not None:
                return self._parse(line)
            self._receive(deadline)

    @staticmethod
    def _parse(line: bytes) -> Any:
        try:
            return json.loads(line)
        except ValueError as e:
            raise ProtocolError(f"ecsd sent a line that is not JSON: {line[:200]!r}") from e

    def _route(self, message: Any) -> None:
        if isinstance(message, list):  # a batch's answer (only from call()ers who build batches by hand)
            for element in message:
                self._route(element)
            return
        if not isinstance(message, dict):
            raise ProtocolError(f"ecsd sent a message that is not an object: {message!r:.200}")
        if "result" in message or "error" in message:
            request_id = message.get("id")
            if request_id is None and "error" in message:
                # An error the server could not tie to a request (line too long, request timeout):
                # answers come in request order, so it is the oldest waiting request's.
                if not self._waiting:
                    self._last_error = RpcError.from_error(message["error"])
                    return
                request_id = next(iter(self._waiting))
            if request_id in self._waiting:
                del self._waiting[request_id]
                self._answers[request_id] = message
            # Otherwise a late answer to a call that timed out, or a `...+watch` update: dropped.
            return
        if message.get("method") == "world.watch" and "id" not in message:
            params = message.get("params")
            if isinstance(params, dict):
                watch = self._watches.get(params.get("subscription"))  # type: ignore[arg-type]
                if watch is not None:
                    watch._apply(params)
                    if watch.ended:
                        self._watches.pop(watch.subscription, None)
            # A notification for a subscription already unwatched: dropped.

    def _forget_watch(self, watch: Watch) -> None:
        self._watches.pop(watch.subscription, None)

    # -- the socket ---------------------------------------------------------------------------

    def _check_open(self) -> socket.socket:
        if self._sock is None:
            raise EcsdConnectionError(self._closed_because)
        return self._sock

    def _receive(self, deadline: float | None, _nonblocking: bool = False) -> None:
        """Reads what the socket has into the decoder, waiting until ``deadline`` at most."""
        sock = self._check_open()
        if _nonblocking:
            pass  # the caller made the socket non-blocking: BlockingIOError when nothing is there
        elif deadline is None:
            sock.settimeout(None)
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EcsdTimeoutError("timed out")
            sock.settimeout(left)
        try:
            data = sock.recv(_RECV_BYTES)
        except BlockingIOError:
            raise
        except TimeoutError:
            raise EcsdTimeoutError("timed out") from None
        except OSError as e:
            self._lost(f"the connection to ecsd at {self.host}:{self.port} failed: {e}")
            raise EcsdConnectionError(self._closed_because) from e
        if not data:
            why = f"ecsd at {self.host}:{self.port} closed the connection"
            if self._last_error is not None:
                why += f" after: {self._last_error}"
            self._lost(why)
            raise EcsdConnectionError(self._closed_because)
        self._decoder.feed(data)

    def _send(self, data: bytes) -> None:
        """Writes all of ``data``. While the socket is full it reads what the server answers
        meanwhile (buffered, routed later), so a long pipeline cannot deadlock on full buffers."""
        sock = self._check_open()
        view = memoryview(data)
        sock.setblocking(False)
        try:
            while view:
                try:
                    view = view[sock.send(view) :]
                    continue
                except BlockingIOError:
                    pass
                if self._selector is None:
                    self._selector = selectors.DefaultSelector()
                    self._selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
                events = self._selector.select(self.timeout)
                if not events:
                    self._lost(f"could not send to ecsd at {self.host}:{self.port} within {self.timeout} s")
                    raise EcsdTimeoutError(self._closed_because)
                if any(mask & selectors.EVENT_READ for _, mask in events):
                    self._receive(None)  # readable: returns at once
                    sock.setblocking(False)
        except OSError as e:
            if isinstance(e, EcsdTimeoutError | EcsdConnectionError):
                raise
            self._lost(f"the connection to ecsd at {self.host}:{self.port} failed: {e}")
            raise EcsdConnectionError(self._closed_because) from e

    def _lost(self, why: str) -> None:
        """The connection is over: every later call raises ``EcsdConnectionError(why)``."""
        if self._sock is None:
            return
        self._closed_because = why
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        self._sock.close()
        self._sock = None
        self._waiting.clear()
