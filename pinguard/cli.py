"""The command line. The only module that knows argparse.

A command's module is imported only when that command runs, so the offline
commands never pay for requests or the other heavy imports.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, TextIO

from pinguard import __version__
from pinguard.errors import PinguardError
from pinguard.options import PROJECT_POLICY, Options
from pinguard.provenance.model import Trust
from pinguard.registry.cache import default_cache_dir
from pinguard.registry.manifest import Platform
from pinguard.registry.settings import RegistrySettings, parse_mirrors, parse_rates
from pinguard.resolve.tags import TagRules
from pinguard.sources.base import SourceSettings


def _add_common_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("common options")
    group.add_argument("--lockfile", type=Path, default=Path("pinguard.lock"), metavar="FILE",
                       help="the lockfile (default: pinguard.lock in the current folder)")
    group.add_argument("--mirror", action="append", default=[], metavar="REGISTRY=URL",
                       help="send traffic for REGISTRY to URL; names stay canonical (repeatable; "
                            "also PINGUARD_MIRRORS=a=b,c=d)")
    group.add_argument("--insecure-registry", action="append", default=[], metavar="HOST[:PORT]",
                       help="allow plain HTTP or unverified TLS to this host (repeatable)")
    group.add_argument("--ca-file", metavar="FILE", help="CA bundle to verify registries with")
    group.add_argument("--platform", action="append", default=[], metavar="OS/ARCH",
                       help="platform(s) the images must offer (repeatable; default linux/amd64)")
    group.add_argument("-j", "--jobs", type=int, default=8, metavar="N",
                       help="registry requests in flight at once (default 8)")
    group.add_argument("--rate", action="append", default=[], metavar="REGISTRY=N",
                       help="at most N requests per second to REGISTRY (repeatable; default: ECR Public's quota, "
                            "1/s anonymous, 10/s with AWS credentials; other registries until they answer 429)")
    group.add_argument("-q", "--quiet", action="store_true", help="print less")
    group.add_argument("-v", "--verbose", action="store_true", help="log each registry request to stderr")


def _add_policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                        help="policy file or shipped preset name, for its tag rules, registry rates and Helm "
                             "settings (repeatable; default: .pinguard.yaml if present)")


def _add_helm_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--helm", metavar="PATH",
                        help="the helm binary (3 or 4) that renders charts, so their images are read from what "
                             "Helm renders and a pin is written only where a render confirms it (default: the "
                             "policy's helm.binary, else helm on PATH; without one, values files are read as text)")


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


def _add_allow_empty_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-empty", action="store_true",
                        help="drop the lock entries of references no longer found even when a PATH holds no image "
                             "reference (or none was found at all); without it that is refused as a wrong path")


def _add_online_options(parser: argparse.ArgumentParser) -> None:
    _add_policy_option(parser)
    parser.add_argument("--timeout", dest="deadline", type=float, default=600.0, metavar="S",
                        help="give up on registries after S seconds in all (default 600)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pinguard", description="Pin container images to verified digests and keep them pinned."
    )
    parser.add_argument("--version", action="version", version=f"pinguard {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    resolve = commands.add_parser("resolve", help="resolve references to verified digests, with evidence")
    resolve.add_argument("references", nargs="+", metavar="REF", help="image reference, e.g. nginx:1.25")
    resolve.add_argument("--format", choices=("text", "json"), default="text")
    _add_provenance_option(resolve)
    _add_online_options(resolve)
    _add_common_options(resolve)

    scan = commands.add_parser("scan", help="list every image reference with its place in the file")
    _add_paths(scan)
    scan.add_argument("--format", choices=("text", "json"), default="text")
    _add_policy_option(scan)
    _add_helm_option(scan)
    _add_common_options(scan)

    lock = commands.add_parser("lock", help="resolve what the files reference and write the lockfile")
    _add_paths(lock)
    _add_allow_empty_option(lock)
    _add_provenance_option(lock)
    _add_online_options(lock)
    _add_helm_option(lock)
    _add_common_options(lock)

    check = commands.add_parser("check", help="offline lint: pinned, locked, consistent, allowed by policy")
    _add_paths(check)
    check.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                       help="policy file or shipped preset name (repeatable; later ones override; default: "
                            ".pinguard.yaml if present, else the `default` preset)")
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    _add_output_option(check, "the report")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    _add_helm_option(check)
    _add_common_options(check)

    pin = commands.add_parser("pin", help="rewrite references to name:tag@digest from the lockfile")
    _add_paths(pin)
    pin.add_argument("--resolve", action="store_true", help="lock what the lockfile is missing first (online)")
    pin.add_argument("--dry-run", action="store_true", help="print a diff instead; exit 1 if anything would change")
    _add_allow_empty_option(pin)
    _add_online_options(pin)
    _add_helm_option(pin)
    _add_common_options(pin)

    verify = commands.add_parser("verify", help="check that every locked digest is still served and where tags point")
    verify.add_argument("--format", choices=("text", "json"), default="text")
    verify.add_argument("--fail-on-moved", action="store_true", help="exit 1 when a tag points to another digest")
    _add_online_options(verify)
    _add_common_options(verify)

    update = commands.add_parser("update", help="move moved tags forward: explain, update the lock, re-pin")
    _add_paths(update)
    update.add_argument("--dry-run", action="store_true",
                        help="print the explanation and a diff instead; exit 1 if anything would change")
    update.add_argument("--format", choices=("text", "markdown"), default="text")
    _add_online_options(update)
    _add_helm_option(update)
    _add_common_options(update)

    run = commands.add_parser("run", help="launch a RayJob or RayCluster only against the locked image; "
                                          "confirm what its pods run")
    run.add_argument("manifest", metavar="MANIFEST", help="a RayJob or RayCluster manifest")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the object that would be submitted")
    mode.add_argument("--local", action="store_true",
                      help="run the entrypoint on a local Ray instance (CPU, tiny model); no image is enforced")
    run.add_argument("--namespace", metavar="NS", help="the namespace (default: the manifest's, else the context's)")
    run.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                     help="policy file or shipped preset name the manifest must pass (repeatable; default: aws-dlc)")
    run.add_argument("--timeout", type=float, default=3600.0, metavar="S",
                     help="give up watching after S seconds (default 3600); the job is left running")
    run.add_argument("--admission", action="store_true",
                     help="first apply the lock as a ValidatingAdmissionPolicy bound to the job's namespace, so the "
                          "cluster admits only locked images there (with --dry-run: print it)")
    _add_common_options(run)

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
    _add_common_options(export)

    audit = commands.add_parser("audit", help="report pods running images the lockfile does not hold")
    scope = audit.add_mutually_exclusive_group()
    scope.add_argument("--namespace", metavar="NS", help="the namespace (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    audit.add_argument("--format", choices=("text", "json"), default="text")
    audit.add_argument("--policy", action="append", type=Path, default=[], metavar="FILE",
                       help="policy file or shipped preset name, for the sidecars it allows (repeatable; default: "
                            ".pinguard.yaml if present, else the `default` preset)")
    _add_common_options(audit)

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
    _add_common_options(post_render)
    post_render.set_defaults(lockfile=None)  # not given: PINGUARD_LOCKFILE, then pinguard.lock (`_options`)
    return parser


def _add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or folders (default: the current folder; git work trees as git lists them)")


def _options(args: argparse.Namespace, env: Mapping[str, str], stdout: TextIO, stderr: TextIO) -> Options:
    try:
        platforms = tuple(Platform.parse(p) for p in args.platform) or (Platform("linux", "amd64"),)
    except ValueError as exc:
        raise PinguardError(str(exc)) from None
    if args.jobs < 1:
        raise PinguardError("--jobs must be at least 1")
    deadline = getattr(args, "deadline", 600.0)
    if not 0 < deadline < float("inf"):
        raise PinguardError("--timeout must be a number of seconds above 0")
    tag_rules, rates, sources, trust = TagRules(), parse_rates(args.rate), SourceSettings(), Trust()
    tag_digest_mismatch = Options.tag_digest_mismatch
    provenance = getattr(args, "provenance", False)
    mirrors, mirror_credentials = parse_mirrors(args.mirror, env.get("PINGUARD_MIRRORS"))
    # The policy says how to read files (Helm charts that read `digest`), which tags move and how
    # fast to ask registries. `check` and `run` choose theirs with their own defaults. An offline
    # command (`scan`, `pin` on every commit) with no policy at hand needs none of the default's.
    online = hasattr(args, "deadline") and getattr(args, "resolve", True)
    own_policy = ("check", "run", "audit", "export", "post-render")  # their own policy, or none
    if args.command not in own_policy and (online or args.policy or PROJECT_POLICY.is_file()):
        from pinguard.policy import for_command

        policy = for_command(args.policy)
        tag_rules, rates, sources, trust = policy.tag_rules, {**policy.rates, **rates}, policy.sources, policy.trust
        provenance = provenance or (hasattr(args, "provenance") and policy.lock_provenance)
        tag_digest_mismatch = str(policy.rules["tag-digest-mismatch"]["lock"])
    options = Options(
        stdout=stdout,
        stderr=stderr,
        # None where the environment may name it: `post-render`, which Helm runs wherever helm runs, often unflagged
        lockfile=Path(env.get("PINGUARD_LOCKFILE") or "pinguard.lock") if args.lockfile is None else args.lockfile,
        registry=RegistrySettings(
            mirrors=mirrors,
            mirror_credentials=mirror_credentials,
            insecure=frozenset(args.insecure_registry),
            ca_file=args.ca_file,
            workers=args.jobs,
            env=env,
            rates=rates,
            timeout=deadline,
        ),
        platforms=platforms,
        cache_dir=default_cache_dir(env),
        quiet=args.quiet,
        verbose=args.verbose,
        env=env,
        tag_rules=tag_rules,
        sources=sources,
        provenance=provenance,
        trust=trust,
        tag_digest_mismatch=tag_digest_mismatch,
        helm=getattr(args, "helm", None),
    )
    return replace(options, sources=options.sources_over(options.sources))


def _run(args: argparse.Namespace, options: Options, stdin: BinaryIO | None) -> int:
    if args.command == "resolve":
        from pinguard.commands.resolve import resolve

        return resolve(args.references, options, fmt=args.format)
    if args.command == "scan":
        from pinguard.commands.scan import scan

        return scan(args.paths, options, fmt=args.format)
    if args.command == "lock":
        from pinguard.commands.lock import lock

        return lock(args.paths, options, allow_empty=args.allow_empty)
    if args.command == "check":
        from pinguard.commands.check import check

        return check(args.paths, options, policies=args.policy, fmt=args.format, output=args.output,
                     strict=args.strict)
    if args.command == "pin":
        from pinguard.commands.pin import pin

        return pin(args.paths, options, resolve=args.resolve, dry_run=args.dry_run, allow_empty=args.allow_empty)
    if args.command == "verify":
        from pinguard.commands.verify import verify

        return verify(options, fmt=args.format, fail_on_moved=args.fail_on_moved)
    if args.command == "update":
        from pinguard.commands.update import update

        return update(args.paths, options, dry_run=args.dry_run, fmt=args.format)
    if args.command == "run":
        from pinguard.commands.run import run

        return run(args.manifest, options, policies=args.policy, dry_run=args.dry_run, local=args.local,
                   namespace=args.namespace, timeout=args.timeout, admission=args.admission)
    if args.command == "export":
        from pinguard.commands.export import export

        return export(options, fmt=args.format, bound=args.namespaces, mode=args.mode, output=args.output,
                      kinds=args.kinds)
    if args.command == "audit":
        from pinguard.commands.audit import audit

        return audit(options, namespace=args.namespace, all_namespaces=args.all_namespaces, fmt=args.format,
                     policies=args.policy)
    if args.command == "post-render":
        from pinguard.commands.post_render import post_render

        return post_render(options, stdin=stdin or sys.stdin.buffer)
    raise AssertionError(f"unhandled command {args.command}")


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: BinaryIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = _parser().parse_args(argv)
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("pinguard: %(message)s"))
    logger = logging.getLogger("pinguard")
    try:
        options = _options(args, os.environ if env is None else env, out, err)
        if options.verbose:
            logger.addHandler(handler)
            logger.setLevel(logging.DEBUG)
        return _run(args, options, stdin)
    except PinguardError as exc:
        print(f"pinguard: error: {exc}", file=err)
        return 2
    except OSError as exc:  # a file or folder the user named that the system refuses: their input, not a bug
        print(f"pinguard: error: {exc.filename or ''}: {exc.strerror or exc}", file=err)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        logger.removeHandler(handler)
