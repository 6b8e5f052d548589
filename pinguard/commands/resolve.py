"""`pinguard resolve REF...`: tags to verified digests, with the evidence the lock would keep.

Exit 2 when a reference could not be resolved; else 1 when a reference names a tag and a
digest that tag does not point to (said on stderr, whatever the format); else 0.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.flags import PolicyDefault
from pinguard.commands.options import Options
from pinguard.errors import PinguardError
from pinguard.reference import Reference, parse
from pinguard.resolve.online import resolve_references
from pinguard.resolve.resolved import Resolved, failure_lines
from pinguard.resolve.settings import OnlineSettings

if TYPE_CHECKING:  # the evidence records are loaded where evidence is gathered or read
    from pinguard.provenance.evidence import Evidence


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("references", nargs="+", metavar="REF", help="image reference, e.g. nginx:1.25")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    flags.provenance(parser)
    flags.policy(parser, _POLICY)
    flags.quiet(parser)
    flags.registry(parser)


def _run(context: Context) -> int:
    args, policy = context.args, context.policy_at_hand()
    online = context.online(policy, provenance=args.provenance or (policy is not None and policy.lock_provenance))
    return resolve(args.references, context.options, online, fmt=args.format)


_POLICY = PolicyDefault(None)
COMMAND = Command("resolve", "resolve references to verified digests, with evidence", _options, _run, _POLICY)


def resolve(texts: list[str], options: Options, online: OnlineSettings, *, fmt: str = "text") -> int:
    references: list[Reference] = []
    failed = False
    for text in texts:
        try:
            references.append(parse(text))
        except PinguardError as exc:
            options.report.say(str(exc))
            failed = True
    outcomes = resolve_references(references, online)
    failures = failure_lines(outcomes)
    options.report.say(*failures)
    failed = failed or bool(failures)
    resolved = [outcome for outcome in outcomes.values() if isinstance(outcome, Resolved)]
    unserved = [item for item in resolved if not item.tag_served]
    options.report.say(*(item.unserved() for item in unserved))
    if fmt == "json":
        json.dump({"images": [r.to_json() for r in resolved]}, options.stdout, indent=2)
        options.stdout.write("\n")
    else:
        for item in resolved:
            options.stdout.write(_text(item, options.quiet, online.registry.mirrors))
    return 2 if failed else 1 if unserved else 0


def _text(item: Resolved, quiet: bool, mirrors: Mapping[str, str]) -> str:
    pinned = f"{item.name}:{item.tag}@{item.digest}" if item.tag else f"{item.name}@{item.digest}"
    if quiet:
        return pinned + "\n"
    lines = [pinned, f"  media type  {item.media_type} ({item.size} bytes)"]
    kind = item.tag_kind.value
    if item.frozen_tag:
        kind += f", same digest as frozen tag {item.frozen_tag}"
    elif item.tag_kind.value == "moving":
        kind += ", no frozen tag serves this digest"
    lines.append(f"  tag         {kind}")
    if not item.tag_served:
        lines.append(f"  not served  {item.unserved()}")
    for platform, digest in sorted(item.platforms.items()):
        lines.append(f"  platform    {platform} {digest}")
    if item.evidence is not None:
        lines.extend(_evidence_lines(item.evidence))
    registry = item.name.split("/", 1)[0]
    if registry in mirrors:
        lines.append(f"  served by   {mirrors[registry]} (mirror for {registry})")
    return "\n".join(lines) + "\n"


def _evidence_lines(evidence: Evidence) -> list[str]:
    if not (evidence.builds or evidence.signatures or evidence.sboms):
        return [f"  provenance  none found (looked at {evidence.checked_at})"]
    lines = []
    for build in evidence.builds:
        about = "" if build.subject_matches else f" (about {build.subject}, not this image)"
        lines.append(f"  built by    {build.builder or '?'} from {build.source or '?'}"
                     f"{'@' + build.revision if build.revision else ''}{about}")
    for signature in evidence.signatures:
        verdict = "verified" if signature.verified else f"not verified: {signature.problem}"
        issuer = f" ({signature.issuer})" if signature.issuer else ""
        lines.append(f"  signature   {signature.kind} {signature.identity or '?'}{issuer}, {verdict}")
    lines.extend(f"  sbom        {sbom.predicate_type}, {sbom.packages} packages" for sbom in evidence.sboms)
    return lines
