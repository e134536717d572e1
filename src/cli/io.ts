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

/**
 * Terminal control sequences, 7-bit and 8-bit (ECMA-48): CSI (`ESC [` … final byte), OSC, DCS,
 * SOS, PM and APC strings up to BEL or ST (or to the line's end when unterminated), and any other
 * two-character escape. An OSC 52 sequence writes the clipboard, OSC 8 makes links, CSI moves
 * the cursor and clears the screen: file names, YAML values and registry text carry them.
 */
const escapeSequence =
  // eslint-disable-next-line no-control-regex
  /(?:\x1b\[|\u009b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\x07\x1b\u009c\n]*(?:\x07|\x1b\\|\u009c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
/** What is left that a terminal acts on: C0 except TAB and LF (CR only before LF), DEL, C1. */
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;

/**
 * Text as it may reach a terminal: escape sequences and control characters removed, so text from
 * repositories and registries cannot write the clipboard, forge links or rewrite what was printed.
 * Line feeds, tabs and CRLF line ends stay.
 */
export function terminalText(text: string): string {
  return text.replace(escapeSequence, '').replace(controlCharacter, '');
}

/**
 * JSON text as it may reach a terminal and stay the same JSON: `JSON.stringify` escapes C0
 * already; DEL and C1 (which some terminals take as 8-bit controls) become `\u` escapes too.
 * They can only stand inside strings, so the output parses to the exact same values, and
 * `terminalText` finds nothing to remove in it.
 */
export function terminalJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The same io with every write made safe for a terminal (`runCli` hands it to each command). */
export function terminalIo(io: CliIo): CliIo {
  return { ...io, stdout: (text) => io.stdout(terminalText(text)), stderr: (text) => io.stderr(terminalText(text)) };
}
