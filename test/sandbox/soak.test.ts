import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withSoak } from '@escalator/github-sandbox/launch';
import { describe, expect, it } from 'vitest';

const example = join(import.meta.dirname, '../../examples/gitops-repo');

describe('npm run sandbox -- --soak', () => {
  it('seeds a copy whose soaks are the given duration, every other byte unchanged, and leaves the folder alone', () => {
    const original = readFileSync(join(example, '.github/escalator.yml'), 'utf8');
    const copy = withSoak(example, '30s');
    try {
      const seeded = readFileSync(join(copy.dir, '.github/escalator.yml'), 'utf8');
      expect(seeded).toBe(
        original.replace('    soak: 10m\n', '    soak: 30s\n').replace('    soak: 1h\n', '    soak: 30s\n'),
      );
      expect(seeded).not.toBe(original);
      expect(readFileSync(join(copy.dir, 'apps/hello/overlays/dev/kustomization.yaml'), 'utf8')).toBe(
        readFileSync(join(example, 'apps/hello/overlays/dev/kustomization.yaml'), 'utf8'),
      );
    } finally {
      copy.remove();
    }
    expect(existsSync(copy.dir)).toBe(false);
    expect(readFileSync(join(example, '.github/escalator.yml'), 'utf8')).toBe(original);
  });
});
