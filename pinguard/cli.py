"""The command line. The only module that knows argparse.

Each flag is declared once, and only on the commands that use it: a flag a command would
ignore is refused (exit 2), as a typo is. The policy is loaded here, once, under each
command's default (`_POLICIES`), and the command is handed it, or the settings drawn from
it. A command's module is imported only when that command runs, so the offline commands
never pay for requests or the other heavy imports, nor for a policy none asked for.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from pinguard import __version__
from pinguard.commands.options import DEFAULT_LOCKFILE, DEFAULT_PLATFORM, DEFAULT_WATCH, Options
from pinguard.errors import PinguardError
from pinguard.policy.files import PROJECT_POLICY
from pinguard.registry.settings import RegistrySettings

if TYPE_CHECKING:  # the rest is imported where it is used: `--version` and `--help` need none of it
    from pinguard.policy.model import Policy
    from pinguard.resolve.settings import OnlineSettings
    from pinguard.sources.base import SourceSettings


@dataclass(frozen=True)
class _PolicyDefault:
    """The policy a command runs under when no --policy names one."""

    preset: str | None  # the shipped preset; None: no policy at all, so none is loaded (offline, every commit)
    project: bool = True  # the project's .pinguard.yaml first, when it is there

    def said(self) -> str:
        project = f"{PROJECT_POLICY} if present, else " if self.project else ""
        return project + (f"the `{self.preset}` preset" if self.preset else "none")


# Each command that reads a policy, and its default.
# The `default` preset sets rules only: a command that runs none reads no policy unless one is named or the
# project has one (a test holds the preset to that).
_POLICIES = {
    "resolve": _PolicyDefault(None),
    "scan": _PolicyDefault(None),
    "lock": _PolicyDefault("default"),
    "check": _PolicyDefault("default"),
    "pin": _PolicyDefault(None),
    "verify": _PolicyDefault(None),
    "update": _PolicyDefault(None),
    "run": _PolicyDefault("aws-dlc", project=False),  # the gate of what runs: the preset, not the project's
    "audit": _PolicyDefault("default"),
    "copy": _PolicyDefault(None),
}
_ONLINE_PRESET = "default"  # the preset of a command that needs none when it reaches registries (`pin --resolve`)


def _add_quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true", help="print less")


def _add_lockfile_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lockfile", type=Path, default=DEFAULT_LOCKFILE, metavar="FILE",
                        help=f"the lockfile (default: {DEFAULT_LOCKFILE} in the current folder)")


def _add_policy_option(parser: argparse.ArgumentParser, command: str) -> None:
    default = _POLICIES[command]
    online = f"; with --resolve, else the `{_ONLINE_PRESET}` preset" if command == "pin" else ""
    parser.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                        help=f"policy file or shipped preset name (repeatable; later ones override; default: "
                             f"{default.said()}{online})")


# The registry options, by their names in the parsed arguments. None of them is given a default here,
# so that `pin` can tell one given without --resolve, which would mean nothing; `_online` fills them in.
_REGISTRY_OPTIONS = ("mirror", "insecure_registry", "ca_file", "jobs", "rate", "timeout", "platform", "verbose")


# The run's deadline where a command's default is not the registries' (moving gigabytes takes longer).
_DEADLINES = {"copy": 24 * 3600.0}


def _add_registry_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The options of the commands that reach registries: how to reach them, and what to resolve."""
    deadline = _DEADLINES.get(command, RegistrySettings.timeout)
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
    platforms = ("those the lock records; or --all-platforms" if command == "copy"
                 else f"{DEFAULT_PLATFORM}; the images must offer each")
    group.add_argument("--platform", action="append", metavar="OS/ARCH",
                       help=f"platform(s) to {'copy' if command == 'copy' else 'resolve'} (repeatable; default "
                            f"{platforms})")
    group.add_argument("-v", "--verbose", action="store_true", default=None, help="log each registry request to stderr")


