import { readFileSync } from 'node:fs';
import { agentKeyHelp, runAgentKey } from './agent-key.js';
import { diffHelp, runDiff } from './diff.js';
import { runSetImage, setImageHelp } from './set-image.js';
import { runToken, tokenHelp } from './token.js';
import { runValidateConfig, validateConfigHelp } from './validate-config.js';
import { terminalIo, UsageError, type CliIo, type ExitCode } from './io.js';

export type { CliIo, ExitCode };

const commands: Record<
  string,
  { run: (argv: string[], io: CliIo) => ExitCode | Promise<ExitCode>; help: string; summary: string }
> = {
  'set-image': {
    run: runSetImage,
    help: setImageHelp,
    summary: 'set an image tag/digest in YAML files, byte for byte',
  },
  diff: { run: runDiff, help: diffHelp, summary: 'render and diff a local GitOps repository between two revisions' },
  'validate-config': {
    run: runValidateConfig,
    help: validateConfigHelp,
    summary: 'check .github/escalator.yml and print every problem',
  },
  token: {
    run: runToken,
    help: tokenHelp,
    summary: 'make a scoped intake token and its ESCALATOR_INTAKE_TOKENS entry',
  },
  'agent-key': {
    run: (argv, io) => runAgentKey(argv, io),
    help: agentKeyHelp,
    summary: "print an owner's agent key for Argo CD and Flux health reports",
  },
};

export function renderHelp(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'Usage: escalator <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    "Run `escalator <command> --help` for a command's options.",
    'The GitHub App itself starts with `npm start`; try everything locally with `npm run sandbox`.',
    '',
  ].join('\n');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Run one CLI invocation; never exits the process (src/main/cli.ts does). Everything printed goes
 * through `terminalIo`: file names, YAML values and registry text reach stdout and stderr without
 * the control sequences they may carry.
 */
export async function runCli(argv: string[], rawIo: CliIo): Promise<ExitCode> {
  const io = terminalIo(rawIo);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    io.stdout(topic && commands[topic] ? `${commands[topic].help}\n` : renderHelp());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${version()}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`escalator: unknown command "${name}"\n\n${renderHelp()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`escalator ${name}: ${error.message}\nRun \`escalator ${name} --help\` for usage.\n`);
      return 2;
    }
    io.stderr(
      `escalator ${name}: unexpected failure: ${(error as Error).stack ?? String(error)}\nPlease report this with the command you ran.\n`,
    );
    return 1;
  }
}
