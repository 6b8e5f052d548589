"""What every source module returns: image references with their exact place in the text."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from yaml.nodes import Node

from pinguard.reference import Reference
from pinguard.untrusted_text import shown
from pinguard.uses import ActionRef

if TYPE_CHECKING:
    from pinguard.sources.yamlnodes import Located


@dataclass(frozen=True, slots=True)  # slots: a file of many references holds a span for each
class Span:
    """Characters [start, end) of a decoded file, and where `start` is (1-based line and column)."""

    start: int
    end: int
    line: int
    column: int


FILE_START = Span(0, 0, 1, 1)  # where a finding about a whole file points: its first character


@dataclass(frozen=True)
class DigestField:
    """Where a structured image (Helm values, kustomize) keeps its digest.

    Pinning replaces characters [start, end) with `prefix + digest + suffix`:
    an existing value is replaced in place; a missing field is inserted as a
    new line (or a new flow entry) whose prefix carries key and indentation.
    """

    start: int
    end: int
    prefix: str = ""
    suffix: str = ""
    hex_only: bool = False  # Prometheus community charts keep `sha:` as bare hex


class _AtSpan:
    """Something written at a span of a file: its line and column are the span's."""

    __slots__ = ()
    span: Span

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column


@dataclass(frozen=True, slots=True)  # slots: a file of many references holds one for each
class Found(_AtSpan):
    """One image reference as written in a file.

    `value` is exactly the text at `span`. `reference` is None when the value
    cannot be resolved (a template, a variable); `problem` then says why.
    Structured forms (Helm `image: {repository, tag}`, kustomize `images:`)
    carry `digest_field`: pinning writes the digest there and leaves `span` alone.
    """

    path: str
    source: str  # the source kind: "kubernetes", "dockerfile", ...
    span: Span
    value: str
    reference: Reference | None
    problem: str | None = None
    digest_field: DigestField | None = None
    unread_digest: Span | None = None  # a digest written where its consumer does not read it (helm/values.py)
    # What a value pinguard cannot edit in place (escapes, a folded block) reads as, when it is a reference:
    # it runs as written, so `escaped-reference` judges it although nothing can pin it.
    decoded: Reference | None = None
    needs_helm: bool = False  # a Helm block whose shape the static reading does not model: `problem` says why
    # In a chart's values read without Helm (pinguard.scan.paths): scanned and locked as read, never pinned, since
    # only a render can confirm what a write into a chart does.
    pin_needs_helm: bool = False
    # A kustomization field that changes images only a build shows (patches, components, ...), or a remote
    # resource: `problem` says which.
    needs_kustomize: bool = False
    # Read from a chart's render (pinguard/helm): the image as Helm renders it, found at the values line that
    # controls it; `fixed` says why no values line can pin it (the chart writes it itself).
    rendered: str | None = None
    fixed: str | None = None
    # A values image no render of its chart showed, where the chart asks the cluster what the policy does not
    # name: why no render could show it (`not-rendered`).
    unrendered: str | None = None
    # At a chart's Chart.yaml, no image: what its templates ask the cluster that the policy does not name
    # (`render-context`).
    render_context: str | None = None


@dataclass(frozen=True, slots=True)
class ActionUse(_AtSpan):
    """One `uses:` of a workflow or a composite action's `action.yml`, with the places pinning rewrites.

    `value` is exactly the text at `span` (inside quotes, when quoted). `action` is None for a local
    (`./…`) or `docker://` value, whose `kind` says so, and for one that names no action, whose
    `problem` says why. `comment` is the comment after the value on its line, from `#` to the line's
    end, its text `comment_text`, and `version` the ref it names (`pinguard.uses.read_version`): the ref
    a commit stands for (`@<sha> # v6.0.1`). `comment_at` is where a version comment is written when the
    line has none: right after the value and its closing quote; None where the line goes on after the
    value (a flow mapping `{uses: a@v1, with: ...}`), which a comment would end.
    """

    path: str
    span: Span
    value: str
    kind: str  # REMOTE, LOCAL or DOCKER
    action: ActionRef | None
    problem: str | None = None
    comment: Span | None = None
    version: str | None = None
    comment_text: str | None = None
    comment_at: int | None = None

    @property
    def locked_ref(self) -> str | None:
        """The ref the lock files this use under: a commit's version comment, else the ref written."""
        if self.action is None:
            return None
        return self.version if self.action.pinned and self.version else self.action.ref


REMOTE, LOCAL, DOCKER = "remote", "local", "docker"  # what a `uses:` names: another repository's, this one's, an image


class Searched(NamedTuple):
    """What a source found in one file: image references, and the actions a workflow uses."""

    found: list[Found]
    actions: tuple[ActionUse, ...] = ()


class DocumentReader(Protocol):
    """What else reads each YAML document a source composes of a file (the rules `check` runs), handed it while
    the source holds it: so no file is parsed twice, and its documents are never all held at once."""

    def __call__(self, document: Node, where: Located) -> None:
        """One document of the file at `where`, as it was composed and decoded."""

    def forget(self, path: str) -> None:
        """What the file at `path` handed on counts for nothing: it proved no YAML, but a template."""


class SourceError(Exception):
    """A file that cannot be read as its kind: the message names line and column.

    What it quotes from the file is `shown`: cut, and escaped where it would not print.
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(shown(message))
        self.line = line
        self.column = column


class Unreadable(SourceError):
    """A file beyond what pinguard reads (nested too deeply, aliases expanding too far): never read another way."""


@dataclass(frozen=True)
class SourceSettings:
    """What the sources are told before they read a file: who else reads what they compose. (Helm's settings,
    and the charts a scan has read, are Helm's own: pinguard.helm.)"""

    # Who else reads each document the sources compose (`check`'s rules, given by `policy.lint.lint`); None: nobody.
    reader: DocumentReader | None = field(default=None, compare=False, repr=False)

    def read(self, document: Node, where: Located) -> None:
        """Hand one document a source composed to the `reader`, if any."""
        if self.reader is not None:
            self.reader(document, where)


DEFAULT_SETTINGS = SourceSettings()  # no policy: what the sources do on their own