def _add_helm_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--helm", metavar="PATH",
                        help="the helm binary (3 or 4) that renders charts, so their images are read from what "
                             "Helm renders and a pin is written only where a render confirms it (default: the "
                             "policy's helm.binary, else helm on PATH; without one, values files are read as text, "
                             "and `pin` and `update` write nothing into a chart's values)")


def _add_kustomize_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kustomize", metavar="PATH",
                        help="the kubectl (`kubectl kustomize`) or kustomize binary that builds kustomizations, so "
                             "their images are read from the build and a pin is written only where a second build "
                             "confirms it (default: the policy's kustomize.binary, else kubectl, else kustomize on "
                             "PATH; without one, kustomizations are read as text)")


def _add_provenance_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provenance", action="store_true",
                        help="also find and verify who built each image (SLSA), its signatures and SBOMs, and record "
                             "them (default: the policy's provenance.lock)")


def _add_output_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--output", type=_output, metavar="FILE",
                        help=f"write {what} to FILE instead of stdout: a regular file is replaced in one rename "
                             "(through a symlink, the file it leads to), a FIFO or device written through; "
                             "`-` is stdout")


def _output(text: str) -> Path | None:
    """An `--output` argument: None for `-`, standard output."""
    return None if text == "-" else Path(text)


def _add_keep_registry_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep-registry", action=argparse.BooleanOptionalAction, default=True,
                        help="with --to, name each copy REGISTRY/PREFIX/<source registry>/<path> (the default: no "
                             "two images can share a name); --no-keep-registry drops the source registry, and "
                             "images it would give one name are refused")


def _add_allow_empty_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-empty", action="store_true",
                        help="drop the lock entries of references no longer found even when a PATH holds no image "
                             "reference (or none was found at all); without it that is refused as a wrong path")


