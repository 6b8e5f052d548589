"""`pinguard verify`: is every locked digest still served, and does its tag still point there?

Online, and never from the cache (see `pinguard.lock.verify`); entries are reported
in lockfile order, as text or JSON, then the GitHub Actions refs (`pinguard.lock.verify_actions`).
"""
from __future__ import annotations

import argparse
import json

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.copy.verify import CopyCheck, verify_copies
from pinguard.errors import DeadlinePassed, PinguardError
from pinguard.lock.verify import Status, Verdict, deadline_lines, read_lock, verify_with_progress
from pinguard.lock.verify_actions import ActionVerdict, verify_actions
from pinguard.resolve.online import open_client
from pinguard.resolve.settings import OnlineSettings


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--fail-on-moved", action="store_true", help="exit 1 when a tag points to another digest")
    parser.add_argument("--copies", action="store_true",
                        help="also check that every copy the lock records (`pinguard copy`) serves every digest; "
                             "exit 1 if one does not")
    parser.add_argument("--deep", action="store_true",
                        help="with --copies, also download every copied blob and hash it (a byte range at a time)")
    flags.policy(parser, _POLICY)
    flags.lockfile(parser)
    flags.quiet(parser)
    flags.registry(parser)


def _run(context: Context) -> int:
    args = context.args
    return verify(context.options, context.online(context.policy_at_hand()), fmt=args.format,
                  fail_on_moved=args.fail_on_moved, copies=args.copies, deep=args.deep)


_POLICY = PolicyDefault(None)
COMMAND = Command("verify", "check that every locked digest is still served and where tags point", _options, _run,
                  _POLICY)


def verify(options: Options, online: OnlineSettings, *, fmt: str = "text", fail_on_moved: bool = False,
           copies: bool = False, deep: bool = False) -> int:
    if deep and not copies:
        raise PinguardError("--deep hashes the blobs of the copies the lock records: give it with --copies")
    lock = read_lock(options.lockfile)
    actions = verify_actions(list(lock.actions.entries.values()), online.git, online.tag_rules)
    with open_client(online) as client:
        verdicts = verify_with_progress(list(lock), client, online)
        copied = verify_copies(client, lock, online.registry.workers, deep=deep,
                               progress=lambda registries: online.progress_line(registries, client.held_to,
                                                                                "blobs hashed")) if copies else None
    statuses = [*(v.status for v in verdicts), *(v.status for v in actions)]
    counts = {status.value: statuses.count(status) for status in Status}
    if fmt == "json":
        copy_report = {} if copied is None else {"copies": {"checked": copied.checked, "problems": copied.problems}}
        json.dump({"entries": [v.to_json() for v in verdicts], "actions": [v.to_json() for v in actions],
                   "summary": {"total": len(statuses), **counts}, **copy_report}, options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for verdict in verdicts:
            if not isinstance(verdict.error, DeadlinePassed) and (verdict.status is not Status.OK or not options.quiet):
                print(_text(verdict), file=options.stdout)
            for problem in verdict.problems:
                print(f"{'':<8} {verdict.entry.name}:{verdict.entry.tag}: {problem}", file=options.stdout)
        _print_actions(actions, options)
        if not options.quiet:
            counted = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
            entries_text = f"{len(statuses)} entr{'y' if len(statuses) == 1 else 'ies'}"
            print(f"{options.lockfile}: {entries_text}" + (f": {counted}" if counted else ""), file=options.stdout)
        if copied is not None:
            _print_copies(copied, options)
    options.report.error(*deadline_lines(verdicts))
    if counts[Status.ERROR]:
        return 2
    problems = any(verdict.problems for verdict in verdicts) or any(verdict.problems for verdict in actions)
    failed = counts[Status.MISSING] or counts[Status.MISMATCH] or counts[Status.UNSERVED] or (
        fail_on_moved and counts[Status.MOVED]) or problems or (copied is not None and copied.problems)
    return 1 if failed else 0


def _print_actions(verdicts: list[ActionVerdict], options: Options) -> None:
    for verdict in verdicts:
        if verdict.status is Status.OK and not verdict.problems and options.quiet:
            continue
        line = f"{verdict.status.value:<8} {verdict.name} {verdict.entry.commit}"
        if verdict.current is not None:
            frozen = verdict.current.frozen_tag
            line += f" -> {verdict.current.commit}" + (f" ({frozen})" if frozen else "")
        print(f"{line}: {verdict.message}" if verdict.message else line, file=options.stdout)
        for problem in verdict.problems:
            print(f"{'':<8} {verdict.name}: {problem}", file=options.stdout)


def _print_copies(copied: CopyCheck, options: Options) -> None:
    for problem in copied.problems:
        print(f"copy     {problem}", file=options.stdout)
    if not options.quiet:
        failing = f": {len(copied.problems)} problems" if copied.problems else ": each serves every digest"
        print(f"{copied.checked} cop{'y' if copied.checked == 1 else 'ies'} checked" + failing, file=options.stdout)


def _text(verdict: Verdict) -> str:
    entry = verdict.entry
    line = f"{verdict.status.value:<8} {entry.name}:{entry.tag} {entry.digest}"
    if verdict.status in (Status.MOVED, Status.UNSERVED) and verdict.current is not None:
        frozen = verdict.current.frozen_tag
        moved = f"{line} -> {verdict.current.digest}" + (f" ({frozen})" if frozen else "")
        never = ": the tag did not point to the locked digest when it was locked either"
        return moved + (never if verdict.status is Status.UNSERVED else "")
    return f"{line}: {verdict.message}" if verdict.message else line
