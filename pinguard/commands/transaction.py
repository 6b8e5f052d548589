"""The steps every command that rewrites files takes around its edits (`pin`, `update`), taken one way.

`begin` first finishes or undoes what a killed run left (`write.journal.recover`), before
anything is read; `exclusive` holds the lockfile's lock from the plan to the commit
(`lock.exclusive`), for a command that rewrites the lockfile with the files; `commit` writes
every changed file or none (`write.commit`). A dry run repairs nothing, clears nothing and
writes nothing: `commit` prints the diff of what would change instead.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pinguard.commands.options import Options
from pinguard.lock.exclusive import exclusive
from pinguard.read.files import TextFile
from pinguard.write.commit import commit, tree_roots
from pinguard.write.edits import unified_diff
from pinguard.write.journal import recover


@dataclass(frozen=True)
class WriteTransaction:
    roots: list[Path]  # the trees the command line named: nothing outside them is written
    options: Options
    dry_run: bool

    @classmethod
    def begin(cls, paths: Sequence[str], options: Options, *, dry_run: bool) -> WriteTransaction:
        """The transaction of a run over `paths`; a real one first repairs what a killed run left half-renamed."""
        transaction = cls(tree_roots(paths), options, dry_run)
        if not dry_run:
            options.report.say(*recover(transaction.roots))
        return transaction

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """No other writer of the lockfile while this is held; a real run first clears, and names, the new lockfiles
        a killed writer left staged."""
        with exclusive(self.options.lockfile, clear=not self.dry_run) as cleared:
            self.options.report.say(*cleared)
            yield

    def commit(self, changes: Sequence[tuple[TextFile, str]], *, fenced: bool = False) -> None:
        """Write every changed file, or none; a dry run prints the diff instead (`fenced`: as a Markdown block)."""
        if not self.dry_run:
            commit(changes, self.roots)
            return
        diff = [line for file, text in changes for line in unified_diff(file, text)]
        self.options.stdout.writelines(["\n```diff\n", *diff, "```\n"] if fenced and diff else diff)
