#!/usr/bin/env node
/**
 * `npm run build` (and `npm ci`'s `prepare`): src/ → dist/, one JavaScript module per TypeScript
 * module, as `tsc -p tsconfig.build.json` emits them (same files, ES2022, ES modules, source maps),
 * by esbuild: ~0.5 s instead of tsc's ~17 s on a two-core machine. It strips types and checks
 * none: `npm run typecheck` (part of `npm test`) checks src/ with the tests, and the Dockerfile
 * runs `tsc -p tsconfig.build.json --noEmit` before it builds. The files compiled are the ones
 * tsconfig.build.json names (read through TypeScript's own parser, so its `exclude` holds here).
 */
import { rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const configPath = join(root, 'tsconfig.build.json');
const read = ts.readConfigFile(configPath, ts.sys.readFile);
if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
const config = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
if (config.errors.length > 0)
  throw new Error(config.errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')).join('\n'));
const { outDir, rootDir } = config.options;
if (!outDir || !rootDir) throw new Error('tsconfig.build.json must set compilerOptions.outDir and rootDir');

const entryPoints = config.fileNames.filter((file) => !file.endsWith('.d.ts'));
rmSync(outDir, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: outDir,
  outbase: rootDir,
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  sourcemap: true,
  logLevel: 'warning',
});
process.stdout.write(
  `build: ${entryPoints.length} modules of ${relative(root, rootDir)}/ → ${relative(root, outDir)}/\n`,
);
