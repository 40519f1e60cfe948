"""The client against a real ecsd: helpers, paging, worlds, and against a fake one: framing,
timeouts and closed connections."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ecsd_client import Client, EcsdConnectionError, EcsdTimeoutError, RpcError
from ecsd_client.testing import EcsdServer
from fakes import FakeServer, answer, read_requests

StartFake = Callable[[Callable[[socket.socket], None]], FakeServer]


# -- helpers against a real ecsd --------------------------------------------------------------


def test_entity_helpers_round_trip(client: Client) -> None:
    e = client.spawn({"Position": {"x": 1, "y": 2}, "Velocity": {}})
    assert client.get(e) == {"Position": {"x": 1.0, "y": 2.0}, "Velocity": {"x": 0.0, "y": 0.0}}
    assert client.get(e, ["Velocity"]) == {"Velocity": {"x": 0.0, "y": 0.0}}
    client.insert(e, {"Health": {"hp": 50}})
    assert client.get(e, ["Health"]) == {"Health": {"hp": 50.0, "max": 100.0}}
    assert client.mutate(e, "Position", "x", 9) == {"x": 9.0, "y": 2.0}
    client.remove(e, ["Velocity"])
    assert sorted(client.get(e)) == ["Health", "Position"]
    client.despawn(e)
    with pytest.raises(RpcError, match="no_such_entity"):
        client.get(e)


def test_acknowledgements_return_the_servers_result_as_in_the_node_client(client: Client) -> None:
    """Each helper returns what node's does: the server's result where it only acknowledges."""
    e = client.spawn({"Position": {}, "Velocity": {}})
    assert client.insert(e, {"Health": {}}) == {"entity": e}
    assert client.remove(e, ["Velocity"]) == {"entity": e}
    assert client.despawn(e) is True
    other = f"{client.world}-gone"
    client.create_world(other, paused=True)
    assert client.destroy_world(other) == {"destroyed": other}


def test_prefab_component_describe_and_spell_helpers(client: Client) -> None:
    mana = client.register_component("Mana", {"points": 0, "regen": 0.5})
    assert mana["name"] == "Mana" and [f["name"] for f in mana["fields"]] == ["points", "regen"]
    assert client.register_component("Marker")["kind"] == "runtime_tag"
    assert {"Mana", "Marker", "Position"} <= {c["name"] for c in client.components()}
    assert client.define_prefab("slime", {"Position": {"y": 5}, "Health": {"hp": 10}, "AI": {}}) == {"name": "slime"}
    assert [p["name"] for p in client.prefabs()] == ["slime"]
    ids = client.spawn_prefab("slime", 3, {"Position": {"x": 2}})
    assert len(ids) == 3
    assert client.get(ids[0], ["Position"]) == {"Position": {"x": 2.0, "y": 5.0}}
    assert len(client.spawn_prefab("slime")) == 1
    d = client.describe(ids[0])
    assert d["entity"] == ids[0] and sorted(d["components"]) == ["AI", "Health", "Position"]
    assert "systems" in d and "changes" in d
    names = [s["name"] for s in client.spells()]
    assert "kill_all_monsters" in names and "freeze" in names
    with client.pipeline() as p:  # the same helpers queue in a pipeline
        listed = p.prefabs()
        described = p.describe(ids[1])
    assert listed.result[0]["name"] == "slime" and described.result["entity"] == ids[1]


REGEN = """
return function(w)
  for e in w:each() do
    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)
  end