class _Parser(argparse.ArgumentParser):
    """A parser that takes no abbreviation of a flag: `--res` is a typo, and a CI gate must fail on one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pinguard", description="Pin container images to verified digests and keep them pinned.")
    parser.add_argument("--version", action="version", version=f"pinguard {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)

    resolve = commands.add_parser("resolve", help="resolve references to verified digests, with evidence")
    resolve.add_argument("references", nargs="+", metavar="REF", help="image reference, e.g. nginx:1.25")
    resolve.add_argument("--format", choices=("text", "json"), default="text")
    _add_provenance_option(resolve)
    _add_policy_option(resolve, "resolve")
    _add_quiet_option(resolve)
    _add_registry_options(resolve, "resolve")

    scan = commands.add_parser("scan", help="list every image reference with its place in the file")
    _add_paths(scan)
    scan.add_argument("--format", choices=("text", "json"), default="text")
    _add_policy_option(scan, "scan")
    _add_helm_option(scan)
    _add_kustomize_option(scan)
    _add_quiet_option(scan)

    lock = commands.add_parser("lock", help="resolve what the files reference and write the lockfile")
    _add_paths(lock)
    _add_allow_empty_option(lock)
    _add_provenance_option(lock)
    _add_policy_option(lock, "lock")
    _add_helm_option(lock)
    _add_kustomize_option(lock)
    _add_lockfile_option(lock)
    _add_quiet_option(lock)
    _add_registry_options(lock, "lock")

    check = commands.add_parser("check", help="offline lint: pinned, locked, consistent, allowed by policy")
    _add_paths(check)
    _add_policy_option(check, "check")
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    _add_output_option(check, "the report")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    _add_helm_option(check)
    _add_kustomize_option(check)
    _add_lockfile_option(check)
    _add_quiet_option(check)

    pin = commands.add_parser("pin", help="rewrite references to name:tag@digest from the lockfile")
    _add_paths(pin)
    pin.add_argument("--resolve", action="store_true",
                     help="lock what the lockfile is missing first (online: the registry options apply)")
    pin.add_argument("--dry-run", action="store_true", help="print a diff instead; exit 1 if anything would change")
    pin.add_argument("--to", metavar="REGISTRY[/PREFIX]",
                     help="name every reference written whole as its copy there (`pinguard copy --to`), pinned to "
                          "the locked digest; one the lock records no copy of, or whose repository is written apart "
                          "from its tag, is reported")
    _add_keep_registry_option(pin)
    _add_allow_empty_option(pin)
    _add_policy_option(pin, "pin")
    _add_helm_option(pin)
    _add_kustomize_option(pin)
    _add_lockfile_option(pin)
    _add_quiet_option(pin)
    _add_registry_options(pin, "pin")

    verify = commands.add_parser("verify", help="check that every locked digest is still served and where tags point")
    verify.add_argument("--format", choices=("text", "json"), default="text")
    verify.add_argument("--fail-on-moved", action="store_true", help="exit 1 when a tag points to another digest")
    verify.add_argument("--copies", action="store_true",
                        help="also check that every copy the lock records (`pinguard copy`) serves every digest; "
                             "exit 1 if one does not")
    verify.add_argument("--deep", action="store_true",
                        help="with --copies, also download every copied blob and hash it (a byte range at a time)")
    _add_policy_option(verify, "verify")
    _add_lockfile_option(verify)
    _add_quiet_option(verify)
    _add_registry_options(verify, "verify")

    update = commands.add_parser("update", help="move moved tags forward: explain, update the lock, re-pin")
    _add_paths(update)
    update.add_argument("--dry-run", action="store_true",
                        help="print the explanation and a diff instead; exit 1 if anything would change")
    update.add_argument("--format", choices=("text", "markdown"), default="text")
    _add_policy_option(update, "update")
    _add_helm_option(update)
    _add_kustomize_option(update)
    _add_lockfile_option(update)
    _add_quiet_option(update)
    _add_registry_options(update, "update")

    run = commands.add_parser("run", help="launch a RayJob or RayCluster only against the locked image; "
                                          "confirm what its pods run")
    run.add_argument("manifest", metavar="MANIFEST", help="a RayJob or RayCluster manifest")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the object that would be submitted")
    mode.add_argument("--local", action="store_true",
                      help="run the entrypoint on a local Ray instance (CPU, tiny model); no image is enforced")
    run.add_argument("--namespace", metavar="NS", help="the namespace (default: the manifest's, else the context's)")
    _add_policy_option(run, "run")
    run.add_argument("--watch-timeout", type=float, default=DEFAULT_WATCH, metavar="S",
                     help=f"give up watching after S seconds (default {DEFAULT_WATCH:g}); the job is left running")
    run.add_argument("--admission", action="store_true",
                     help="first apply the lock as a ValidatingAdmissionPolicy bound to the job's namespace, so the "
                          "cluster admits only locked images there (with --dry-run: print it)")
    _add_lockfile_option(run)
    _add_quiet_option(run)

    export = commands.add_parser("export", help="write the lock as an admission policy the cluster enforces")
    export.add_argument("what", choices=("admission",), help="`admission`: only images pinned to a locked digest "
                                                            "are admitted")
    export.add_argument("--format", choices=("vap", "kyverno"), default="vap",
                        help="vap: ValidatingAdmissionPolicies, their bindings and params ConfigMaps (default); "
                             "kyverno: a Kyverno ClusterPolicy")
    export.add_argument("--namespace", action="append", default=[], dest="namespaces", metavar="NS",
                        help="bind this namespace (repeatable; default: every namespace but kube-system)")
    export.add_argument("--mode", choices=("deny", "warn", "audit"), default="deny",
                        help="what a pod with an unlocked image meets: denied (default), admitted with a warning, "
                             "or admitted and audited")
    export.add_argument("--kind", action="append", default=[], dest="kinds",
                        metavar="GROUP/VERSION/KIND[/PLURAL]:PATH[,PATH...]",
                        help="judge a custom resource too, at the paths to its pod specs (repeatable), e.g. "
                             "'example.com/v1/TrainRun:spec.template.spec'")
    _add_output_option(export, "the YAML")
    _add_lockfile_option(export)
    _add_quiet_option(export)

    audit = commands.add_parser("audit", help="report pods running images the lockfile does not hold")
    scope = audit.add_mutually_exclusive_group()
    scope.add_argument("--namespace", metavar="NS", help="the namespace (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    audit.add_argument("--format", choices=("text", "json"), default="text")
    _add_policy_option(audit, "audit")
    _add_lockfile_option(audit)
    _add_quiet_option(audit)

    copy = commands.add_parser(
        "copy", help="copy every locked image, digest for digest, where the cluster can pull it; record the copies")
    copy.add_argument("--to", required=True, metavar="REGISTRY[/PREFIX]",
                      help="where: each image keeps its registry and repository path under it "
                           "(REGISTRY/PREFIX/public.ecr.aws/deep-learning-containers/ray), tags as in the lock")
    _add_keep_registry_option(copy)
    copy.add_argument("--all-platforms", action="store_true",
                      help="copy every platform of an index, not only those the lock records")
    copy.add_argument("--with-referrers", action="store_true",
                      help="copy what refers to each image too: signatures, attestations, SBOMs, SOCI indexes")
    copy.add_argument("--dry-run", action="store_true", help="say what would be copied; write nothing anywhere")
    copy.add_argument("--create-repositories", action="store_true",
                      help="create the repositories a private ECR target lacks, through boto3, as the policy's "
                           "`ecr:` says (tag mutability, scan on push)")
    _add_policy_option(copy, "copy")
    _add_lockfile_option(copy)
    _add_quiet_option(copy)
    _add_registry_options(copy, "copy")

    post_render = commands.add_parser(
        "post-render", help="pin every image of rendered manifests from the lockfile, stdin to stdout: a Helm "
                            "post-renderer, or a filter between kustomize and kubectl",
        description="Read rendered Kubernetes manifests on stdin (at most 64 MiB) and write them to stdout with "
                    "every image pinned to name:tag@digest from the lockfile; nothing else changes. An image the "
                    "lock does not hold, one pinned to a digest it does not hold, or a value that is no image "
                    "reference fails the render: exit 2, nothing on stdout.",
        epilog="The lockfile is --lockfile, else $PINGUARD_LOCKFILE, else pinguard.lock in the current folder. "
               "Helm 3: helm template ... --post-renderer helm-plugin/pinguard-post-render. Helm 4: helm plugin "
               "install ./helm-plugin, then helm template ... --post-renderer pinguard. Elsewhere: kustomize build "
               ". | pinguard post-render | kubectl apply -f -")
    _add_lockfile_option(post_render)
    _add_quiet_option(post_render)
    post_render.set_defaults(lockfile=None)  # not given: PINGUARD_LOCKFILE, then pinguard.lock (`_lockfile`)
    return parser


def _add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or folders (default: the current folder; git work trees as git lists them)")


def _lockfile(args: argparse.Namespace, env: Mapping[str, str]) -> Path:
    """`--lockfile`; where it is not given and the environment may name it (`post-render`, which Helm runs
    wherever helm runs, often unflagged), PINGUARD_LOCKFILE, then the default."""
    lockfile: Path | None = getattr(args, "lockfile", DEFAULT_LOCKFILE)
    return Path(env.get("PINGUARD_LOCKFILE") or DEFAULT_LOCKFILE) if lockfile is None else lockfile


def _policy(args: argparse.Namespace) -> Policy:
    """The policy this run is under: those named, else the command's default (the one place it is loaded)."""
    from pinguard.policy.load import for_command

    default = _POLICIES[args.command]
    return for_command(args.policy, default.preset or _ONLINE_PRESET, project=default.project)


