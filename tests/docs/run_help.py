#!/usr/bin/env python3
"""Runs every example of every ``ecsctl --help`` page against a real ecsd, as run_docs.py runs the docs'.

Each page (``ecsctl --help``, then ``ecsctl VERB --help`` for every verb, groups such as ``world`` walked
down) lists its examples under ``Examples:``. They run as one bash block per page, with ``set -e`` and
``pipefail``, through run_docs.py's runner: a fresh ecsd per page, ``ecsctl`` on PATH pointing at it,
7777 and 7778 replaced by its ports. Before a page's examples, hidden setup lines prepare what a reader's
server would hold (SETUP below: an ``arena`` world, entities 4294967296, 4294967297 and ``hero``, a
``tree`` prefab), minus what the page's own examples create, plus what a page needs alone (a second
ecsd on 7790 for ``world move``, ``--data-dir`` for ``save``/``load``). Lines that stream until Ctrl-C
(``watch``/``monitor`` without ``--count``) run 2 s and get SIGINT. An example fails the run when any
command in it fails. Python 3.11 standard library only.

    run_help.py --ecsd PATH --ecsctl PATH [-v]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_docs  # noqa: E402  (the runner of the docs' examples, reused as is)

SECOND_PORT = "7790"  # the examples' second ecsd (world move), as in docs/ecsctl.md

# What a reader's server holds before a page's examples: (key, shell line). Entity ids are those of a
# fresh world: 4294967296 is the first entity.
SETUP = [
    ("arena", "ecsctl world create arena --paused"),
    ("arena", "ecsctl --world arena spawn Position Health AI"),
    ("entities", """ecsctl spawn Position='{"x":0,"y":10}' Velocity='{"x":1,"y":0}' Health Player"""),
    ("entities", """ecsctl spawn Position='{"x":3,"y":0}' Health AI"""),
    ("hero", """ecsctl spawn --name hero Position='{"x":1,"y":0}' Health Player"""),
    ("tree", """ecsctl prefab define tree Position Collider='{"radius":1}'"""),
]

# Per page (its verb, "" for the top level): setup keys it does without (its examples make them), extra
# setup lines, and extra ecsd flags.
WITHOUT = {"world create": {"arena"}, "spawn": {"hero"}}
EXTRA = {
    "": ["printf 'ping\\nworlds\\n' > setup.ecs"],
    "remove": ["ecsctl insert 4294967296 Frozen Ghost"],
    "world move": ["ecsctl world create zone-3 --paused"],
    "load": ["ecsctl save", "ecsctl --world arena save"],  # a snapshot to load
    # Lua systems and spells (docs/scripting.md has them whole): the files the examples name.
    "system define": [
        "printf 'return function(w)\\n  for e in w:each() do\\n    e.Health.hp = e.Health.hp + 1\\n  end\\nend\\n'"
        " > regen.lua",
        "printf 'return function(w)\\n  for e in w:each() do\\n    e.Velocity = {x = 1, y = 0}\\n  end\\nend\\n'"
        " > chase.lua",
    ],
    "system rm": [
        "printf 'return function(w) end\\n' > regen.lua",
        "ecsctl system define regen --query Health --file regen.lua",
    ],
    "spell define": ["printf 'return function(w, caster, target, amount) end\\n' > fireball.lua"],
    "spell rm": [
        "printf 'return function(w, caster, target, amount) end\\n' > fireball.lua",
        "ecsctl spell define fireball --file fireball.lua",
    ],
    "action define": ["printf 'return function(w, caller, args) return caller end\\n' > move.lua"],
    "action call": [
        "ecsctl spawn Position",
        "printf 'return function(w, caller, args)\\n  local e = w:get(args.entity)\\n"
        "  e.Position.x = e.Position.x + args.dx\\n  return {x = e.Position.x}\\nend\\n' > move.lua",
        "ecsctl action define move --file move.lua",
        "printf 'return function(w, caller) return caller end\\n' > whoami.lua",
        "ecsctl action define whoami --file whoami.lua",
    ],
    "action rm": [
        "printf 'return function(w, caller, args) end\\n' > move.lua",
        "ecsctl action define move --file move.lua",
    ],
    "import": ["ecsctl export arena arena.json", "ecsctl export > default.json"],
    # monitor shows the requests of other connections: a client keeps sending some.
    "monitor": ["(for n in $(seq 100); do sleep 0.1; ecsctl ping; done) >/dev/null 2>&1 &"],
}
FLAGS = {"save": "--data-dir @tmp", "load": "--data-dir @tmp"}


def help_text(ecsctl: str, words: list[str]) -> str:
    p = subprocess.run([ecsctl, *words, "--help"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"ecsctl {' '.join(words)} --help exited {p.returncode}: {p.stderr}")
    return p.stdout


def section(text: str, title: str) -> list[str]:
    """The lines of a help section (``Subcommands:``, ``Examples:``) up to the next blank line."""
    out, inside = [], False
    for line in text.splitlines():
        if line.strip() == title:
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            out.append(line)
    return out


def pages(ecsctl: str) -> list[tuple[str, list[str]]]:
    """(verb, examples) of every help page: the top level, then every verb, groups walked down."""
    found: list[tuple[str, list[str]]] = []

    def visit(words: list[str]):
        text = help_text(ecsctl, words)
        examples = [l.strip() for l in section(text, "Examples:") if l.strip().startswith("ecsctl")]
        # A verb's line starts with two blanks; a wrapped description with more.
        subs = [l.split()[0] for l in section(text, "Subcommands:") if l.startswith("  ") and l[2:3] != " "]
        if not subs or not words:
            found.append((" ".join(words), examples))
        for sub in subs:
            visit([*words, sub])

    visit([])
    return found


def block_for(verb: str, examples: list[str], index: int) -> run_docs.Block:
    directives = [("setup", "set -o pipefail")]
    for key, line in SETUP:
        if key not in WITHOUT.get(verb, set()):
            directives.append(("setup", line + " > /dev/null"))
    for line in EXTRA.get(verb, []):
        quiet = line.endswith("&") or ">" in line  # it says where its output goes
        directives.append(("setup", line if quiet else line + " > /dev/null"))
    if verb in FLAGS:
        directives.append(("server", FLAGS[verb]))
    lines = []
    for e in examples:
        if re.search(r"\b(watch|monitor)\b", e) and "--count" not in e:
            directives.append(("ctrl-c", e))
        lines.append(e)
        lines.append("sleep 0.05")  # a reader types one line at a time: a tick or more passes between
    page = f"ecsctl {verb + ' ' if verb else ''}--help"
    return run_docs.Block(path="help", line=0, index=index, info="sh", text="\n".join(lines),
                          directives=directives, marker_line=0) if lines else None, page


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ecsd", required=True)
    ap.add_argument("--ecsctl", required=True)
    ap.add_argument("-v", "--verbose", action="count", default=0)
    args = ap.parse_args()
    found = pages(args.ecsctl)
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="ecsd-help-") as tmp:
        runner = run_docs.Runner(args, Path(tmp), Path(tmp))
        stats = run_docs.Stats()
        for i, (verb, examples) in enumerate(found, 1):
            block, page = block_for(verb, examples, i)
            if block is None:
                failures.append(f"FAIL {page}: no examples")
                continue
            second = None
            try:
                if SECOND_PORT in block.text:
                    second = run_docs.Server(runner.ecsd, [], Path(tmp))
                    block.text = re.sub(rf"\b{SECOND_PORT}\b", str(second.port), block.text)
                    block.directives = [(k, re.sub(rf"\b{SECOND_PORT}\b", str(second.port), a))
                                        for k, a in block.directives]
                runner.run_shell(block, stats, None)
                ran += len(examples)
                if args.verbose:
                    print(f"ok   {page}: {len(examples)} example(s)", flush=True)
            except run_docs.Failure as e:
                failures.append(str(e).replace("FAIL help#", f"FAIL {page} (page ", 1))
                print(failures[-1], flush=True)
            except (OSError, RuntimeError, ValueError) as e:
                failures.append(f"FAIL {page}\n  {type(e).__name__}: {e}")
                print(failures[-1], flush=True)
            finally:
                if second is not None:
                    second.stop()
    print(f"\n{len(found)} help pages, {ran} examples run, {len(failures)} page(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
