"""`pinguard post-render`: rendered manifests in, the same manifests out with every image pinned from the lock.

A filter for what renders manifests: Helm 3's `--post-renderer` (through
`helm-plugin/pinguard-post-render`), Helm 4's post-renderer plugin (`helm-plugin/`),
or a pipe such as `kustomize build . | pinguard post-render | kubectl apply -f -`.
Every `image` key of every document is read as `pinguard.sources.kubernetes` reads
manifests, at any depth, custom resources and `List` items included; each becomes
`name:tag@digest` with the digest the lock holds for its name and tag. Only those
characters change: comments, quoting, line breaks and every other byte come out as
they went in.

The render fails (exit 2, nothing on stdout, one line on stderr for each) when any
image cannot be pinned: one the lock does not hold, one pinned to a digest the lock
does not hold for it, or a value that is no literal reference (a template left
unrendered). A stream that passes has every image pinned to a locked digest.

YAML is read as Go's YAML reads it (escapes and `!!binary` decoded). A stream with a
mapping key written twice is refused (exit 2, its line): Helm keeps the last value,
kubectl's strict field validation rejects the object and other readers keep the
first, so pinning the one Helm reads would pass on an output that still holds the
other unpinned; write the key once in the chart.
"""
from __future__ import annotations

import argparse
import sys
from typing import BinaryIO, TextIO

from yaml.nodes import Node

from pinguard.commands import flags
from pinguard.commands.context import Command, Context
from pinguard.commands.options import Options
from pinguard.errors import PinguardError
from pinguard.lock import lockfile
from pinguard.lock.locked import find
from pinguard.lock.lockfile import Lock
from pinguard.policy.rules import duplicate_key
from pinguard.sources import kubernetes
from pinguard.sources.base import Found, SourceError
from pinguard.sources.yamlnodes import Located, compose, duplicates
from pinguard.untrusted_text import shown
from pinguard.write.edits import Edit, apply, pin_edit

STREAM = "<stdin>"  # how messages name the manifests read
MAX_BYTES = 64 * 1024 * 1024  # far beyond any release's manifests; what a stream may make pinguard hold
_BOM = "\ufeff"


def _options(parser: argparse.ArgumentParser) -> None:
    flags.lockfile(parser)
    flags.quiet(parser)
    parser.set_defaults(lockfile=None)  # not given: PINGUARD_LOCKFILE, then pinguard.lock (the command line's)


def _run(context: Context) -> int:
    return post_render(context.options, stdin=context.stdin or sys.stdin.buffer)


COMMAND = Command(
    "post-render", "pin every image of rendered manifests from the lockfile, stdin to stdout: a Helm post-renderer, "
                   "or a filter between kustomize and kubectl", _options, _run,
    description="Read rendered Kubernetes manifests on stdin (at most 64 MiB) and write them to stdout with every "
                "image pinned to name:tag@digest from the lockfile; nothing else changes. An image the lock does not "
                "hold, one pinned to a digest it does not hold, or a value that is no image reference fails the "
                "render: exit 2, nothing on stdout.",
    epilog="The lockfile is --lockfile, else $PINGUARD_LOCKFILE, else pinguard.lock in the current folder. Helm 3: "
           "helm template ... --post-renderer helm-plugin/pinguard-post-render. Helm 4: helm plugin install "
           "./helm-plugin, then helm template ... --post-renderer pinguard. Elsewhere: kustomize build . | pinguard "
           "post-render | kubectl apply -f -")


def post_render(options: Options, *, stdin: BinaryIO) -> int:
    text = _decode(_read_bounded(stdin))
    bom = _BOM if text.startswith(_BOM) else ""  # kept, but not parsed: YAML positions count from after it
    body = text[len(bom):]
    lock = _lock(options)
    edits, problems = _plan(body, lock, str(options.lockfile))
    if problems:
        for problem in problems:
            print(problem, file=options.stderr)
        raise PinguardError(f"{len(problems)} image(s) cannot be pinned from {options.lockfile}; nothing was "
                            "written")
    _write(options.stdout, bom + apply(body, edits))
    return 0


