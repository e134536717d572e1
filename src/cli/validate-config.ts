import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { configPath, formatProblems, parseRepoConfig } from '../config/repo-config.js';
import { parseArgs, terminalJson, UsageError, type CliIo, type ExitCode } from './io.js';

export const validateConfigHelp = `Usage: escalator validate-config [file] [--json]

Check an Escalator repository configuration (default .github/escalator.yml) against its schema.
Every problem is printed as file:line:col: message (hint). Editors can validate the file as you
type with schema/escalator.schema.json.

  --json   print {ok, problems:[{file,line,col,path,message,hint}]}

Exit status: 0 valid, 2 problems found or bad arguments, 1 unexpected failure.`;

export function runValidateConfig(argv: string[], io: CliIo): ExitCode {
  const args = parseArgs(argv, { flags: ['json', 'help'] });
  if (args.flags.has('help')) {
    io.stdout(`${validateConfigHelp}\n`);
    return 0;
  }
  if (args.positionals.length > 1) throw new UsageError('validate-config takes one file');
  const file = args.positionals[0] ?? configPath;
  const absolute = isAbsolute(file) ? file : join(io.cwd, file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); pass the path of your .github/escalator.yml`,
    );
  }
  const result = parseRepoConfig(text, file);
  if (args.flags.has('json')) {
    io.stdout(
      `${terminalJson(JSON.stringify(result.ok ? { ok: true, problems: [] } : { ok: false, problems: result.problems }, null, 2))}\n`,
    );
  } else if (result.ok) {
    io.stdout(
      `${file}: valid (${result.config.environments.length} environment${result.config.environments.length === 1 ? '' : 's'})\n`,
    );
  } else {
    io.stderr(`${formatProblems(result.problems)}\n`);
  }
  return result.ok ? 0 : 2;
}
