# test_arena.py: an integration test against a running ecsd (scripts/run.sh: 127.0.0.1:7777).
# Run it with `pytest test_arena.py`; ECSD_HOST, ECSD_PORT and ECSD_TOKEN point it elsewhere.
import os
import uuid

import pytest

from ecsd_client import Client, RpcError


@pytest.fixture
def client():
    # A world of its own, so the test leaves everything else on the server alone.
    world = f"arena-{uuid.uuid4().hex[:8]}"
    with Client(
        host=os.environ.get("ECSD_HOST", "127.0.0.1"),
        port=int(os.environ.get("ECSD_PORT", "7777")),
        token=os.environ.get("ECSD_TOKEN"),
        world=world,  # every world.* call goes to it
    ) as client:
        client.create_world(world, paused=True, gravity=0)  # it ticks only when we step it
        yield client
        client.destroy_world(world)


def test_kill_all_monsters_kills_every_monster_and_nothing_else(client):
    hero = client.spawn({"Position": {"x": 0, "y": 0}, "Health": {}, "Player": {}})
    # A monster is an entity with Health and AI.
    monsters = client.spawn_many(
        [{"Position": {"x": x, "y": 0}, "Health": {"hp": 30}, "AI": {"kind": "orc"}} for x in range(1, 6)]
    )
    with client.watch("Health, AI") as watch:  # follows the monsters live
        assert sorted(watch.state) == sorted(monsters)

        cast = client.cast(hero, "kill_all_monsters")  # queued on the hero
        assert cast["takes_effect_at_tick"] == 1  # the start of the next tick
        assert client.step(1) == 1

        assert watch.state == {}  # the world is paused: the step's news came before its answer
    assert client.query("Health, AI") == []
    with pytest.raises(RpcError) as error:
        client.get(monsters[0])
    assert error.value.reason == "no_such_entity"
    assert sorted(client.get(hero)) == ["Health", "Player", "Position"]
