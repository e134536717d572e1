import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jobKinds, queueNames } from '../../src/jobs/kinds.js';
import * as producer from '../../src/queue/enqueue.js';

const jobsDir = fileURLToPath(new URL('../../src/jobs/', import.meta.url));

describe('the table of job kinds', () => {
  it('has one descriptor per job folder, named as its folder', () => {
    const folders = readdirSync(jobsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'shared')
      .map((entry) => entry.name)
      .sort();
    expect([...queueNames].sort()).toEqual(folders);
  });

  it('names each queue once, without the `:` BullMQ keeps for its keys', () => {
    expect(new Set(queueNames).size).toBe(jobKinds.length);
    for (const name of queueNames) expect(name).toMatch(/^[a-z][a-z-]*$/);
  });

  it('lets intake and the jobs reach every way of enqueueing a kind through src/queue/enqueue.ts', () => {
    for (const kind of jobKinds)
      for (const [name, enqueue] of Object.entries(kind.enqueue))
        expect(producer[name as keyof typeof producer], `${kind.name}: ${name}`).toBe(enqueue);
  });
});