def _policy_at_hand(args: argparse.Namespace) -> Policy | None:
    """For a command that needs none: the policy named, else the project's; None (nothing loaded) without either."""
    return _policy(args) if args.policy or PROJECT_POLICY.is_file() else None


def _sources(args: argparse.Namespace, policy: Policy | None, cache_dir: Path) -> SourceSettings:
    """How to read files: the policy's settings (or the sources' own), with what the command line says of Helm
    and kustomize."""
    from pinguard.sources.base import SourceSettings

    sources = SourceSettings() if policy is None else policy.sources
    helm = replace(sources.helm, binary=args.helm or sources.helm.binary, cache_dir=cache_dir)
    kustomize = replace(sources.kustomize, binary=args.kustomize or sources.kustomize.binary, cache_dir=cache_dir)
    return replace(sources, helm=helm, kustomize=kustomize)


def _online(args: argparse.Namespace, policy: Policy | None, options: Options, cache_dir: Path, *,
            provenance: bool = False) -> OnlineSettings:
    """How this run reaches registries and what it resolves: the registry options over the policy's, if any."""
    from pinguard.registry.manifest import Platform
    from pinguard.registry.settings import parse_mirrors, parse_rates
    from pinguard.resolve.settings import OnlineSettings

    try:
        platforms = tuple(Platform.parse(p) for p in args.platform or [DEFAULT_PLATFORM])
    except ValueError as exc:
        raise PinguardError(str(exc)) from None
    workers = RegistrySettings.workers if args.jobs is None else args.jobs
    if workers < 1:
        raise PinguardError("--jobs must be at least 1")
    deadline = _DEADLINES.get(args.command, RegistrySettings.timeout) if args.timeout is None else args.timeout
    if not 0 < deadline < float("inf"):
        raise PinguardError("--timeout must be a number of seconds above 0")
    mirrors, mirror_credentials = parse_mirrors(args.mirror or [], options.env.get("PINGUARD_MIRRORS"))
    rates = {**(policy.rates if policy else {}), **parse_rates(args.rate or [])}  # the flag wins
    registry = RegistrySettings(mirrors=mirrors, mirror_credentials=mirror_credentials,
                                insecure=frozenset(args.insecure_registry or ()), ca_file=args.ca_file,
                                workers=workers, env=options.env, rates=rates, timeout=deadline)
    online = OnlineSettings(registry, platforms, cache_dir, provenance=provenance,
                            progress=None if options.quiet else options.stderr)
    return online if policy is None else replace(online, tag_rules=policy.tag_rules, trust=policy.trust)


