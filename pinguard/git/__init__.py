"""A repository's branches and tags, listed through the git protocol (`git ls-remote`): what GitHub Actions
`uses:` refs name, and whether a commit is one any of them names."""
