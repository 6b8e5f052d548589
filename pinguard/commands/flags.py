"""The flags more than one command takes, each declared once, and the policy a command runs under by default.

A command adds only the flags it uses (its module's `COMMAND.options`): a flag it would ignore is
refused (exit 2), as a typo is.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from pinguard.commands.options import DEFAULT_LOCKFILE, DEFAULT_PLATFORM
from pinguard.policy.locations import PROJECT_POLICY
from pinguard.registry.settings import RegistrySettings

ONLINE_PRESET = "default"  # the preset of a command that needs none when it reaches registries (`pin --resolve`)

# The registry options, by their names in the parsed arguments. None of them is given a default here,
# so that `pin` can tell one given without --resolve, which would mean nothing; `Context.online` fills them in.
REGISTRY_OPTIONS = ("mirror", "insecure_registry", "ca_file", "jobs", "rate", "timeout", "platform", "verbose")


@dataclass(frozen=True)
class PolicyDefault:
    """The policy a command runs under when no --policy names one."""

    preset: str | None  # the shipped preset; None: no policy at all, so none is loaded (offline, every commit)
    project: bool = True  # the project's .pinguard.yaml first, when it is there

    def said(self) -> str:
        project = f"{PROJECT_POLICY} if present, else " if self.project else ""
        return project + (f"the `{self.preset}` preset" if self.preset else "none")


def paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or folders (default: the current folder; git work trees as git lists them)")


def quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true", help="print less")


def lockfile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lockfile", type=Path, default=DEFAULT_LOCKFILE, metavar="FILE",
                        help=f"the lockfile (default: {DEFAULT_LOCKFILE} in the current folder)")


def policy(parser: argparse.ArgumentParser, default: PolicyDefault, *, online: bool = False) -> None:
    """--policy; `online`: a command that loads the `ONLINE_PRESET` when it reaches registries (`pin --resolve`)."""
    when_online = f"; with --resolve, else the `{ONLINE_PRESET}` preset" if online else ""
    parser.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                        help=f"policy file or shipped preset name (repeatable; later ones override; default: "
                             f"{default.said()}{when_online})")


def registry(parser: argparse.ArgumentParser, *, deadline: float = RegistrySettings.timeout,
             platforms: str = f"to resolve (repeatable; default {DEFAULT_PLATFORM}; the images must offer each)"
             ) -> None:
    """The options of the commands that reach registries: how to reach them, and what to resolve (`platforms`:
    what --platform's help says after "platform(s)")."""
    group = parser.add_argument_group("registry options")
    group.add_argument("--mirror", action="append", metavar="REGISTRY=URL",
                       help="send traffic for REGISTRY to URL; names stay canonical (repeatable; "
                            "also PINGUARD_MIRRORS=a=b,c=d)")
    group.add_argument("--insecure-registry", action="append", metavar="HOST[:PORT]",
                       help="allow plain HTTP or unverified TLS to this host (repeatable)")
    group.add_argument("--ca-file", metavar="FILE", help="CA bundle to verify registries with")
    group.add_argument("-j", "--jobs", type=int, metavar="N",
                       help=f"registry requests in flight at once (default {RegistrySettings.workers})")
    group.add_argument("--rate", action="append", metavar="REGISTRY=N",
                       help="at most N requests per second to REGISTRY (repeatable; default: the policy's, else ECR "
                            "Public's quota, 1/s anonymous, 10/s with AWS credentials; other registries until they "
                            "answer 429)")
    group.add_argument("--timeout", type=float, metavar="S",
                       help=f"give up on registries after S seconds in all (default {deadline:g})")
    group.add_argument("--platform", action="append", metavar="OS/ARCH", help=f"platform(s) {platforms}")
    group.add_argument("-v", "--verbose", action="store_true", default=None, help="log each registry request to stderr")


def tools(parser: argparse.ArgumentParser) -> None:
    """`--helm` and `--kustomize`: the tools that deploy charts and kustomizations, which every command reading
    files takes together."""
    parser.add_argument("--helm", metavar="PATH",
                        help="the helm binary (3 or 4) that renders charts, so their images are read from what "
                             "Helm renders and a pin is written only where a render confirms it (default: the "
                             "policy's helm.binary, else helm on PATH; without one, values files are read as text, "
                             "and `pin` and `update` write nothing into a chart's values)")
    parser.add_argument("--kustomize", metavar="PATH",
                        help="the kubectl (`kubectl kustomize`) or kustomize binary that builds kustomizations, so "
                             "their images are read from the build and a pin is written only where a second build "
                             "confirms it (default: the policy's kustomize.binary, else kubectl, else kustomize on "
                             "PATH; without one, kustomizations are read as text)")


def provenance(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provenance", action="store_true",
                        help="also find and verify who built each image (SLSA), its signatures and SBOMs, and record "
                             "them (default: the policy's provenance.lock)")


def output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--output", type=output_path, metavar="FILE",
                        help=f"write {what} to FILE instead of stdout: a regular file is replaced in one rename "
                             "(through a symlink, the file it leads to), a FIFO or device written through; "
                             "`-` is stdout")


def output_path(text: str) -> Path | None:
    """An `--output` argument: None for `-`, standard output."""
    return None if text == "-" else Path(text)


def keep_registry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep-registry", action=argparse.BooleanOptionalAction, default=True,
                        help="with --to, name each copy REGISTRY/PREFIX/<source registry>/<path> (the default: no "
                             "two images can share a name); --no-keep-registry drops the source registry, and "
                             "images it would give one name are refused")


def allow_empty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-empty", action="store_true",
                        help="drop the lock entries of references no longer found even when a PATH holds no image "
                             "reference (or none was found at all); without it that is refused as a wrong path")
