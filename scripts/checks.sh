#!/usr/bin/env bash
# `npm test`'s first step: the linters and the type checker side by side. Each is one thread, and
# the machines the tests run on have two cores; one after the other they took ~90 s on an idle
# two-core machine. Fails when either fails, after both have said why.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run --silent lint &
lint=$!
npm run --silent typecheck
typecheck=$?
wait "$lint"
lint=$?
[ "$lint" -eq 0 ] || echo "npm test: the linters failed (npm run lint says why above)" >&2
[ "$typecheck" -eq 0 ] || echo "npm test: the type check failed (npm run typecheck says why above)" >&2
exit $(( lint != 0 || typecheck != 0 ))
