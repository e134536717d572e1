import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

/** YAML files, and `Kustomization`: kustomize's third accepted name for its file has no extension. */
const yamlFile = /\.ya?ml$/i;
const skippedDirs = new Set(['.git', 'node_modules']);

/**
 * The YAML files under the given paths, sorted. Files named explicitly are always taken;
 * directories are searched recursively, skipping `.git`, `node_modules` and Helm chart `templates/`
 * (Go templates are not YAML until rendered).
 */
export function collectYamlFiles(paths: string[], cwd: string): { files: string[]; missing: string[] } {
  const files: string[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    const absolute = join(cwd, path).startsWith('/') && path.startsWith('/') ? path : join(cwd, path);
    if (!existsSync(absolute)) {
      missing.push(path);
      continue;
    }
    if (statSync(absolute).isDirectory()) walk(absolute, files);
    else files.push(absolute);
  }
  return { files: [...new Set(files)].sort().map((file) => relative(cwd, file) || file), missing };
}

function walk(dir: string, out: string[]): void {
  const entries = readdirSync(dir, { withFileTypes: true });
  const isChart = entries.some((entry) => entry.isFile() && entry.name === 'Chart.yaml');
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (skippedDirs.has(entry.name) || (isChart && entry.name === 'templates')) continue;
      walk(path, out);
    } else if (entry.isFile() && (yamlFile.test(entry.name) || entry.name === 'Kustomization')) out.push(path);
  }
}
