"""world.watch: the live state, routing notifications against answers, and ends."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ecsd_client import Client, EcsdError, EcsdTimeoutError, RpcError, Watch
from ecsd_client.testing import EcsdServer


def as_state(rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {row["entity"]: row["components"] for row in rows}


def test_state_follows_spawn_mutate_despawn(client: Client) -> None:
    a = client.spawn({"Position": {"x": 0}, "Velocity": {"x": 6}})
    with client.watch("Position, Velocity", fields=["Position"]) as watch:
        assert watch.state == {a: {"Position": {"x": 0.0, "y": 0.0}}}
        b = client.spawn({"Position": {"x": 5}, "Velocity": {}})  # entered
        assert watch.state[b] == {"Position": {"x": 5.0, "y": 0.0}}
        client.mutate(a, "Position", "y", 3)  # changed
        assert watch.state[a] == {"Position": {"x": 0.0, "y": 3.0}}
        client.step(10)  # a moves at 6 m/s: one notification per tick
        assert watch.state[a]["Position"]["x"] == pytest.approx(1.0)
        assert watch.tick == 10
        client.remove(b, ["Velocity"])  # left: unmatched
        assert b not in watch.state
        client.despawn(a)  # left: died
        assert watch.state == {}

        notifications = list(drain(watch))
        assert [n["tick"] for n in notifications][-3:] == [10, 10, 10]
        assert notifications[0]["entered"][0]["entity"] == b
        assert notifications[-2]["left"] == [{"entity": b, "reason": "unmatched"}]
        assert notifications[-1]["left"] == [{"entity": a, "reason": "died"}]
        assert len([n for n in notifications if n["changed"]]) == 11  # the mutate, then 10 ticks


def drain(watch: Watch) -> list[dict[str, Any]]:
    """The notifications already received, without waiting."""
    out = []
    while (n := watch.next(wait=False)) is not None:
        out.append(n)
    return out


def test_state_equals_the_query_after_every_step(client: Client) -> None:
    ids = client.spawn_many(
        [{"Position": {"x": i}, "Velocity": {"x": i % 3 - 1}, "Health": {"hp": 10 * i}} for i in range(30)]
    )
    query = "Position, Health.hp >= 100, near(15, 0, 12)"
    with client.watch(query, fields=["Position", "Health"]) as watch:
        for round_ in range(8):
            client.mutate(ids[round_], "Health", "hp", 500)
            client.insert(ids[29 - round_], {"Health": {"hp": 1}})
            client.step(round_ + 1)
            assert watch.state == as_state(client.query(query, fields=["Position", "Health"]))
        assert watch.state  # it did follow something


def test_changed_components_merge_and_removed_ones_go(client: Client) -> None:
    e = client.spawn({"Position": {}, "Health": {"hp": 40}, "Frozen": {}})
    with client.watch("Position, ?Health, ?Frozen") as watch:  # optional terms are carried
        assert watch.state[e] == {"Position": {"x": 0.0, "y": 0.0}, "Health": {"hp": 40.0, "max": 100.0}, "Frozen": {}}
        client.mutate(e, "Health", "hp", 41)
        client.remove(e, ["Frozen"])
        assert watch.state[e] == {"Position": {"x": 0.0, "y": 0.0}, "Health": {"hp": 41.0, "max": 100.0}}
        changed = [c for n in drain(watch) for c in n["changed"]]
        assert changed == [
            {"entity": e, "components": {"Health": {"hp": 41.0, "max": 100.0}}},
            {"entity": e, "components": {}, "removed": ["Frozen"]},
        ]


def test_answers_are_not_lost_among_notifications(client: Client) -> None:
    movers = client.spawn_many([{"Position": {"x": i}, "Velocity": {"x": 1}} for i in range(50)])
    with client.watch("Position, Velocity") as watch:
        # Each step's answer arrives after its notifications; every call still gets its own answer.
        for tick in range(1, 21):
            assert client.step() == tick
            assert client.get(movers[0], ["Position"])["Position"]["x"] == pytest.approx(tick / 60)
        with client.pipeline() as p:
            steps = [p.step() for _ in range(5)]
            count = p.world_info()
        assert [s.result for s in steps] == [21, 22, 23, 24, 25]
        assert count.result["entities"] == 50
        # Notifications that came while calls waited were queued, in order, none lost.
        ticks = [n["tick"] for n in drain(watch)]
        assert ticks == list(range(1, 26))
        assert watch.state[movers[0]]["Position"]["x"] == pytest.approx(25 / 60)


def test_iterating_in_a_running_world(client: Client) -> None:
    client.spawn({"Position": {}, "Velocity": {"x": 1}})
    with client.watch("Position, Velocity", every=2) as watch:
        client.resume()
        seen = []
        for notification in watch:
            seen.append(notification["tick"])
            if len(seen) == 3:
                break
        client.pause()
    assert seen == sorted(seen) and all(b - a >= 2 for a, b in zip(seen, seen[1:]))


def test_until_waits_for_a_condition(client: Client) -> None:
    e = client.spawn({"Position": {}, "Velocity": {"x": 30}})
    with client.watch("Position, Velocity") as watch:
        client.resume()
        state = watch.until(lambda s: s[e]["Position"]["x"] > 1.0, timeout=5)
        assert state[e]["Position"]["x"] > 1.0
        client.pause()
        with pytest.raises(EcsdTimeoutError, match="watch"):
            watch.until(lambda s: not s, timeout=0.2)


def test_next_times_out_when_nothing_changes(client: Client) -> None:
    client.spawn({"Position": {}})
    with client.watch("Position") as watch:
        with pytest.raises(EcsdTimeoutError, match=f"notification for watch {watch.subscription}"):
            watch.next(timeout=0.2)
        assert client.ping() == "pong"  # the connection is fine after a watch timed out


def test_unwatch_stops_notifications(client: Client) -> None:
    e = client.spawn({"Position": {}, "Velocity": {"x": 1}})
    watch = client.watch("Position")
    other = client.watch("Position, Velocity")
    client.step()
    watch.close()
    assert watch.ended and watch.end_reason == "unwatched"
    watch.close()  # idempotent
    client.step()
    assert watch.tick == 1  # nothing more was applied to it
    assert other.tick == 2  # the other goes on
    assert [n["tick"] for n in watch] == [1]  # what came before the unwatch, then the loop ends
    with pytest.raises(RpcError) as caught:
        client.call("world.unwatch", {"subscription": watch.subscription})
    assert caught.value.reason == "no_such_subscription"
    other.unwatch()
    assert e in other.state


def test_leaving_the_loop_early_keeps_the_watch(client: Client) -> None:
    client.spawn({"Position": {}, "Velocity": {"x": 1}})
    watch = client.watch("Position")
    client.step(3)
    for _ in watch:
        break
    assert not watch.ended
    assert len(drain(watch)) == 2
    watch.close()


def test_ended_when_the_world_is_destroyed(shared_server: EcsdServer) -> None:
    with shared_server.client(world="doomed") as c:
        c.create_world("doomed", paused=True)
        c.spawn({"Position": {}})
        watch = c.watch("Position")
        other = c.watch("Position", world="default")  # another world's watch is not touched
        c.destroy_world("doomed")
        assert watch.ended and watch.end_reason == "world_destroyed"
        assert list(watch) == []  # the loop ends
        with pytest.raises(EcsdError, match="ended"):
            watch.until(lambda s: False)
        watch.close()  # nothing to unwatch
        assert not other.ended
        other.close()


def test_ended_when_the_world_is_reloaded(ecsd_server: EcsdServer) -> None:
    with ecsd_server.client() as c:
        c.pause()  # so changes arrive at once, not with the next tick
        e = c.spawn({"Position": {}})
        c.save()
        watch = c.watch("Position")
        c.despawn(e)
        assert watch.state == {}
        f = c.spawn({"Position": {"x": 1}})
        loaded = c.load()  # the snapshot plus the journal: the same world, rebuilt
        assert loaded["replayed"] >= 2
        assert watch.ended and watch.end_reason == "world_reloaded"
        again = c.watch("Position")
        assert again.state == {f: {"Position": {"x": 1.0, "y": 0.0}}}
        again.close()


def test_ended_when_the_server_shuts_down(ecsd_server: EcsdServer) -> None:
    c = Client(port=ecsd_server.port)
    watch = c.watch("Position")
    ecsd_server.stop()
    assert list(watch) == []  # the loop ends with the subscription
    assert watch.ended and watch.end_reason == "server_shutdown"
    with pytest.raises(ConnectionError, match="closed the connection"):
        c.ping()
    c.close()


def test_resync_and_coalesced_replace_or_merge(client: Client) -> None:
    # Unit level: these come only when a client falls far behind, which a test cannot force cheaply.
    watch = client.watch("Position")
    watch._apply({"subscription": watch.subscription, "tick": 5, "entered": [{"entity": 1, "components": {"P": 1}}],
                  "changed": [], "left": []})
    watch._apply({"subscription": watch.subscription, "tick": 9, "coalesced": 4, "entered": [],
                  "changed": [{"entity": 1, "components": {"Q": 2}}], "left": []})
    assert watch.state == {1: {"P": 1, "Q": 2}}
    watch._apply({"subscription": watch.subscription, "tick": 12, "resync": True,
                  "entities": [{"entity": 2, "components": {"P": 3}}]})
    assert watch.state == {2: {"P": 3}} and watch.tick == 12
    assert [n["tick"] for n in drain(watch)] == [5, 9, 12]
    watch.close()


def test_poll_applies_what_has_arrived(client: Client) -> None:
    e = client.spawn({"Position": {}, "Velocity": {"x": 1}})
    with client.watch("Position") as watch:
        client.resume()
        deadline = time.monotonic() + 5
        while watch.tick == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
            client.poll()  # never waits
        client.pause()
        assert watch.tick > 0 and watch.state[e]["Position"]["x"] > 0
