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
  if ! base=$(git merge-base HEAD "origin/${PRECISION_LINT_BASE_REF}"); then
    echo "::error title=precision-lint::no merge base with origin/${PRECISION_LINT_BASE_REF}: check out with fetch-depth: 0" >&2
    exit 2
  fi
  diff_base=(--diff-base "$base")
fi

precision-lint check "${paths[@]}" "${extra[@]}" "${diff_base[@]}" --output-format github --summary