end
"""


def test_lua_system_and_spell_helpers(client: Client) -> None:
    e = client.spawn({"Health": {"hp": 50}})
    assert client.define_system("regen", "Health", REGEN) == {"name": "regen", "replaced": False, "from_tick": 1}
    client.step(3)
    assert client.get(e, ["Health"])["Health"]["hp"] == 53.0
    again = client.define_system("regen", "Health", REGEN.replace("+ 1", "+ 10"), "post", order=5, every=2)
    assert again["replaced"] is True
    listed = next(s for s in client.systems() if s["name"] == "regen")
    assert listed["phase"] == "post" and listed["every"] == 2 and listed["lua"] is True
    client.step(2)  # ticks 4 and 5: it runs on the even one
    assert client.get(e, ["Health"])["Health"]["hp"] == 63.0
    with pytest.raises(RpcError, match="line 2") as bad:
        client.define_system("broken", "Health", "return function(w)\n  x = = 1\nend")
    assert bad.value.reason == "invalid_params"
    assert client.remove_system("regen") == {"name": "regen", "removed": True}
    smite = "return function(w, caster, target, amount) target.Health.hp = target.Health.hp - amount end"
    assert client.define_spell("smite", smite) == {"name": "smite", "replaced": False}
    assert "smite" in [s["name"] for s in client.spells()]
    client.cast(e, "smite", amount=13)
    client.step()
    assert client.get(e, ["Health"])["Health"]["hp"] == 50.0
    with client.pipeline() as p:  # the same helpers queue in a pipeline
        defined = p.define_spell("smite", smite)
        p.define_system("regen", "Health", REGEN)
    assert defined.result["replaced"] is True
    assert client.remove_spell("smite") == {"name": "smite", "removed": True}
    assert "smite" not in [s["name"] for s in client.spells()]


HEAL = """
return function(w, caller, args)
  local e = w:get(args.entity)
  if not e then error('no such entity') end
  e.Health.hp = math.min(e.Health.hp + args.amount, e.Health.max)
  return {hp = e.Health.hp, by = caller}
end
"""

SPAWN_THEN_FAIL = """
return function(w, caller, args)
  w:get(args.entity).Health.hp = 1
  w:spawn({Position = {x = 1}})
  error('not your avatar')
