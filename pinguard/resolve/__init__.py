"""Tags to digests: which tags move (`tags`), the records of a resolved reference (`resolved`),
the resolver that asks registries (`resolver`), and resolving with progress for a command (`online`)."""
