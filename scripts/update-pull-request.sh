#!/usr/bin/env bash
# The weekly security rebuild, arriving as a pull request.
#
#   scripts/update-pull-request.sh [ARGS FOR pinguard update...]
#
# Run in a checked-out repository that keeps a pinguard.lock, on the branch the pull request should merge into.
# It runs `pinguard update --format markdown ARGS...`; when that moved anything (a moving tag now points to a
# rebuilt image), it commits the lock and the re-pinned files on the bot's branch, force-pushes the branch to
# `origin` (the branch is the bot's own, rebuilt from the base every run) and opens a pull request whose body is
# update's explanation, or, when one from that branch is open already, updates its title and body. Nothing moved:
# nothing is committed or pushed and GitHub is not called. update failing fails the script before any push.
#
# The GitHub CLI does the GitHub part and reads its token from GH_TOKEN; this script never prints one, nor
# traces its commands. The environment:
#   PINGUARD                  the pinguard command (default: pinguard)
#   GH                        the GitHub CLI (default: gh)
#   PINGUARD_UPDATE_BRANCH    the bot's branch (default: pinguard/update)
#   PINGUARD_UPDATE_BASE      the branch the pull request merges into (default: the branch checked out)
#   PINGUARD_UPDATE_TITLE     the pull request's title and the commit's subject
#   GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL
#                             git's own; unset, commits are the GitHub Actions bot's
#   GITHUB_STEP_SUMMARY       set by GitHub Actions: the explanation is appended to the job summary
set -euo pipefail

readonly pinguard=${PINGUARD:-pinguard}
readonly gh=${GH:-gh}
readonly branch=${PINGUARD_UPDATE_BRANCH:-pinguard/update}
readonly title=${PINGUARD_UPDATE_TITLE:-"pinguard: move moving tags to their rebuilt images"}
readonly bot_name="github-actions[bot]"
readonly bot_email="41898282+github-actions[bot]@users.noreply.github.com"
# GitHub refuses a pull request body over 65,536 characters; bytes are counted here, never fewer than characters.
readonly body_limit=65536

fail() {
  echo "update-pull-request: $*" >&2
  exit 2
}

# A body within GitHub's limit: whole lines up to the cut, then a line that says it was cut.
cut_body() {
  local body=$1 size note
  size=$(wc -c < "$body")
  if (( size <= body_limit )); then
    return
  fi
  note="*The explanation is cut here: at ${size} bytes it is longer than a pull request body may be. \`pinguard update --dry-run --format markdown\` on the base branch prints all of it.*"
  # Room for the note and the blank line before it; the last line kept may be a partial one, so it goes.
  head -c "$(( body_limit - ${#note} - 2 ))" "$body" | sed '$d' > "$body.cut"
  printf '\n%s\n' "$note" >> "$body.cut"
  mv -- "$body.cut" "$body"
}

git check-ref-format --branch "$branch" > /dev/null || fail "PINGUARD_UPDATE_BRANCH is not a valid branch name: $branch"
if [[ -n ${PINGUARD_UPDATE_BASE:-} ]]; then
  base=$PINGUARD_UPDATE_BASE
else
  base=$(git symbolic-ref --quiet --short HEAD) || fail "HEAD is detached: check out the base branch or set PINGUARD_UPDATE_BASE"
fi
readonly base
git check-ref-format --branch "$base" > /dev/null || fail "the base is not a valid branch name: $base"
[[ $base != "$branch" ]] || fail "the base branch and the update branch are both $branch"
# Only what update changes goes into the commit: tracked files must be as HEAD has them before it runs.
git diff --quiet HEAD -- || fail "tracked files have uncommitted changes; they would go into the pull request"

workdir=$(mktemp -d)
trap 'rm -rf -- "$workdir"' EXIT
body="$workdir/body.md"

status=0
"$pinguard" update --format markdown "$@" > "$body" || status=$?
if (( status != 0 )); then
  echo "update-pull-request: pinguard update failed (exit $status); nothing was pushed" >&2
  exit "$status"
fi

if git diff --quiet --; then
  echo "update-pull-request: nothing moved; nothing to push"
  exit 0
fi

[[ -s $body ]] || echo "pinguard update moved the lock and the pins forward." > "$body"
cut_body "$body"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  cat -- "$body" >> "$GITHUB_STEP_SUMMARY"
fi

# Tracked files only: update leaves its lock beside the lockfile (.pinguard.lock.lck), which is not committed.
git checkout --quiet -B "$branch"
git add --update
git -c user.name="$bot_name" -c user.email="$bot_email" commit --quiet \
  -m "$title" -m "Moving tags now point to rebuilt images; \`pinguard update\` moved the lock and the pins."
git push --quiet --force origin "refs/heads/$branch:refs/heads/$branch"

number=$("$gh" pr list --head "$branch" --state open --json number --jq '.[0].number // empty')
if [[ -z $number ]]; then
  "$gh" pr create --head "$branch" --base "$base" --title "$title" --body-file "$body"
elif [[ $number =~ ^[0-9]+$ ]]; then
  "$gh" pr edit "$number" --title "$title" --body-file "$body"
else
  fail "gh pr list answered something that is not a pull request number"
fi