def _offline(args: argparse.Namespace) -> None:
    """Refuse the registry options where nothing reaches a registry (`pin` without --resolve)."""
    given = [f"--{name.replace('_', '-')}" for name in _REGISTRY_OPTIONS if getattr(args, name) is not None]
    if given:
        raise PinguardError(f"{', '.join(given)}: only with --resolve, which reaches registries")


def _mismatch(policy: Policy) -> str:
    """What `lock` does with a digest written beside a tag that points elsewhere (tag-digest-mismatch's `lock`)."""
    return str(policy.rules["tag-digest-mismatch"]["lock"])


def _cache_dir(env: Mapping[str, str]) -> Path:
    """Where registry answers and Helm renders are kept between runs."""
    if env.get("PINGUARD_CACHE_DIR"):
        return Path(env["PINGUARD_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "pinguard"


def _run(args: argparse.Namespace, options: Options, stdin: BinaryIO | None) -> int:
    cache_dir = _cache_dir(options.env)
    if args.command == "resolve":
        from pinguard.commands.resolve import resolve

        policy = _policy_at_hand(args)
        online = _online(args, policy, options, cache_dir,
                         provenance=args.provenance or (policy is not None and policy.lock_provenance))
        return resolve(args.references, options, online, fmt=args.format)
    if args.command == "scan":
        from pinguard.commands.scan import scan

        return scan(args.paths, options, _sources(args, _policy_at_hand(args), cache_dir), fmt=args.format)
    if args.command == "lock":
        from pinguard.commands.lock import lock

        policy = _policy(args)
        online = _online(args, policy, options, cache_dir, provenance=args.provenance or policy.lock_provenance)
        return lock(args.paths, options, _sources(args, policy, cache_dir), online, mismatch=_mismatch(policy),
                    allow_empty=args.allow_empty)
    if args.command == "check":
        from pinguard.commands.check import check

        policy = _policy(args)
        return check(args.paths, options, replace(policy, sources=_sources(args, policy, cache_dir)),
                     fmt=args.format, output=args.output, strict=args.strict)
    if args.command == "pin":
        from pinguard.commands.pin import pin

        if not args.resolve:
            _offline(args)
            return pin(args.paths, options, _sources(args, _policy_at_hand(args), cache_dir), dry_run=args.dry_run,
                       to=args.to, keep_registry=args.keep_registry)
        policy = _policy(args)
        return pin(args.paths, options, _sources(args, policy, cache_dir),
                   resolve=_online(args, policy, options, cache_dir), mismatch=_mismatch(policy),
                   dry_run=args.dry_run, allow_empty=args.allow_empty, to=args.to, keep_registry=args.keep_registry)
    if args.command == "verify":
        from pinguard.commands.verify import verify

        return verify(options, _online(args, _policy_at_hand(args), options, cache_dir), fmt=args.format,
                      fail_on_moved=args.fail_on_moved, copies=args.copies, deep=args.deep)
    if args.command == "update":
        from pinguard.commands.update import update

        policy = _policy_at_hand(args)
        return update(args.paths, options, _sources(args, policy, cache_dir),
                      _online(args, policy, options, cache_dir), dry_run=args.dry_run, fmt=args.format)
    if args.command == "run":
        from pinguard.commands.run import run

        return run(args.manifest, options, _policy(args), dry_run=args.dry_run, local=args.local,
                   namespace=args.namespace, watch_timeout=args.watch_timeout, admission=args.admission)
    if args.command == "export":
        from pinguard.commands.export import export

        return export(options, fmt=args.format, bound=args.namespaces, mode=args.mode, output=args.output,
                      kinds=args.kinds)
    if args.command == "audit":
        from pinguard.commands.audit import audit

        return audit(options, _policy(args), namespace=args.namespace, all_namespaces=args.all_namespaces,
                     fmt=args.format)
    if args.command == "copy":
        from pinguard.commands.copy import copy
        from pinguard.copy.ecr import RepositorySettings

        policy = _policy_at_hand(args)
        online = _online(args, policy, options, cache_dir)
        ecr = RepositorySettings() if policy is None else policy.ecr
        return copy(options.lockfile, args.to, online, stdout=options.stdout, keep_registry=args.keep_registry,
                    platforms=online.platforms if args.platform else (), all_platforms=args.all_platforms,
                    with_referrers=args.with_referrers, dry_run=args.dry_run,
                    create=ecr if args.create_repositories else None)
    if args.command == "post-render":
        from pinguard.commands.post_render import post_render

        return post_render(options, stdin=stdin or sys.stdin.buffer)
    raise AssertionError(f"unhandled command {args.command}")


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: BinaryIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = _parser().parse_args(argv)
    env = os.environ if env is None else env
    with _request_log(err, on=bool(getattr(args, "verbose", None))):
        return _reported(args, Options(out, err, env, _lockfile(args, env), args.quiet), stdin)


@contextmanager
def _request_log(stream: TextIO, *, on: bool) -> Iterator[None]:
    """`-v`: the commands that reach registries log each request to `stream`, for this run only."""
    if not on:
        yield
        return
    import logging

    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("pinguard: %(message)s"))
    logger = logging.getLogger("pinguard")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _reported(args: argparse.Namespace, options: Options, stdin: BinaryIO | None) -> int:
    """The command's status; an expected error printed, the only place errors are."""
    err = options.stderr
    try:
        return _run(args, options, stdin)
    except PinguardError as exc:
        for line in exc.details:  # the failures first, then what came of them
            print(f"pinguard: {line}", file=err)
        print(f"pinguard: {'' if exc.details else 'error: '}{exc}", file=err)
        return 2
    except OSError as exc:  # a file or folder the user named that the system refuses: their input, not a bug
        print(f"pinguard: error: {exc.filename or ''}: {exc.strerror or exc}", file=err)
        return 2
    except KeyboardInterrupt:
        return 130
