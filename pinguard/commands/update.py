"""`pinguard update [PATH...] [--dry-run] [--format text|markdown]`: move moved tags forward, and say why.

The plan (`pinguard.lock.update`) says which moving tags moved and what each rebuild
changed; it is printed, then the lock entries and every pinned reference to those
name:tags are replaced in one all-or-nothing step (`--dry-run`: a diff instead).
References without a digest are left to `pin`. Without Helm, a moved pin in a chart's values refuses the
whole update, as `pin` refuses (`pinguard.write.plan`): nothing is written, the lockfile included.
"""
from __future__ import annotations

from pinguard.commands.options import Options
from pinguard.lock import explain
from pinguard.lock.exclusive import exclusive
from pinguard.lock.update import plan_update
from pinguard.read.paths import scan_for_writing
from pinguard.resolve.settings import OnlineSettings
from pinguard.sources.base import SourceSettings
from pinguard.write.commit import commit, tree_roots
from pinguard.write.edits import unified_diff
from pinguard.write.journal import recover


def update(paths: list[str], options: Options, sources: SourceSettings, online: OnlineSettings, *,
           dry_run: bool = False, fmt: str = "text") -> int:
    if not dry_run:
        recover(tree_roots(paths), options.stderr)  # before reading: a killed run may have left the tree half-renamed
    result = scan_for_writing(paths, sources)
    with exclusive(options.lockfile, clear=not dry_run) as cleared:  # from the plan to the commit: no other writer
        for line in cleared:
            print(f"pinguard: {line}", file=options.stderr)
        plan = plan_update(result, options.lockfile, online)
        for line in plan.corrected:
            print(f"pinguard: warning: {line}", file=options.stderr)
        options.stdout.write(explain.markdown(plan.rebuilds) if fmt == "markdown" else explain.text(plan.rebuilds))
        if not plan.rebuilds and fmt == "text" and not options.quiet:
            print("nothing to update: no moving tag has moved", file=options.stdout)
        if dry_run:
            diff = [line for file, text in plan.changes for line in unified_diff(file, text)]
            options.stdout.writelines(["\n```diff\n", *diff, "```\n"] if fmt == "markdown" and diff else diff)
            return 1 if plan.changes else 0
        commit(plan.changes, tree_roots(paths))
    if plan.rebuilds and fmt == "text" and not options.quiet:
        tags, files = len(plan.rebuilds), plan.repinned
        print(f"updated {tags} tag{'s' if tags != 1 else ''} in {options.lockfile}, "
              f"re-pinned {files} file{'s' if files != 1 else ''}", file=options.stdout)
    return 0
