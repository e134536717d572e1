/**
 * `npm run sandbox`: the whole product on one machine, with only Redis.
 * 1. parse the options
 * 2. start the simulated GitHub, seed the GitOps repository, start Escalator (@escalator/github-sandbox/launch)
 * 3. print `SANDBOX_READY {json}` and the next steps
 * 4. stop everything on Ctrl-C (SIGINT) or SIGTERM, or when Escalator exits
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderNextSteps, runSandbox } from '@escalator/github-sandbox/launch';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const usage = `Usage: npm run sandbox -- [options]

  --repo <dir>             folder seeded as example/gitops (default examples/gitops-repo)
  --github-port <port>     port of the simulated GitHub (default: a free port)
  --app-port <port>        port Escalator listens on (default 3000)
  --registry-token <token> token registries send to Escalator (default: random)
  --app-command <command>  how to start Escalator (default: node dist/main/index.js, or the sources via tsx)
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535)
    fail(`--${name} must be a port number (0-65535), not "${value}".\n\n${usage}`);
  return number;
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      repo: { type: 'string' },
      'github-port': { type: 'string' },
      'app-port': { type: 'string' },
      'registry-token': { type: 'string' },
      'app-command': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${usage}`);
}
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
const appCommand = str('app-command')?.split(' ').filter(Boolean);
try {
  const sandbox = await runSandbox({
    repoDir: resolve(str('repo') ?? resolve(root, 'examples/gitops-repo')),
    githubPort: port(str('github-port'), 0, 'github-port'),
    appPort: port(str('app-port'), 3000, 'app-port'),
    root,
    env: process.env,
    ...(str('registry-token') ? { registryToken: str('registry-token') } : {}),
    ...(appCommand ? { appCommand } : {}),
  });
  process.stdout.write(`SANDBOX_READY ${JSON.stringify(sandbox.ready)}\n${renderNextSteps(sandbox.ready)}`);
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    void sandbox.close().then(() => process.exit(code));
  };
  process.once('SIGINT', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  void sandbox.appExited.then((code) => {
    if (!stopping) process.stderr.write(`Escalator exited (code ${code}); stopping the sandbox.\n`);
    stop(code ?? 1);
  });
} catch (error) {
  fail(`The sandbox could not start: ${(error as Error).message}`);
}