end
"""


def test_action_helpers(client: Client) -> None:
    e = client.spawn({"Health": {"hp": 50}})
    assert client.define_action("heal", HEAL) == {"name": "heal", "replaced": False}
    assert client.call_action("heal", {"entity": e, "amount": 20}) == {"hp": 70.0, "by": "anonymous"}
    assert client.get(e, ["Health"])["Health"]["hp"] == 70.0  # at once: no tick needed
    assert client.define_action("nothing", "return function(w, caller, args) end")["replaced"] is False
    assert client.call_action("nothing") is None  # nil is null, not a missing result
    assert client.define_action("echo", "return function(w, caller, args) return args end") == {
        "name": "echo",
        "replaced": False,
    }
    assert client.call_action("echo", [1, "two", {"x": 3}]) == [1, "two", {"x": 3}]
    assert client.call_action("echo", 7) == 7

    before = client.hash()
    with pytest.raises(RpcError) as failed:
        client.call_action("heal", {"entity": 99, "amount": 1})
    assert (failed.value.code, failed.value.reason) == (-32019, "action_failed")
    assert failed.value.message == "heal:4: no such entity"
    client.define_action("fail", SPAWN_THEN_FAIL)
    with pytest.raises(RpcError, match="not your avatar") as failed:
        client.call_action("fail", {"entity": e})
    assert failed.value.reason == "action_failed"
    assert client.hash() == before  # its write and its spawn were both undone
    assert client.get(e, ["Health"])["Health"]["hp"] == 70.0
    assert len(client.query("Position")) == 0

    with pytest.raises(RpcError) as missing:
        client.call_action("teleport")
    assert (missing.value.code, missing.value.reason) == (-32018, "no_such_action")
    with pytest.raises(RpcError) as caller:  # the server says who calls, never the client
        client.call("world.call_action", {"name": "echo", "caller": "admin"})
    assert caller.value.reason == "invalid_params"

    listed = {a["name"]: a for a in client.actions()}
    assert sorted(listed) == ["echo", "fail", "heal", "nothing"]
    assert (listed["heal"]["calls"], listed["heal"]["failures"]) == (1, 1)
    assert listed["heal"]["last_error"] == "heal:4: no such entity"
    assert "last_error" not in listed["echo"]
    assert client.define_action("heal", HEAL.replace("+ args.amount", "+ 2 * args.amount"))["replaced"] is True
    with client.pipeline() as p:  # the same helpers queue in a pipeline
        healed = p.call_action("heal", {"entity": e, "amount": 5})
        removed = p.remove_action("heal")
        left = p.actions()
    assert healed.result == {"hp": 80.0, "by": "anonymous"}
    assert removed.result == {"name": "heal", "removed": True}
    assert "heal" not in [a["name"] for a in left.result]
    with pytest.raises(RpcError) as gone:
        client.remove_action("heal")
    assert gone.value.reason == "no_such_action"


def test_actions_run_as_the_callers_identity(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(
        f"{hashlib.sha256(b'alice-token').hexdigest()} alice player\n"
        f"{hashlib.sha256(b'gm-token').hexdigest()} gm admin\n",
        "utf-8",
    )
    whoami = "return function(w, caller, args) return caller end"
    with EcsdServer(data_dir=False, args=["--tokens", str(tokens), "--action-rate", "1"]) as server:
        with server.client(token="gm-token") as gm:
            assert gm.define_action("whoami", whoami) == {"name": "whoami", "replaced": False}
            assert gm.call_action("whoami") == "gm"  # admins are not held to --action-rate
            assert gm.call_action("whoami") == "gm"
        with server.client(token="alice-token") as alice:
            assert alice.call_action("whoami") == "alice"
            with pytest.raises(RpcError) as limited:  # a second's worth (one call) is spent
                alice.call_action("whoami")
            assert (limited.value.code, limited.value.reason) == (-32014, "rate_limited")
            assert limited.value.data["retry_after"] > 0
            with pytest.raises(RpcError) as refused:  # a player calls actions, never defines them
                alice.define_action("mine", whoami)
            assert refused.value.reason == "unauthorized"
            assert [a["name"] for a in alice.actions()] == ["whoami"]  # reading is allowed


def test_export_and_import_a_world_in_chunks(client: Client) -> None:
    ids = client.spawn_many([{"Position": {"x": i}, "Name": {"name": f"crate-é{i}"}} for i in range(300)])
    client.step(3)
    text = client.export_world(chunk_bytes=4096)  # many chunks, some ending near a 2-byte character
    assert text.startswith("{") and len(text.encode()) > 4 * 4096
    copy = f"{client.world}-copy"
    done = client.import_world(copy, text, paused=True, chunk_bytes=1000)
    assert done["done"] is True and done["world"] == copy and done["entities"] == 300
    try:
        assert client.hash(world=copy) == client.hash()
        assert client.get(ids[7], ["Name"], world=copy) == {"Name": {"name": "crate-é7"}}
        assert client.world_info(world=copy)["paused"] is True
    finally:
        client.destroy_world(copy)


def test_spawn_many_and_despawn_many(client: Client) -> None:
    ids = client.spawn_many([{"Position": {"x": x}} for x in range(5)])
    assert len(set(ids)) == 5
    assert [client.get(i)["Position"]["x"] for i in ids] == [0, 1, 2, 3, 4]
    assert client.despawn_many(ids[:3]) == 3
    assert [r["entity"] for r in client.query("Position")] == ids[3:]
    with pytest.raises(RpcError) as caught:  # all or none
        client.despawn_many([ids[3], ids[0]])
    assert caught.value.reason == "no_such_entity"
    assert len(client.query("Position")) == 2


def test_entities_by_name(client: Client) -> None:
    hero = client.spawn({"Name": {"name": "hero"}, "Position": {}, "Velocity": {"x": 1}})
    assert client.get("hero", ["Name"]) == {"Name": {"name": "hero"}}
    client.cast("hero", "freeze")
    client.step()
    assert "Frozen" in client.get(hero)
    assert "Velocity" not in client.get(hero)


def test_query_pages_beyond_one_page(client: Client) -> None:
    ids = client.spawn_many([{"Position": {"x": i}, "Health": {"hp": i % 100}} for i in range(2500)])
    found = client.query("Position", page_size=1000)
    assert [r["entity"] for r in found] == sorted(ids)  # 3 pages, nothing missed or repeated
    low = client.query("Health.hp < 10", fields=["Health"], page_size=7)  # 250 matches, 36 pages
    assert len(low) == 250
    assert all(set(r["components"]) == {"Health"} and r["components"]["Health"]["hp"] < 10 for r in low)
    assert [r["entity"] for r in client.query("Position", limit=1234, page_size=500)] == sorted(ids)[:1234]
    assert client.query("Position", limit=0) == []
    assert client.query({"all": ["Position"], "none": ["Health"]}) == []


def test_step_pause_resume(client: Client) -> None:
    assert client.world_info()["paused"] is True
    assert client.step(5) == 5
    assert client.step() == 6
    assert client.resume()["paused"] is False
    paused = client.pause()
    assert paused["paused"] is True and paused["tick"] >= 6


def test_kill_all_monsters_via_cast(client: Client) -> None:
    hero = client.spawn({"Health": {}, "Player": {}})
    client.spawn_many([{"Health": {}, "AI": {}}] * 3)
    cast = client.cast(hero, "kill_all_monsters")
    assert cast == {"caster": hero, "spell": "kill_all_monsters", "takes_effect_at_tick": 1}
    assert len(client.query("AI")) == 3  # not before the next tick
    client.step()
    assert client.query("AI") == []
    assert [r["entity"] for r in client.query("Health")] == [hero]


def test_cast_with_target_and_amount(client: Client) -> None:
    healer = client.spawn({"Player": {}})
    hurt = client.spawn({"Health": {"hp": 10, "max": 100}})
    client.cast(healer, "heal", target=hurt, amount=25)
    client.step()
    assert client.get(hurt, ["Health"])["Health"]["hp"] == 35


def test_systems_and_hash(client: Client) -> None:
    names = [s["name"] for s in client.systems()]
    assert names[0] == "spells" and names[-1] == "cleanup" and "movement" in names
    before = client.hash()
    assert len(before) == 16
    client.spawn({"Position": {}})
    assert client.hash() != before


def test_default_world_and_per_call_world(client: Client) -> None:
    assert client.world is not None
    assert client.world_info()["world"] == client.world
    assert client.call("world.info")["world"] == client.world  # raw calls too
    assert client.world_info(world="default")["world"] == "default"
    assert client.call("world.info", {"world": "default"})["world"] == "default"
    assert client.world in client.list_worlds()  # world.list takes no world


def test_token_is_sent_first() -> None:
    with EcsdServer(data_dir=False, args=["--token", "s3cret"]) as server:
        with Client(port=server.port) as anonymous:
            with pytest.raises(RpcError) as caught:
                anonymous.ping()
            assert caught.value.reason == "unauthorized"
        with Client(port=server.port, token="s3cret") as member:
            assert member.ping() == "pong"
            assert member.info()["auth_required"] is True
        with pytest.raises(RpcError) as caught:
            Client(port=server.port, token="wrong")
        assert caught.value.reason == "unauthorized"
        with server.client(token="s3cret") as c:  # EcsdServer.client passes options on
            assert c.ping() == "pong"


def test_notify_runs_without_an_answer(client: Client) -> None:
    client.notify("world.step", {"ticks": 3})
    client.notify("no.such.method")  # not even an error comes back
    assert client.world_info()["tick"] == 3


def test_connect_refused() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(EcsdConnectionError, match=f"127.0.0.1:{port}"):
        Client(port=port, timeout=2)


def test_calls_after_close_fail_clearly(shared_server: EcsdServer) -> None:
    c = shared_server.client()
    c.close()
    c.close()  # idempotent
    assert c.closed
    with pytest.raises(EcsdConnectionError, match="closed"):
        c.ping()


def test_server_closing_the_connection(shared_server: EcsdServer) -> None:
    # A line over --max-line-bytes (1 MiB) is answered too_large, then the server hangs up.
    with shared_server.client() as c:
        with pytest.raises(RpcError) as caught:
            c.call("world.spawn_entity", {"components": {"Appearance": {"name": "x" * (1 << 20)}}})
        assert caught.value.reason == "too_large"
        with pytest.raises(EcsdConnectionError, match="closed the connection"):
            c.ping()


# -- against a fake server: what ecsd never does on demand ------------------------------------


def test_answers_cut_into_pieces_and_glued_together(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        requests = read_requests(sock, 3)
        data = b"".join(answer(r["id"], {"n": r["params"]["n"], "text": "é" * 50}) for r in requests)
        for i in range(0, len(data), 7):  # 7-byte pieces, cutting through lines and characters
            sock.sendall(data[i : i + 7])
            time.sleep(0.001)

    fake = fake_ecsd(handler)
    with Client(port=fake.port) as c:
        with c.pipeline() as p:
            calls = [p.call("test.echo", {"n": n}) for n in range(3)]
        assert [call.result["n"] for call in calls] == [0, 1, 2]
        assert calls[2].result["text"] == "é" * 50


def test_answers_are_matched_by_id_not_order(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        requests = read_requests(sock, 4)
        sock.sendall(b"".join(answer(r["id"], r["params"]["n"]) for r in reversed(requests)))

    fake = fake_ecsd(handler)
    with Client(port=fake.port) as c:
        p = c.pipeline()
        for n in range(4):
            p.call("test.echo", {"n": n})
        assert p.execute() == [0, 1, 2, 3]


def test_timeout_raises_and_a_late_answer_is_dropped(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        slow, fast = read_requests(sock, 1)[0], None
        time.sleep(0.5)
        sock.sendall(answer(slow["id"], "late"))
        fast = read_requests(sock, 1)[0]
        sock.sendall(answer(fast["id"], "on time"))

    fake = fake_ecsd(handler)
    with Client(port=fake.port, timeout=0.2) as c:
        started = time.monotonic()
        with pytest.raises(EcsdTimeoutError, match="no answer to test.slow from ecsd within 0.2 s"):
            c.call("test.slow")
        assert time.monotonic() - started < 0.45
        c.timeout = 5
        assert c.call("test.fast") == "on time"  # "late" was not taken for it


def test_timeout_is_a_builtin_timeout_error(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        read_requests(sock, 1)
        time.sleep(0.3)

    fake = fake_ecsd(handler)
    with Client(port=fake.port, timeout=0.1) as c, pytest.raises(TimeoutError):
        c.ping()


def test_server_closing_mid_answer(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        read_requests(sock, 1)
        sock.sendall(b'{"jsonrpc":"2.0","id":1,"res')  # and hangs up

    fake = fake_ecsd(handler)
    with Client(port=fake.port) as c:
        with pytest.raises(EcsdConnectionError, match="closed the connection"):
            c.ping()
        assert c.closed
        with pytest.raises(ConnectionError):  # also the built-in
            c.ping()


def test_error_without_id_goes_to_the_oldest_call(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:
        read_requests(sock, 1)
        error = {"code": -32015, "message": "request line took too long", "data": {"reason": "timeout"}}
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": None, "error": error}) + "\n").encode())

    fake = fake_ecsd(handler)
    with Client(port=fake.port) as c:
        with pytest.raises(RpcError) as caught:
            c.ping()
        assert caught.value.reason == "timeout"


def test_unexpected_error_line_explains_the_hang_up(fake_ecsd: StartFake) -> None:
    def handler(sock: socket.socket) -> None:  # as ecsd does at --max-connections
        error = {"code": -32012, "message": "too many connections", "data": {"reason": "limit_reached"}}
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": None, "error": error}) + "\n").encode())

    fake = fake_ecsd(handler)
    with Client(port=fake.port) as c:
        time.sleep(0.1)
        # The error line reaches the first call (RpcError) or, read later, explains the hang-up.
        with pytest.raises((RpcError, EcsdConnectionError), match="too many connections"):
            c.ping()
            c.ping()
