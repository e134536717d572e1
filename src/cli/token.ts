import { randomBytes } from 'node:crypto';
import {
  headerTokenSources,
  IntakeTokenConfig,
  isPathSource,
  pathTokenSources,
  tokenHash,
} from '../intake/credentials.js';
import { parseArgs, UsageError, type CliIo, type ExitCode } from './io.js';

export const tokenHelp = `Usage: escalator token --name <name> --owners <login>[,<login>…] [--images <prefix>,…] [--sources <source>,…] [--yaml]

Make a new scoped intake token: a random secret for the sender, and the entry for
ESCALATOR_INTAKE_TOKENS (or ESCALATOR_INTAKE_TOKENS_FILE) that holds only its SHA-256. Events
sent with the token may change only repositories of the listed GitHub owners.

  --name      unique name of the entry, shown in logs (letters, digits, ".", "_", "-")
  --owners    GitHub organisation or user logins whose repositories the token may change
  --images    image name prefixes it may announce, such as ghcr.io/acme/ (default: every image)
  --sources   routes it is accepted on: ${headerTokenSources.join(', ')} (default: all of
              these), or exactly one of ${pathTokenSources.join(', ')} for a path token (/registry/<source>/<token>)
  --yaml      print the entry as a YAML list item instead of JSON

The token is printed once and stored nowhere; give it to the sender and add the entry to the
list. See docs/registries.md.

Exit status: 0 printed, 2 bad arguments.`;

export function runToken(argv: string[], io: CliIo): ExitCode {
  const args = parseArgs(argv, { flags: ['help', 'yaml'], options: ['name', 'owners', 'images', 'sources'] });
  if (args.flags.has('help')) {
    io.stdout(`${tokenHelp}\n`);
    return 0;
  }
  if (args.positionals.length > 0)
    throw new UsageError(
      `unexpected argument "${args.positionals[0]}"; every value goes after its option, such as --owners acme`,
    );
  const list = (name: string) =>
    args.options
      .get(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const token = `esc_${randomBytes(32).toString('base64url')}`;
  const images = list('images');
  const sources = list('sources');
  const entry = {
    name: args.options.get('name') ?? '',
    sha256: tokenHash(token),
    owners: list('owners') ?? [],
    ...(images ? { images } : {}),
    ...(sources ? { sources } : {}),
  };
  const checked = IntakeTokenConfig.safeParse(entry);
  if (!checked.success) {
    const option = (field: string) => (field === 'sha256' ? 'sha256' : `--${field}`);
    throw new UsageError(
      checked.error.issues.map((issue) => `${option(String(issue.path[0] ?? 'name'))}: ${issue.message}`).join('; '),
    );
  }
  const line = args.flags.has('yaml')
    ? `- ${Object.entries(checked.data)
        .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
        .join('\n  ')}`
    : JSON.stringify(checked.data);
  const path = checked.data.sources?.find(isPathSource);
  io.stdout(
    [
      `Token for ${checked.data.name} (shown once, stored nowhere; give it to the sender${path ? `, whose webhook URL is https://<escalator>/registry/${path}/<token>` : ' as Authorization: Bearer <token>'}):`,
      `  ${token}`,
      `Entry to add to ESCALATOR_INTAKE_TOKENS${args.flags.has('yaml') ? '_FILE' : ' (a JSON list)'}; it holds only the token's SHA-256:`,
      line,
      '',
    ].join('\n'),
  );
  return 0;
}
