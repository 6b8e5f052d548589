"""What a command declares to the command line (`Command`), and what it is handed when it runs (`Context`).

Each command module declares one `COMMAND`: its name as typed, its help, the flags it adds to
its subparser, the policy it runs under by default, and `run(context)`. The context carries
the `Options`, the parsed arguments, and, on request, what the command line derives from
them: the policy (loaded once, under the command's default), how files are read, how
registries are reached. Nothing is loaded that the command does not ask for.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pinguard.commands.flags import ONLINE_PRESET, REGISTRY_OPTIONS, PolicyDefault
from pinguard.commands.options import DEFAULT_PLATFORM, Options
from pinguard.errors import PinguardError
from pinguard.policy.locations import PROJECT_POLICY
from pinguard.registry.settings import RegistrySettings

if TYPE_CHECKING:  # the rest is imported where it is used: `--version` and `--help` need none of it
    from pinguard.policy.model import Policy
    from pinguard.resolve.settings import OnlineSettings
    from pinguard.scan.paths import ScanSettings


@dataclass(frozen=True)
class Command:
    """A subcommand, as its module declares it."""

    name: str  # as typed; its module is the name with `_` for `-` (`post-render` is post_render.py)
    help: str
    options: Callable[[argparse.ArgumentParser], None]  # adds the command's flags to its subparser
    run: Callable[[Context], int]  # the exit status
    policy: PolicyDefault | None = None  # None: the command reads no policy, and takes no --policy
    description: str | None = None  # `pinguard COMMAND --help` before the flags; the help, if None
    epilog: str | None = None  # and after them


@dataclass(frozen=True)
class Context:
    """One run of a command: what the command line hands it."""

    command: Command
    options: Options
    args: argparse.Namespace
    stdin: BinaryIO | None = None  # None: the process's

    def policy(self) -> Policy:
        """The policy this run is under: those named, else the command's default (the one place it is loaded)."""
        from pinguard.policy.load import for_command

        default = self.command.policy or PolicyDefault(None)  # declared none: it takes no --policy, never asks
        return for_command(self.args.policy, default.preset or ONLINE_PRESET, project=default.project)

    def policy_at_hand(self) -> Policy | None:
        """For a command that needs none: the policy named, else the project's; None (nothing loaded) without
        either."""
        return self.policy() if self.args.policy or PROJECT_POLICY.is_file() else None

    def sources(self, policy: Policy | None) -> ScanSettings:
        """How to read files: the policy's settings (or the sources' own), with what the command line says of Helm
        and kustomize, and the environment it was handed for them to run in."""
        from pinguard.scan.paths import ScanSettings

        scan = ScanSettings() if policy is None else ScanSettings(helm=policy.helm, kustomize=policy.kustomize)
        cache_dir = self.cache_dir()
        helm = replace(scan.helm, binary=self.args.helm or scan.helm.binary, cache_dir=cache_dir)
        kustomize = replace(scan.kustomize, binary=self.args.kustomize or scan.kustomize.binary, cache_dir=cache_dir)
        return replace(scan, helm=helm, kustomize=kustomize, env=self.options.env)

    def online(self, policy: Policy | None, *, provenance: bool = False,
               deadline: float = RegistrySettings.timeout) -> OnlineSettings:
        """How this run reaches registries and what it resolves: the registry options over the policy's, if any;
        `deadline`: the command's, where --timeout is not given."""
        from pinguard.git.remote import GitSettings
        from pinguard.registry.manifest import Platform
        from pinguard.registry.settings import parse_mirrors, parse_rates
        from pinguard.resolve.settings import OnlineSettings

        args, options = self.args, self.options
        try:
            platforms = tuple(Platform.parse(p) for p in args.platform or [DEFAULT_PLATFORM])
        except ValueError as exc:
            raise PinguardError(str(exc)) from None
        workers = RegistrySettings.workers if args.jobs is None else args.jobs
        if workers < 1:
            raise PinguardError("--jobs must be at least 1")
        deadline = deadline if args.timeout is None else args.timeout
        if not 0 < deadline < float("inf"):
            raise PinguardError("--timeout must be a number of seconds above 0")
        mirrors, mirror_credentials = parse_mirrors(args.mirror or [], options.env.get("PINGUARD_MIRRORS"))
        rates = {**(policy.rates if policy else {}), **parse_rates(args.rate or [])}  # the flag wins
        registry = RegistrySettings(mirrors=mirrors, mirror_credentials=mirror_credentials,
                                    insecure=frozenset(args.insecure_registry or ()), ca_file=args.ca_file,
                                    workers=workers, env=options.env, rates=rates, timeout=deadline)
        online = OnlineSettings(registry, platforms, self.cache_dir(), provenance=provenance,
                                progress=None if options.quiet else options.stderr,
                                git=GitSettings.from_env(options.env))
        return online if policy is None else replace(online, tag_rules=policy.tag_rules, trust=policy.trust)

    def offline(self) -> None:
        """Refuse the registry options where nothing reaches a registry (`pin` without --resolve)."""
        given = [f"--{name.replace('_', '-')}" for name in REGISTRY_OPTIONS if getattr(self.args, name) is not None]
        if given:
            raise PinguardError(f"{', '.join(given)}: only with --resolve, which reaches registries")

    def cache_dir(self) -> Path:
        """Where registry answers and Helm renders are kept between runs."""
        env = self.options.env
        if env.get("PINGUARD_CACHE_DIR"):
            return Path(env["PINGUARD_CACHE_DIR"])
        base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
        return Path(base) / "pinguard"