def _read_bounded(stdin: BinaryIO) -> bytes:
    """Everything up to the end, or an error past MAX_BYTES; a short read is no end (pipes give them)."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        chunk = stdin.read(MAX_BYTES + 1 - size)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    raise PinguardError(f"{STREAM}: more than {MAX_BYTES // 2**20} MiB of manifests: refused")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1  # in bytes: the line does not decode
        raise PinguardError(f"{STREAM}:{line}:{column}: not UTF-8 (byte 0x{data[exc.start]:02x})") from None


def _lock(options: Options) -> Lock:
    """The lock to pin from; a missing lockfile is an error here, not an empty lock: nothing could be pinned."""
    lock, text = lockfile.read_with_text(options.lockfile)
    if text is None:
        raise PinguardError(f"{options.lockfile}: no such lockfile: run `pinguard lock`, or name it with "
                            "--lockfile or PINGUARD_LOCKFILE")
    return lock


def _plan(text: str, lock: Lock, lockfile_name: str) -> tuple[list[Edit], list[str]]:
    """The edits that pin every image, and a line for each image that cannot be pinned."""
    edits: list[Edit] = []
    problems: list[str] = []
    for found in _images(text):
        reference = found.reference
        if reference is None:
            if _pinned_as_decoded(found, lock):
                continue  # escapes pinguard cannot edit, decoding to a locked digest: what `check` accepts
            problems.append(_at(found, found.problem or "not an image reference"))
            continue
        locked = find(lock, reference)  # as `check`, `run` and `audit` judge it
        entry = locked.entry
        if locked.key is None:  # a digest and no tag: pinned, and only the lock can say to what
            if entry is None:
                problems.append(_at(found, f"{lockfile_name} holds no {reference.digest} for {reference.name}"))
        elif entry is None:
            problems.append(_at(found, f"not in {lockfile_name}: run `pinguard lock` to resolve and record it"))
        elif reference.digest is None:
            edits.append(pin_edit(found, entry.digest))
        elif not locked.locked:
            problems.append(_at(found, f"pinned to {reference.digest}, but {lockfile_name} has {entry.digest} for "
                                       f"{entry.name}:{entry.tag}"))
    return edits, problems


def _pinned_as_decoded(found: Found, lock: Lock) -> bool:
    decoded = found.decoded
    return decoded is not None and decoded.digest is not None and find(lock, decoded).locked


def _images(text: str) -> list[Found]:
    """Every image of every manifest, as the controllers read them: the `image` key alone, never split
    across keys the way values files write them."""
    where = Located(text, STREAM, kubernetes.SOURCE)
    try:
        documents = compose(text)
    except SourceError as exc:
        raise PinguardError(f"{STREAM}:{exc.line}:{exc.column}: {exc}") from None
    _refuse_duplicates(documents, where)
    found = [item for document in documents if not kubernetes.skipped(document)
             for item in kubernetes.find_in(document, where, split=False)]
    return sorted(found, key=lambda item: item.span.start)


def _refuse_duplicates(documents: list[Node], where: Located) -> None:
    """A key written twice is refused, not pinned: Helm applies the last, kubectl's strict validation rejects
    the object, other readers take the first; pinning the last would leave the other unpinned in the output."""
    found = [(where.span(d.shadowed.start_mark.index, d.shadowed.end_mark.index), d) for document in documents
             for d in duplicates(document)]
    if found:
        span, first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PinguardError(f"{STREAM}:{span.line}:{span.column}: "
                            + duplicate_key.message(first.shadowed.value, span.line, first.kept.start_mark.line + 1)
                            + f"{more}; nothing was written")


def _at(found: Found, message: str) -> str:
    # A value written with escapes or as `!!binary` is named as it decodes, the image Helm deploys and `check` names.
    written = f"reads as {found.decoded}" if found.decoded is not None else f"`{found.value}`"
    return f"{STREAM}:{found.line}:{found.column}: " + shown(f"{written}: {message}")


def _write(stdout: TextIO, text: str) -> None:
    """All of `text` at once, as UTF-8 bytes where the stream has them: a line break stays the one read."""
    buffer = getattr(stdout, "buffer", None)
    if buffer is None:
        stdout.write(text)
        return
    stdout.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()
