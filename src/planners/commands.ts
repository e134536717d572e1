/**
 * `/escalator <command> [args]` in a pull request or issue comment. The first line that starts
 * with `/escalator` counts; quoted replies (`> /escalator …`) and code blocks do not.
 */
export type Command =
  | { name: 'hold'; environment?: string; app?: string }
  | { name: 'release'; environment?: string; app?: string }
  | { name: 'promote'; environment: string; app?: string }
  | { name: 'rollback'; environment: string; app?: string }
  | { name: 'plan' }
  | { name: 'diff' }
  | { name: 'help' };

export type ParsedCommand = { ok: true; command: Command } | { ok: false; message: string } | null;

export const commandHelp = [
  '`/escalator hold [env] [app]` — freeze promotion into an environment (default: this PR\'s)',
  '`/escalator release [env] [app]` — lift a hold',
  '`/escalator promote <env> [app]` — open or refresh the promotion into `env` now',
  '`/escalator rollback <env> [app]` — open a PR restoring the versions `env` ran before',
  '`/escalator plan` — answer with the promotion plan, changing nothing',
  '`/escalator diff` — render the manifest diff of this PR again',
].join('\n');

const word = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export function parseCommand(body: string): ParsedCommand {
  let inFence = false;
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('```') || line.startsWith('~~~')) inFence = !inFence;
    if (inFence || !/^\/escalator(\s|$)/.test(line)) continue;
    const [, name = 'help', ...args] = line.split(/\s+/);
    const shorten = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
    if (args.some((arg) => !word.test(arg))) return { ok: false, message: `"${shorten(args.find((arg) => !word.test(arg)) as string)}" is not an environment or app name` };
    switch (name) {
      case 'hold':
      case 'release':
        if (args.length > 2) return { ok: false, message: `/escalator ${name} takes at most an environment and an app` };
        return { ok: true, command: { name, ...(args[0] ? { environment: args[0] } : {}), ...(args[1] ? { app: args[1] } : {}) } };
      case 'promote':
      case 'rollback':
        if (args.length < 1 || args.length > 2) return { ok: false, message: `/escalator ${name} needs an environment, and optionally an app: /escalator ${name} <env> [app]` };
        return { ok: true, command: { name, environment: args[0] as string, ...(args[1] ? { app: args[1] } : {}) } };
      case 'plan':
      case 'diff':
      case 'help':
        return { ok: true, command: { name } };
      default:
        return { ok: false, message: `unknown command "${shorten(name)}"` };
    }
  }
  return null;
}
