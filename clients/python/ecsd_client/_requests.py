"""The typed helpers as data: each builds a ``Request`` (method, params, how to read the result).

``Client`` runs them at once and ``Pipeline`` queues them, so both offer the same helpers with the
same params and results. Names and params follow docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Union

T = TypeVar("T")

#: An entity: its id, or the name in its ``Name`` component.
EntityRef = Union[int, str]
#: A query: text such as ``"Position, !Frozen"`` or the object form ``{"all": ["Position"]}``.
QueryType = Union[str, Mapping[str, Any]]
Components = Mapping[str, Any]


def _identity(result: Any) -> Any:
    return result


def _none(_result: Any) -> None:
    return None


@dataclass(frozen=True)
class Request(Generic[T]):
    method: str
    params: dict[str, Any] | None = None
    convert: Callable[[Any], T] = _identity


def params(world: str | None = None, **members: Any) -> dict[str, Any]:
    """Params without the members left as None; ``world`` only when given."""
    out = {key: value for key, value in members.items() if value is not None}
    if world is not None:
        out["world"] = world
    return out


def call(method: str, params_: Mapping[str, Any] | None = None) -> Request[Any]:
    return Request(method, dict(params_) if params_ is not None else None)


def ping() -> Request[str]:
    return Request("server.ping")


def info() -> Request[dict[str, Any]]:
    return Request("server.info")


def create_world(name: str, **options: Any) -> Request[dict[str, Any]]:
    return Request("world.create", params(name, **options))


def destroy_world(name: str) -> Request[dict[str, Any]]:
    return Request("world.destroy", params(name))


def list_worlds() -> Request[list[str]]:
    return Request("world.list", None, lambda r: list(r["worlds"]))


def world_info(world: str | None) -> Request[dict[str, Any]]:
    return Request("world.info", params(world))


def spawn(components: Components | None, world: str | None) -> Request[int]:
    return Request("world.spawn_entity", params(world, components=dict(components or {})), lambda r: int(r["entity"]))


def spawn_many(entities: Iterable[Components], world: str | None) -> Request[list[int]]:
    return Request(
        "world.spawn_entities",
        params(world, entities=[dict(c) for c in entities]),
        lambda r: list(r["entities"]),
    )


def get(entity: EntityRef, components: Iterable[str] | None, world: str | None) -> Request[dict[str, Any]]:
    names = list(components) if components is not None else None
    return Request(
        "world.get_components", params(world, entity=entity, components=names), lambda r: dict(r["components"])
    )


def insert(entity: EntityRef, components: Components, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.insert_components", params(world, entity=entity, components=dict(components)))


def mutate(entity: EntityRef, component: str, path: str, value: Any, world: str | None) -> Request[Any]:
    # Built by hand: a value of None (JSON null) is a value here, not a missing member.
    p = params(world, entity=entity, component=component, path=path)
    p["value"] = value
    return Request("world.mutate_components", p, lambda r: r["value"])


def remove(entity: EntityRef, components: Iterable[str], world: str | None) -> Request[dict[str, Any]]:
    return Request("world.remove_components", params(world, entity=entity, components=list(components)))


def despawn(entity: EntityRef, world: str | None) -> Request[bool]:
    return Request("world.despawn_entity", params(world, entity=entity), lambda r: bool(r["despawned"]))


def despawn_many(entities: Iterable[EntityRef], world: str | None) -> Request[int]:
    return Request("world.despawn_entities", params(world, entities=list(entities)), lambda r: int(r["despawned"]))


def query_page(
    q: QueryType, fields: Iterable[str] | None, limit: int, offset: int, world: str | None
) -> Request[dict[str, Any]]:
    query = q if isinstance(q, str) else dict(q)
    names = list(fields) if fields is not None else None
    return Request("world.query", params(world, query=query, fields=names, limit=limit, offset=offset))


def watch(q: QueryType, fields: Iterable[str] | None, every: int, world: str | None) -> Request[dict[str, Any]]:
    query = q if isinstance(q, str) else dict(q)
    names = list(fields) if fields is not None else None
    return Request("world.watch", params(world, query=query, fields=names, every=every))


def unwatch(subscription: int, world: str | None) -> Request[None]:
    return Request("world.unwatch", params(world, subscription=subscription), _none)


def step(ticks: int, world: str | None) -> Request[int]:
    return Request("world.step", params(world, ticks=ticks), lambda r: int(r["tick"]))


def pause(world: str | None) -> Request[dict[str, Any]]:
    return Request("world.pause", params(world))


def resume(world: str | None) -> Request[dict[str, Any]]:
    return Request("world.resume", params(world))


def cast(
    caster: EntityRef, spell: str, target: EntityRef | None, amount: float | None, world: str | None
) -> Request[dict[str, Any]]:
    return Request("world.cast_spell", params(world, caster=caster, spell=spell, target=target, amount=amount))


def systems(world: str | None) -> Request[list[dict[str, Any]]]:
    return Request("world.list_systems", params(world), lambda r: list(r["systems"]))


def state_hash(world: str | None) -> Request[str]:
    return Request("world.hash", params(world), lambda r: str(r["hash"]))


def save(world: str | None) -> Request[dict[str, Any]]:
    return Request("world.save", params(world))


def load(world: str | None) -> Request[dict[str, Any]]:
    return Request("world.load", params(world))


def describe(entity: EntityRef, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.describe_entity", params(world, entity=entity))


def components(world: str | None) -> Request[list[dict[str, Any]]]:
    return Request("world.list_components", params(world), lambda r: list(r["components"]))


def register_component(name: str, fields: Mapping[str, Any] | None, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.register_component", params(world, name=name, fields=dict(fields or {})))


def spells(world: str | None) -> Request[list[dict[str, Any]]]:
    return Request("world.list_spells", params(world), lambda r: list(r["spells"]))


def define_system(
    name: str,
    query: str,
    source: str,
    phase: str,
    order: int | None,
    every: int | None,
    world: str | None,
) -> Request[dict[str, Any]]:
    p = params(world, name=name, query=query, phase=phase, order=order, every=every, source=source)
    return Request("world.define_system", p)


def remove_system(name: str, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.remove_system", params(world, name=name))


def define_spell(name: str, source: str, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.define_spell", params(world, name=name, source=source))


def remove_spell(name: str, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.remove_spell", params(world, name=name))


def define_action(name: str, source: str, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.define_action", params(world, name=name, source=source))


def call_action(name: str, args: Any, world: str | None) -> Request[Any]:
    # No `caller` member: the server adds the calling identity and refuses one sent by a client.
    return Request("world.call_action", params(world, name=name, args=args))


def remove_action(name: str, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.remove_action", params(world, name=name))


def actions(world: str | None) -> Request[list[dict[str, Any]]]:
    return Request("world.list_actions", params(world), lambda r: list(r["actions"]))


def define_prefab(name: str, components_: Components, world: str | None) -> Request[dict[str, Any]]:
    return Request("world.define_prefab", params(world, name=name, components=dict(components_)))


def spawn_prefab(
    name: str, count: int | None, overrides: Components | None, world: str | None
) -> Request[list[int]]:
    p = params(world, name=name, count=count, overrides=dict(overrides) if overrides is not None else None)
    return Request("world.spawn_prefab", p, lambda r: list(r["entities"]))


def prefabs(world: str | None) -> Request[list[dict[str, Any]]]:
    return Request("world.list_prefabs", params(world), lambda r: list(r["prefabs"]))
