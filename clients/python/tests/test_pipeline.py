"""Pipelines: many calls in one write, each answer back to its call."""

from __future__ import annotations

import pytest

from ecsd_client import Client, Pending, RpcError
from ecsd_client.testing import EcsdServer


def test_results_come_back_to_their_calls(client: Client) -> None:
    with client.pipeline() as p:
        spawned = [p.spawn({"Position": {"x": x}}) for x in range(10)]
        tick = p.step(3)
        info = p.world_info()
    ids = [s.result for s in spawned]
    assert len(set(ids)) == 10 and all(isinstance(i, int) for i in ids)
    assert tick.result == 3
    assert info.result["entities"] == 10 and info.result["tick"] == 3
    with client.pipeline() as p:
        reads = [p.get(i, ["Position"]) for i in ids]
    assert [r.result["Position"]["x"] for r in reads] == list(range(10))


def test_execute_returns_results_in_order(client: Client) -> None:
    p = client.pipeline()
    p.spawn({"Health": {}})
    p.ping()
    p.hash()
    p.call("world.info")
    assert len(p) == 4
    entity, pong, digest, info = p.execute()
    assert isinstance(entity, int) and pong == "pong" and len(digest) == 16 and info["entities"] == 1
    assert len(p) == 0 and p.execute() == []  # reusable: runs what was queued since


def test_a_failure_is_raised_after_every_answer(client: Client) -> None:
    p = client.pipeline()
    first = p.spawn({"Position": {}})
    bad = p.get(123456789)
    last = p.spawn({"Position": {}})
    with pytest.raises(RpcError) as caught:
        p.execute()
    assert caught.value.reason == "no_such_entity" and caught.value.index == 1
    assert first.done and last.done  # the calls after it ran and were answered
    assert isinstance(last.result, int)
    assert bad.error is caught.value
    with pytest.raises(RpcError):
        bad.result
    assert len(client.query("Position")) == 2


def test_errors_in_place(client: Client) -> None:
    p = client.pipeline()
    p.spawn({})
    p.call("nope")
    p.step(0)
    entity, missing, invalid = p.execute(raise_on_error=False)
    assert isinstance(entity, int)
    assert isinstance(missing, RpcError) and missing.reason == "method_not_found" and missing.index == 1
    assert isinstance(invalid, RpcError) and invalid.reason == "invalid_params" and invalid.index == 2


def test_with_block_raises_the_first_failure(client: Client) -> None:
    with pytest.raises(RpcError, match="no_such_entity"):
        with client.pipeline() as p:
            p.despawn(99999)


def test_with_block_sends_nothing_when_the_block_fails(client: Client) -> None:
    with pytest.raises(KeyError):
        with client.pipeline() as p:
            queued = p.spawn({})
            raise KeyError("oops")
    assert not queued.done
    assert client.query("*") == []


def test_pending_before_the_run() -> None:
    from ecsd_client import _requests as rq

    pending = Pending(rq.ping())
    assert not pending.done and pending.error is None
    with pytest.raises(RuntimeError, match="not run yet"):
        pending.result


def test_a_long_pipeline_does_not_deadlock(client: Client, shared_server: EcsdServer) -> None:
    # 20,000 requests (over --max-pipeline) whose answers (20 MB) pass --max-output-bytes: the
    # client reads while it writes, and the server pauses and resumes reading on the way.
    ids = client.spawn_many([{"Appearance": {"name": "x" * 1000}}] * 100)
    # A connection of its own, closed afterwards: see the next test for why.
    with shared_server.client(world=client.world) as long:
        p = long.pipeline()
        for n in range(20_000):
            p.get(ids[n % 100])
        results = p.execute()
    assert len(results) == 20_000
    assert all(r == {"Appearance": {"name": "x" * 1000}} for r in results)


def test_a_request_after_a_long_pipeline_is_answered(client: Client, shared_server: EcsdServer) -> None:
    ids = client.spawn_many([{"Appearance": {"name": "x" * 1000}}] * 100)
    for _ in range(3):
        with shared_server.client(world=client.world, timeout=3) as c:
            p = c.pipeline()
            for n in range(20_000):
                p.get(ids[n % 100])
            assert len(p.execute()) == 20_000
            assert c.ping() == "pong"


def test_every_helper_can_be_queued(shared_server: EcsdServer) -> None:
    # The pipeline offers the client's helpers with the same results (all but query and watch).
    with shared_server.client(world="piped") as c, c.pipeline() as p:
        created = p.create_world("piped", paused=True, gravity=0)
        worlds = p.list_worlds()
        e = p.spawn({"Position": {}, "Health": {"hp": 5}, "Name": {"name": "ann"}})
        many = p.spawn_many([{"Position": {}}, {"Position": {}}])
        p.insert("ann", {"Velocity": {"x": 60}})
        mutated = p.mutate("ann", "Health", "hp", 6)
        p.remove("ann", ["Health"])
        step = p.step(1)
        got = p.get("ann", ["Position"])
        cast = p.cast("ann", "freeze")
        systems = p.systems()
        digest = p.hash()
        paused = p.pause()
        resumed = p.resume()
        p.pause()
        info = p.world_info()
        gone = p.despawn_many(["ann"])
        p.destroy_world("piped")
    assert created.result["world"] == "piped" and "piped" in worlds.result
    assert isinstance(e.result, int) and len(many.result) == 2
    assert mutated.result == {"hp": 6.0, "max": 100.0}
    assert step.result == 1 and got.result == {"Position": {"x": 1.0, "y": 0.0}}
    assert cast.result["takes_effect_at_tick"] == 2
    assert systems.result[0]["name"] == "spells" and len(digest.result) == 16
    assert paused.result["paused"] is True and resumed.result["paused"] is False
    assert info.result["entities"] == 3 and gone.result == 1
