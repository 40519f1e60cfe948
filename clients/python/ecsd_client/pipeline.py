"""Pipelines: many requests in one write, answers matched back to their calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import _requests as rq
from ._requests import Components, EntityRef, Request
from .errors import RpcError

if TYPE_CHECKING:
    from .client import Client

T = TypeVar("T")


class Pending(Generic[T]):
    """One queued call of a pipeline; its outcome once the pipeline has run."""

    def __init__(self, request: Request[T]) -> None:
        self.request = request
        self._done = False
        self._value: T | None = None
        self._error: RpcError | None = None

    @property
    def done(self) -> bool:
        """True once the pipeline has run and this call has its answer."""
        return self._done

    @property
    def result(self) -> T:
        """The call's result (as the client's helper of the same name returns it).

        Raises its ``RpcError`` if the server refused it, ``RuntimeError`` before the pipeline ran.
        """
        if not self._done:
            raise RuntimeError(f"{self.request.method}: the pipeline has not run yet")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    @property
    def error(self) -> RpcError | None:
        """The server's error for this call, or None."""
        return self._error

    def _set_value(self, value: T) -> None:
        self._value, self._done = value, True

    def _set_error(self, error: RpcError) -> None:
        self._error, self._done = error, True

    def __repr__(self) -> str:
        if not self._done:
            outcome = "queued"
        elif self._error is not None:
            outcome = f"error={self._error.reason}"
        else:
            outcome = f"result={self._value!r:.60}"
        return f"<Pending {self.request.method} {outcome}>"


class Pipeline:
    """Queues calls, then sends them all in one write; answers are matched to calls by id.

    As a context manager it runs when the block ends (raising the first ``RpcError``, whose
    ``index`` says which call failed)::

        with client.pipeline() as p:
            a = p.spawn({"Position": {"x": 1}})
            tick = p.step(5)
        print(a.result, tick.result)

    or call ``execute()`` yourself, which returns the results in order. Each call gets its own
    request line; the server runs them in order and answers in order. Every typed helper of
    ``Client`` except ``query`` and ``watch`` is offered, taking the same params.
    """

    def __init__(self, client: Client) -> None:
        self._client = client
        self._calls: list[Pending[Any]] = []

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.execute()
        else:
            self._calls.clear()

    def __len__(self) -> int:
        return len(self._calls)

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Sends every call queued since the last run in one write and waits for all answers.

        Returns the results in queued order. With ``raise_on_error`` (the default) the first
        ``RpcError`` is raised once every answer is in; otherwise errors take their call's place
        in the list. Timeouts and connection errors are raised whatever it says.
        """
        calls, self._calls = self._calls, []
        if not calls:
            return []
        self._client._run_pipeline(calls)
        if raise_on_error:
            for pending in calls:
                if pending.error is not None:
                    raise pending.error
        return [pending.error if pending.error is not None else pending.result for pending in calls]

    def _add(self, request: Request[T]) -> Pending[T]:
        pending = Pending(request)
        self._calls.append(pending)
        return pending

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Pending[Any]:
        return self._add(rq.call(method, params))

    def ping(self) -> Pending[str]:
        return self._add(rq.ping())

    def info(self) -> Pending[dict[str, Any]]:
        return self._add(rq.info())

    def create_world(
        self,
        name: str,
        *,
        tick_hz: float | None = None,
        gravity: float | Mapping[str, float] | None = None,
        bounds: Mapping[str, float | None] | None = None,
        paused: bool | None = None,
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.create_world(name, tick_hz=tick_hz, gravity=gravity, bounds=bounds, paused=paused))

    def destroy_world(self, name: str) -> Pending[dict[str, Any]]:
        return self._add(rq.destroy_world(name))

    def list_worlds(self) -> Pending[list[str]]:
        return self._add(rq.list_worlds())

    def world_info(self, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.world_info(world))

    def spawn(self, components: Components | None = None, *, world: str | None = None) -> Pending[int]:
        return self._add(rq.spawn(components, world))

    def spawn_many(self, entities: Iterable[Components], *, world: str | None = None) -> Pending[list[int]]:
        return self._add(rq.spawn_many(entities, world))

    def get(
        self, entity: EntityRef, components: Iterable[str] | None = None, *, world: str | None = None
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.get(entity, components, world))

    def insert(
        self, entity: EntityRef, components: Components, *, world: str | None = None
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.insert(entity, components, world))

    def mutate(
        self, entity: EntityRef, component: str, path: str, value: Any, *, world: str | None = None
    ) -> Pending[Any]:
        return self._add(rq.mutate(entity, component, path, value, world))

    def remove(
        self, entity: EntityRef, components: Iterable[str], *, world: str | None = None
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.remove(entity, components, world))

    def despawn(self, entity: EntityRef, *, world: str | None = None) -> Pending[bool]:
        return self._add(rq.despawn(entity, world))

    def despawn_many(self, entities: Iterable[EntityRef], *, world: str | None = None) -> Pending[int]:
        return self._add(rq.despawn_many(entities, world))

    def step(self, ticks: int = 1, *, world: str | None = None) -> Pending[int]:
        return self._add(rq.step(ticks, world))

    def pause(self, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.pause(world))

    def resume(self, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.resume(world))

    def cast(
        self,
        caster: EntityRef,
        spell: str,
        target: EntityRef | None = None,
        amount: float | None = None,
        *,
        world: str | None = None,
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.cast(caster, spell, target, amount, world))

    def systems(self, *, world: str | None = None) -> Pending[list[dict[str, Any]]]:
        return self._add(rq.systems(world))

    def hash(self, *, world: str | None = None) -> Pending[str]:
        return self._add(rq.state_hash(world))

    def save(self, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.save(world))

    def load(self, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.load(world))

    def describe(self, entity: EntityRef, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.describe(entity, world))

    def components(self, *, world: str | None = None) -> Pending[list[dict[str, Any]]]:
        return self._add(rq.components(world))

    def register_component(
        self, name: str, fields: Mapping[str, Any] | None = None, *, world: str | None = None
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.register_component(name, fields, world))

    def spells(self, *, world: str | None = None) -> Pending[list[dict[str, Any]]]:
        return self._add(rq.spells(world))

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
    ) -> Pending[dict[str, Any]]:
        return self._add(rq.define_system(name, query, source, phase, order, every, world))

    def remove_system(self, name: str, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.remove_system(name, world))

    def define_spell(self, name: str, source: str, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.define_spell(name, source, world))

    def remove_spell(self, name: str, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.remove_spell(name, world))

    def define_action(self, name: str, source: str, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.define_action(name, source, world))

    def call_action(self, name: str, args: Any = None, *, world: str | None = None) -> Pending[Any]:
        return self._add(rq.call_action(name, args, world))

    def remove_action(self, name: str, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.remove_action(name, world))

    def actions(self, *, world: str | None = None) -> Pending[list[dict[str, Any]]]:
        return self._add(rq.actions(world))

    def define_prefab(self, name: str, components: Components, *, world: str | None = None) -> Pending[dict[str, Any]]:
        return self._add(rq.define_prefab(name, components, world))

    def spawn_prefab(
        self, name: str, count: int | None = None, overrides: Components | None = None, *, world: str | None = None
    ) -> Pending[list[int]]:
        return self._add(rq.spawn_prefab(name, count, overrides, world))

    def prefabs(self, *, world: str | None = None) -> Pending[list[dict[str, Any]]]:
        return self._add(rq.prefabs(world))
