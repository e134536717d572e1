import { readFileSync } from 'node:fs';
import { terminalIo, UsageError, type CliIo, type ExitCode } from './io.js';

export type { CliIo, ExitCode };

/** A command, loaded when it is run or its help asked for: `escalator --help` loads none (no YAML parser, renderer or registry client). */
interface Command {
  summary: string;
  load: () => Promise<{ run: (argv: string[], io: CliIo) => ExitCode | Promise<ExitCode>; help: string }>;
}

const commands: Record<string, Command> = {
  'set-image': {
    summary: 'set an image tag/digest in YAML files, byte for byte',
    load: async () => {
      const { runSetImage, setImageHelp } = await import('./set-image.js');
      return { run: runSetImage, help: setImageHelp };
    },
  },
  diff: {
    summary: 'render and diff a local GitOps repository between two revisions',
    load: async () => {
      const { runDiff, diffHelp } = await import('./diff.js');
      return { run: runDiff, help: diffHelp };
    },
  },
  'validate-config': {
    summary: 'check .github/escalator.yml and print every problem',
    load: async () => {
      const { runValidateConfig, validateConfigHelp } = await import('./validate-config.js');
      return { run: runValidateConfig, help: validateConfigHelp };
    },
  },
  token: {
    summary: 'make a scoped intake token and its ESCALATOR_INTAKE_TOKENS entry',
    load: async () => {
      const { runToken, tokenHelp } = await import('./token.js');
      return { run: runToken, help: tokenHelp };
    },
  },
  'agent-key': {
    summary: "print an owner's agent key for Argo CD and Flux health reports",
    load: async () => {
      const { runAgentKey, agentKeyHelp } = await import('./agent-key.js');
      return { run: (argv, io) => runAgentKey(argv, io), help: agentKeyHelp };
    },
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
    io.stdout(topic && commands[topic] ? `${(await commands[topic].load()).help}\n` : renderHelp());
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
    return await (await command.load()).run(rest, io);
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
