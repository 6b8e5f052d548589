"""`pinguard update [PATH...] [--dry-run] [--format text|markdown]`: move moved tags forward, and say why.

For every moving tag the files under PATH reference and whose tag points to another
digest now (as `verify` finds it, `moved` or `unserved`), the tag is resolved anew and the
rebuild explained.
Then the lock entry and every pinned reference to that name:tag are replaced in one
all-or-nothing step; references without a digest are left to `pin`.
"""
from __future__ import annotations

from pinguard.errors import DeadlinePassed
from pinguard.lock import explain, lockfile
from pinguard.lock.exclusive import exclusive
from pinguard.lock.lockfile import Lock, LockEntry, LockfileError, locked_key
from pinguard.lock.verify import Status, deadline_lines, read_lock, verify_with_progress
from pinguard.options import Options
from pinguard.read.files import TextFile, UnreadableFile
from pinguard.read.paths import ScannedFile, scan_for_writing
from pinguard.registry.client import RegistryClient
from pinguard.resolve.online import open_client
from pinguard.write.commit import commit, tree_roots
from pinguard.write.edits import unified_diff
from pinguard.write.journal import recover
from pinguard.write.plan import repin

# What `update` moves forward to where the tag points now: a tag that moved, and one locked at a
# digest it did not point to (the policy's `tag-digest-mismatch: {lock: digest}`), which updating ends.
_MOVED = (Status.MOVED, Status.UNSERVED)


def update(paths: list[str], options: Options, *, dry_run: bool = False, fmt: str = "text") -> int:
    if not dry_run:
        recover(tree_roots(paths), options.stderr)  # before reading: a killed run may have left the tree half-renamed
    result = scan_for_writing(paths, options.stderr, options.sources)
    if result is None:
        return 2
    with exclusive(options.lockfile):
        lock = read_lock(options.lockfile)
        lock_file = _lock_file(options, lock)
        referenced = {locked_key(found.reference) for found in result.found if found.reference is not None}
        candidates = [entry for entry in lock if entry.tag_kind == "moving" and entry.key in referenced]
        with open_client(options) as client:
            rebuilds = _rebuilds(client, candidates, options)
        if rebuilds is None:
            return 2
        updated = lock.with_entries(rebuild.new for rebuild in rebuilds)
        changes = repin(result, Lock().with_entries(rebuild.new for rebuild in rebuilds))
        if rebuilds:
            # The lockfile is staged with the files, so anything failing before the renames (a file
            # changed meanwhile, a symlink out of the tree, a full disk) writes nothing at all. It is
            # renamed last: should a rename fail midway, the files are ahead of the lockfile, which a
            # second `update` repairs (the tag is still `moved` against the lock); a lockfile ahead of
            # the files would look done to `update`.
            changes.append((ScannedFile(lock_file, "lockfile", []), lockfile.dumps(updated)))
        options.stdout.write(explain.markdown(rebuilds) if fmt == "markdown" else explain.text(rebuilds))
        if not rebuilds and fmt == "text" and not options.quiet:
            print("nothing to update: no moving tag has moved", file=options.stdout)
        if dry_run:
            diff = [line for scanned, text in changes for line in unified_diff(scanned.file, text)]
            options.stdout.writelines(["\n```diff\n", *diff, "```\n"] if fmt == "markdown" and diff else diff)
            return 1 if changes else 0
        commit([(scanned.file, text) for scanned, text in changes], tree_roots(paths))
    if rebuilds and fmt == "text" and not options.quiet:
        files = len(changes) - 1  # the lockfile is not a file pinned
        print(f"updated {len(rebuilds)} tag{'s' if len(rebuilds) != 1 else ''} in {options.lockfile}, "
              f"re-pinned {files} file{'s' if files != 1 else ''}", file=options.stdout)
    return 0


def _lock_file(options: Options, lock: Lock) -> TextFile:
    """The bytes the new lockfile replaces: `commit` writes nothing if they change before it renames."""
    try:
        file = TextFile.read(options.lockfile)
    except UnreadableFile as exc:
        raise LockfileError(f"{options.lockfile}: {exc}") from None
    if lockfile.loads(file.text, str(options.lockfile)) != lock:  # changed since `lock` was read from it
        raise LockfileError(f"{options.lockfile}: changed while pinguard was working; nothing was written")
    return file


def _rebuilds(client: RegistryClient, candidates: list[LockEntry], options: Options) -> list[explain.Rebuild] | None:
    """Each moved candidate explained; None (reported) when any cannot be checked."""
    verdicts = verify_with_progress(candidates, client, options)
    failed = [verdict for verdict in verdicts if verdict.status not in (Status.OK, *_MOVED)]
    for verdict in failed:
        if not isinstance(verdict.error, DeadlinePassed):
            print(f"pinguard: {verdict.entry.name}:{verdict.entry.tag}: {verdict.status}: {verdict.message}",
                  file=options.stderr)
    for line in deadline_lines(verdicts):
        print(f"pinguard: error: {line}", file=options.stderr)
    if failed:
        print("pinguard: nothing written", file=options.stderr)
        return None
    moved = [(verdict.entry, LockEntry.from_resolved(verdict.current))
             for verdict in verdicts if verdict.status in _MOVED and verdict.current is not None]
    new = _with_provenance(client, moved, options)
    if new is None:
        return None
    return [explain.explain(client, old, entry) for (old, _), entry in zip(moved, new, strict=True)]


def _with_provenance(client: RegistryClient, moved: list[tuple[LockEntry, LockEntry]],
                     options: Options) -> list[LockEntry] | None:
    """The new entries, with their provenance where the old ones had theirs recorded (or it is asked for)."""
    wanted = [i for i, (old, _) in enumerate(moved) if old.evidence is not None or options.provenance]
    new = [entry for _, entry in moved]
    if not wanted:
        return new
    from pinguard.resolve.online import entries_with_evidence

    checked = entries_with_evidence(client, [new[i] for i in wanted], options)
    if checked is None:
        print("pinguard: nothing written", file=options.stderr)
        return None
    for i, entry in zip(wanted, checked, strict=True):
        new[i] = entry
    return new

