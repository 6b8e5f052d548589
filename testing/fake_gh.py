"""A FAKE GitHub CLI (`gh`), for tests: no GitHub can be reached where the tests run.

It answers the few calls scripts/update-pull-request.sh makes, and records every call:

    gh pr list --head BRANCH --state open --json number --jq '.[0].number // empty'
    gh pr create --head BRANCH --base BASE --title TITLE --body-file FILE
    gh pr edit NUMBER --title TITLE --body-file FILE

Each call is appended to the JSON-lines file FAKE_GH_LOG as {"argv": [...], "body": the body file's text or
null, "token": whether GH_TOKEN was set}. `pr list` answers from the JSON file FAKE_GH_STATE, which the test
writes: {"open": [{"number": 7, "head": "pinguard/update"}, ...]} (no file: none open). `create` and `edit`
print a pull request's address, as gh does. Anything else, a jq expression other than the one above included,
exits 1 saying so, so a script that calls gh some other way fails its test.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

_JQ_FIRST_NUMBER = ".[0].number // empty"
_REPOSITORY = "https://github.com/example/repository"


def _flags(args: Sequence[str]) -> dict[str, str]:
    """`--name value` pairs; a flag without a value, or a stray word, is refused."""
    if len(args) % 2 or not all(name.startswith("--") for name in args[::2]):
        raise ValueError(f"unexpected arguments {list(args)}")
    return dict(zip(args[::2], args[1::2], strict=True))


def _open_heads(state: Path | None) -> list[dict[str, object]]:
    if state is None or not state.exists():
        return []
    opened = json.loads(state.read_text(encoding="utf-8")).get("open", [])
    return [pull for pull in opened if isinstance(pull, dict)]


def _list(flags: dict[str, str], state: Path | None) -> str:
    if flags.get("--state") != "open" or flags.get("--json") != "number" or flags.get("--jq") != _JQ_FIRST_NUMBER:
        raise ValueError(f"pr list is asked something this fake does not answer: {flags}")
    numbers = [pull["number"] for pull in _open_heads(state) if pull.get("head") == flags.get("--head")]
    return f"{numbers[0]}\n" if numbers else ""


def _answer(argv: Sequence[str], state: Path | None) -> str:
    if argv[:2] == ["pr", "list"]:
        return _list(_flags(argv[2:]), state)
    if argv[:2] == ["pr", "create"]:
        flags = _flags(argv[2:])
        if set(flags) != {"--head", "--base", "--title", "--body-file"}:
            raise ValueError(f"pr create needs --head, --base, --title and --body-file: {flags}")
        return f"{_REPOSITORY}/pull/{len(_open_heads(state)) + 1}\n"
    if argv[:2] == ["pr", "edit"] and len(argv) > 2 and argv[2].isdigit():
        flags = _flags(argv[3:])
        if not {"--body-file"} <= set(flags) <= {"--title", "--body-file"}:
            raise ValueError(f"pr edit takes --title and --body-file: {flags}")
        return f"{_REPOSITORY}/pull/{argv[2]}\n"
    raise ValueError(f"this fake does not answer `gh {' '.join(argv)}`")


def _body(argv: Sequence[str]) -> str | None:
    if "--body-file" not in argv or argv.index("--body-file") + 1 >= len(argv):
        return None
    return Path(argv[argv.index("--body-file") + 1]).read_text(encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    log = os.environ.get("FAKE_GH_LOG")
    if not log:
        print("fake gh: FAKE_GH_LOG is not set", file=sys.stderr)
        return 1
    state = os.environ.get("FAKE_GH_STATE")
    call = {"argv": list(argv), "body": _body(argv), "token": bool(os.environ.get("GH_TOKEN"))}
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(call) + "\n")
    try:
        sys.stdout.write(_answer(list(argv), Path(state) if state else None))
    except (ValueError, KeyError) as err:
        print(f"fake gh: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
