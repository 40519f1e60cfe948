"""Error answers map to RpcError with the protocol's reason; other failures have their own types."""

from __future__ import annotations

import pytest

from ecsd_client import Client, EcsdError, RpcError


def test_no_such_entity(client: Client) -> None:
    with pytest.raises(RpcError) as caught:
        client.get(4294967296 * 7 + 3)
    e = caught.value
    assert (e.code, e.reason, e.method) == (-32003, "no_such_entity", "world.get_components")
    assert "does not exist" in e.message
    assert isinstance(e, EcsdError)


def test_method_not_found_carries_data(client: Client) -> None:
    with pytest.raises(RpcError) as caught:
        client.call("world.teleport")
    assert caught.value.reason == "method_not_found"
    assert caught.value.code == -32601
    assert caught.value.data == {"reason": "method_not_found", "method": "world.teleport"}


def test_invalid_params_names_the_member(client: Client) -> None:
    with pytest.raises(RpcError) as caught:
        client.step(0)
    assert caught.value.reason == "invalid_params"
    assert "params.ticks" in caught.value.message
    assert "invalid_params" in str(caught.value) and "world.step" in str(caught.value)


def test_no_such_world_names_it(client: Client) -> None:
    with pytest.raises(RpcError) as caught:
        client.world_info(world="nowhere")
    assert caught.value.reason == "no_such_world"
    assert caught.value.data["world"] == "nowhere"


def test_component_errors(client: Client) -> None:
    e = client.spawn({"Position": {}})
    with pytest.raises(RpcError, match="Position.x") as caught:
        client.insert(e, {"Position": {"x": "far"}})
    assert caught.value.reason == "invalid_value"
    with pytest.raises(RpcError) as caught:
        client.spawn({"Teleporter": {}})
    assert caught.value.reason == "no_such_component"
    with pytest.raises(RpcError) as caught:
        client.remove(e, ["Velocity"])
    assert caught.value.reason == "no_such_component"
    with pytest.raises(RpcError) as caught:
        client.cast(e, "fireball")
    assert caught.value.reason == "no_such_spell"


def test_the_connection_survives_errors(client: Client) -> None:
    for _ in range(3):
        with pytest.raises(RpcError):
            client.get(1)
    assert client.ping() == "pong"
