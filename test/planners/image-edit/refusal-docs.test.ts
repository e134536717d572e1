/**
 * Every refusal the editor and `escalator set-image` can print is in docs/troubleshooting.md with
 * what to do: the longest literal run of each message template in the sources (the text between
 * its `${…}` parts) must appear there, so a new message cannot ship undocumented.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const docs = readFileSync(join(ROOT, 'docs/troubleshooting.md'), 'utf8').replace(/\\\|/g, '|');

/** Template literals that are messages: assigned to reason, blocked, dotted, elsewhere, or thrown as a UsageError. */
const MESSAGE =
  /(?:reason: |blocked = |blocked: |dotted = |elsewhere = |UsageError\(|refuse\()\s*[`']((?:[^`'\\]|\\.)*)[`']/g;

function messages(file: string): Array<{ file: string; text: string }> {
  const source = readFileSync(join(ROOT, file), 'utf8');
  return [...source.matchAll(MESSAGE)].map((match) => ({ file, text: match[1] ?? '' }));
}

/** The longest run of literal text in a template (nested templates count as placeholders). */
function longestLiteral(template: string): string {
  let depth = 0;
  let current = '';
  const runs: string[] = [];
  for (let i = 0; i < template.length; i += 1) {
    if (template.startsWith('${', i)) {
      if (depth === 0) runs.push(current);
      current = '';
      depth += 1;
      i += 1;
      continue;
    }
    if (depth > 0) {
      if (template[i] === '{') depth += 1;
      else if (template[i] === '}') depth -= 1;
      continue;
    }
    current += template[i] === '\\' ? (template[++i] ?? '') : template[i];
  }
  runs.push(current);
  return runs.map((run) => run.trim()).sort((a, b) => b.length - a.length)[0] ?? '';
}

const sources = [
  ...readdirSync(join(ROOT, 'src/planners/image-edit'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `src/planners/image-edit/${name}`),
  'src/cli/set-image.ts',
];
const all = sources.flatMap(messages).filter(({ text }) => longestLiteral(text).length >= 12);

describe('docs/troubleshooting.md', () => {
  it('finds the messages to check', () => {
    expect(all.length).toBeGreaterThan(30);
  });

  it.each(all.map((message) => [message.file, longestLiteral(message.text)] as const))(
    '%s: documents "%s"',
    (_file, literal) => {
      expect(docs).toContain(literal);
    },
  );
});
