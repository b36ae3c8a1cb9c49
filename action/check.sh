#!/usr/bin/env bash
# The GitHub Action's check step (action.yml). Annotates the changed lines of a pull
# request, writes a markdown summary to $GITHUB_STEP_SUMMARY, optionally writes SARIF,
# and exits as `precision-lint check` does (1 when findings remain).
set -uo pipefail

read -r -a paths <<< "${PRECISION_LINT_PATHS:-.}"
read -r -a extra <<< "${PRECISION_LINT_ARGS:-}"

if [ -n "${PRECISION_LINT_SARIF:-}" ]; then
  # Code scanning computes what is new itself: give it every finding.
  precision-lint check "${paths[@]}" "${extra[@]}" --exit-zero --output-format sarif \
    --output-file "$PRECISION_LINT_SARIF" || exit 2
fi

diff_base=()
if [ "${PRECISION_LINT_CHANGED_ONLY:-true}" = "true" ] && [ -n "${PRECISION_LINT_BASE_REF:-}" ]; then
  git fetch --quiet --no-tags origin "+refs/heads/${PRECISION_LINT_BASE_REF}:refs/remotes/origin/${PRECISION_LINT_BASE_REF}" || exit 2
  # precision-lint measures from the merge base itself (the same code as any CI's
  # `--diff-base origin/main`), and says so when a shallow clone has none.
  diff_base=(--diff-base "origin/${PRECISION_LINT_BASE_REF}")
fi

precision-lint check "${paths[@]}" "${extra[@]}" "${diff_base[@]}" --output-format github --summary
