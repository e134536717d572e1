/** What a CLI command may touch, passed in so tests drive commands in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

/** Exit codes: 0 all good, 2 something refused or the arguments are wrong, 1 unexpected failure. */
export type ExitCode = 0 | 1 | 2;

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ParsedArgs {
  positionals: string[];
  flags: Set<string>;
  options: Map<string, string>;
}

/** A small strict parser: unknown flags are usage errors, never ignored. */
export function parseArgs(argv: string[], spec: { flags: string[]; options?: string[] }): ParsedArgs {
  const parsed: ParsedArgs = { positionals: [], flags: new Set(), options: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      parsed.positionals.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (spec.flags.includes(name) && inline === undefined) parsed.flags.add(name);
    else if (spec.options?.includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      parsed.options.set(name, value);
    } else throw new UsageError(`unknown option --${name}`);
  }
  return parsed;
}
