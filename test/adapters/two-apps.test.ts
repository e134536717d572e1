import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { createLogger } from '../../src/observability/logger.js';

/**
 * Two Apps in one process, each on its own sandbox GitHub, minting installation tokens at the same
 * moment — what two stacks side by side in one test file do (test/e2e/rollback-sticks.test.ts).
 * @octokit/auth-app shares in-flight token requests process-wide by installation id, so when two
 * simulators handed out the same installation id, one App got the other's token and its requests
 * failed with 401 Bad credentials for six seconds of retries (a rollback that never merged in
 * time). The sandbox now numbers installations across the process, as GitHub does across GitHub.
 */
describe('two Apps in one process (two sandbox GitHubs)', () => {
  const sims: Simulator[] = [];
  const installations: number[] = [];

  beforeAll(async () => {
    for (const name of ['left', 'right']) {
      const sim = await startSimulator();
      sims.push(sim);
      const created = await new SandboxClient(sim.url, sim.user.token).createRepo({
        owner: 'developer',
        name,
        files: { 'app.txt': `${name}\n` },
      });
      installations.push(created.installation_id!);
    }
  });
  afterAll(async () => {
    for (const sim of sims) await sim.close();
  });

  it('number their installations apart', () => {
    expect(new Set(installations).size).toBe(2);
  });

  it('each read their own repository with tokens minted at the same moment', async () => {
    const log = createLogger({ level: 'silent' });
    for (let round = 0; round < 3; round++) {
      // Fresh clients each round: every round mints both tokens concurrently.
      const reads = sims.map((sim, i) =>
        new GitHubClients({ appId: sim.app.id, privateKey: sim.app.privateKey, baseUrl: sim.apiUrl, log })
          .forInstallation(installations[i]!)
          .rest.repos.get({ owner: 'developer', repo: i === 0 ? 'left' : 'right' }),
      );
      const answers = await Promise.all(reads);
      expect(answers.map((answer) => answer.data.name)).toEqual(['left', 'right']);
    }
  });
});
