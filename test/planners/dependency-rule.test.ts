import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The pure core does not depend on the configuration (issue 14 §2): `src/config/` may import
 * `src/planners/` (the path-pattern and tag-policy compilers live there), never the other way,
 * so the two cannot form a cycle. Type-only imports count too.
 */

const root = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module specifier of `import … from`, `export … from` and `import(…)`. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.[^'"]*)['"]/g)].map(
    (match) => match[1] as string,
  );
}

describe('the dependency rule', () => {
  for (const folder of ['src/planners', 'src/events']) {
    it(`${folder} imports nothing from src/config`, () => {
      const offending = sources(join(root, folder)).flatMap((file) =>
        specifiers(readFileSync(file, 'utf8'))
          .filter(
            (specifier) => relative(join(root, 'src/config'), resolve(dirname(file), specifier)).split('/')[0] !== '..',
          )
          .map((specifier) => `${relative(root, file)} imports ${specifier}`),
      );
      expect(offending).toEqual([]);
    });
  }
});
