#!/usr/bin/env bash
# `npm test`: the linters and the type checker (scripts/checks.sh) beside the test suite, not
# before it. The suite starts with the files that boot the whole product, which wait on jobs and
# webhooks and leave part of the two cores idle; the checks (~100 s of CPU) fill it. Their output is
# kept and printed once the tests are done, so it never breaks into the test reporter's lines.
# Fails when either fails; arguments go to vitest (`npm test -- test/e2e/bump.test.ts`).
set -uo pipefail
cd "$(dirname "$0")/.."
checks_log=$(mktemp)
trap 'rm -f "$checks_log"' EXIT
scripts/checks.sh >"$checks_log" 2>&1 &
checks_pid=$!
npx vitest run "$@"
tests=$?
wait "$checks_pid"
checks=$?
if [ -s "$checks_log" ] || [ "$checks" -ne 0 ]; then
  echo "npm test: what the linters and the type checker said (they ran beside the tests):"
  cat "$checks_log"
fi
[ "$tests" -eq 0 ] || echo "npm test: tests failed (vitest's report above says which)" >&2
[ "$checks" -eq 0 ] || echo "npm test: the linters or the type check failed (their output above says why)" >&2
[ "$checks" -eq 0 ] && echo "npm test: lint and type check passed"
exit $(( tests != 0 || checks != 0 ))
