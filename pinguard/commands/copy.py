"""`pinguard copy --to REGISTRY[/PREFIX] [--no-keep-registry] [--platform ...|--all-platforms] [--with-referrers]
[--dry-run] [--create-repositories]`: every locked image copied digest for digest, and the lock told where.

Two images that would share a repository there are refused before anything is sent (`copy.retarget`).

A line for each image as its copy ends (what was uploaded, mounted and skipped, and at what
rate), then a summary. The lock is written once, at the end, recording each image copied
whole; any image that failed makes the run fail (exit 2), the others recorded all the same.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.copy.ecr import RepositorySettings, create_repositories
from pinguard.copy.plan import ImagePlan, Selection, plan_lock
from pinguard.copy.record import record_copies
from pinguard.copy.retarget import Destination, parse_destination, refuse_collisions
from pinguard.copy.transfer import Copier, Outcome, Tally
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.reference import parse
from pinguard.registry.manifest import Platform
from pinguard.resolve.online import open_client
from pinguard.resolve.settings import OnlineSettings

_DEADLINE = 24 * 3600.0  # the run's, where --timeout is not given: moving gigabytes takes longer than resolving


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, metavar="REGISTRY[/PREFIX]",
                        help="where: each image keeps its registry and repository path under it "
                             "(REGISTRY/PREFIX/public.ecr.aws/deep-learning-containers/ray), tags as in the lock")
    flags.keep_registry(parser)
    parser.add_argument("--all-platforms", action="store_true",
                        help="copy every platform of an index, not only those the lock records")
    parser.add_argument("--with-referrers", action="store_true",
                        help="copy what refers to each image too: signatures, attestations, SBOMs, SOCI indexes")
    parser.add_argument("--dry-run", action="store_true", help="say what would be copied; write nothing anywhere")
    parser.add_argument("--create-repositories", action="store_true",
                        help="create the repositories a private ECR target lacks, through boto3, as the policy's "
                             "`ecr:` says (tag mutability, scan on push)")
    flags.policy(parser, _POLICY)
    flags.lockfile(parser)
    flags.quiet(parser)
    flags.registry(parser, deadline=_DEADLINE,
                   platforms="to copy (repeatable; default those the lock records; or --all-platforms)")


def _run(context: Context) -> int:
    args, policy = context.args, context.policy_at_hand()
    online = context.online(policy, deadline=_DEADLINE)
    ecr = RepositorySettings() if policy is None else policy.ecr
    return copy(context.options.lockfile, args.to, online, stdout=context.options.stdout,
                keep_registry=args.keep_registry, platforms=online.platforms if args.platform else (),
                all_platforms=args.all_platforms, with_referrers=args.with_referrers, dry_run=args.dry_run,
                create=ecr if args.create_repositories else None)


_POLICY = PolicyDefault(None)
COMMAND = Command("copy", "copy every locked image, digest for digest, where the cluster can pull it; record the "
                          "copies", _options, _run, _POLICY)


def copy(path: Path, to: str, online: OnlineSettings, *, stdout: TextIO, keep_registry: bool = True,
         platforms: Sequence[Platform] = (), all_platforms: bool = False, with_referrers: bool = False,
         dry_run: bool = False, create: RepositorySettings | None = None) -> int:
    """Copy every image of the lock at `path` under `to`; 0 when all were copied (or, dry, would be)."""
    if platforms and all_platforms:
        raise PinguardError("--platform and --all-platforms: give one or the other")
    destination = parse_destination(to, keep_registry=keep_registry)
    lock = lockfile.read(path)
    if not lock:
        raise PinguardError(f"{path}: no image is locked; run `pinguard lock` first")
    refuse_collisions(lock, destination)
    selection = Selection(tuple(platforms), all_platforms, with_referrers)

    def report(outcome: Outcome) -> None:
        print(_line(outcome, dry_run), file=stdout, flush=True)

    with open_client(online) as client:
        client.expect((source.registry, source.repository) for source in map(parse, {e.name for e in lock}))
        plans, failures = plan_lock(client, lock, destination, selection, online.registry.workers)
        if create is not None:
            _create(destination, plans, create, dry_run, stdout)
        outcomes = Copier(client, dry_run=dry_run, done=report).copy(plans)
    failures += [f"{o.plan.entry.name}:{o.plan.entry.tag}: {error}" for o in outcomes for error in o.errors]
    print(_summary(outcomes, destination, dry_run), file=stdout)
    if not dry_run:
        for line in record_copies(path, [outcome.plan for outcome in outcomes if outcome.ok]):
            print(line, file=stdout)
    if failures:
        copied = sum(outcome.ok for outcome in outcomes)
        verb = "would not be copied" if dry_run else "not copied"
        raise PinguardError(f"{len(lock) - copied} of {len(lock)} images {verb} to {destination}", details=failures)
    return 0


def _create(destination: Destination, plans: Sequence[ImagePlan], settings: RepositorySettings, dry_run: bool,
            stdout: TextIO) -> None:
    names = sorted({plan.target_repository for plan in plans})
    if dry_run:
        print(f"would create in {destination.registry} where missing: {', '.join(names)}", file=stdout)
        return
    created = create_repositories(destination.registry, names, settings)
    if created:
        print(f"created in {destination.registry}: {', '.join(created)}", file=stdout)


def _line(outcome: Outcome, dry_run: bool) -> str:
    entry = outcome.plan.entry
    where = f"{entry.name}:{entry.tag} to {outcome.plan.target}"
    if not outcome.ok:
        more = f" (and {len(outcome.errors) - 1} more)" if len(outcome.errors) > 1 else ""
        return f"failed {where}: {outcome.errors[0]}{more}"
    return f"{'would copy' if dry_run else 'copied'} {where}: {_counts(outcome.tally, outcome.seconds, dry_run)}"


def _summary(outcomes: Sequence[Outcome], destination: Destination, dry_run: bool) -> str:
    total = sum((outcome.tally for outcome in outcomes), Tally())
    copied = sum(outcome.ok for outcome in outcomes)
    seconds = max((outcome.seconds for outcome in outcomes), default=0.0)  # they all run together
    verb = "would copy" if dry_run else "copied"
    return f"{verb} {copied} of {len(outcomes)} images to {destination}: {_counts(total, seconds, dry_run)}"


def _counts(tally: Tally, seconds: float, dry_run: bool) -> str:
    if dry_run:
        return (f"{tally.uploaded} blobs to upload ({_size(tally.bytes)}), {tally.mounted} to mount, "
                f"{tally.skipped} there already, {tally.manifests} manifests to put")
    rate = tally.bytes / seconds if seconds > 0 else 0.0
    return (f"{tally.uploaded} blobs uploaded ({_size(tally.bytes)}), {tally.mounted} mounted, "
            f"{tally.skipped} skipped, {tally.manifests} manifests put, {_size(rate)}/s in {seconds:.1f} s")


def _size(count: float) -> str:
    """Bytes in decimal units, as transfer rates are given."""
    unit = next((unit for unit, scale in _UNITS if count >= scale), "B")
    scale = dict(_UNITS).get(unit, 1)
    return f"{count:.0f} B" if unit == "B" else f"{count / scale:.1f} {unit}"


_UNITS = (("GB", 1e9), ("MB", 1e6), ("kB", 1e3))
