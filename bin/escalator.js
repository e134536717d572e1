#!/usr/bin/env node
// Runs the compiled CLI (npm's `prepare` builds dist/ on `npm ci`).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main/cli.js', import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write(
    'escalator: dist/ is missing. Run `npm ci` (or `npm run build`) in the escalator folder first.\n',
  );
  process.exit(1);
}
await import(compiled.href);
