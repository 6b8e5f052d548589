"""The rules, one module per rule; its docstring is its documentation.

Each module declares `ID` (kebab-case), `TYPE` (what `check` receives, `Final` so that
mypy holds `check` to it), `CONF` (option name to type: `str`, `bool`, `int`, `[str]` for
a list of strings, or a tuple of the strings allowed), `DEFAULT` (level and options) and
`check`, whose signature is its TYPE's Protocol in `pinguard.policy.catalog`:

- TYPE "reference" (`ReferenceRule`): once per image reference;
- TYPE "document" (`DocumentRule`): once per Kubernetes or runtime_env document;
- TYPE "document-lock" (`DocumentLockRule`): once per Kubernetes document, with the
  lock it is checked against, in files whose text may hold the rule's `MARK` once decoded;
- TYPE "yaml" (`YamlRule`): once per document of every YAML file a source parsed;
- TYPE "lock" (`LockRule`): once per run, over every reference found.

A module may also declare `conf_problem(conf) -> str | None`: why options that pass
their types cannot work together, checked once the policy files are merged, with the rule on.

Rules yield `Problem`s; the policy stamps rule and severity, and applies
suppressions, so rules know nothing of either. `common.py` holds what several share.
"""
