import { agentKey } from '../intake/agent-routes.js';
import { parseArgs, UsageError, type CliIo, type ExitCode } from './io.js';

export const agentKeyHelp = `Usage: escalator agent-key <owner>

Print the agent key of one GitHub owner (an organisation or user login): the token its Argo CD
Notifications send (Authorization: Bearer <key>) and the secret its Flux generic-hmac Provider
signs with. It is derived from ESCALATOR_AGENT_TOKEN, which must be set in the environment as on
the web role; a report authenticated with it is recorded only in that owner's repositories.
See docs/health.md.

Exit status: 0 printed, 2 bad arguments or ESCALATOR_AGENT_TOKEN not set.`;

export function runAgentKey(argv: string[], io: CliIo, env: NodeJS.ProcessEnv = process.env): ExitCode {
  const args = parseArgs(argv, { flags: ['help'], options: [] });
  if (args.flags.has('help')) {
    io.stdout(`${agentKeyHelp}\n`);
    return 0;
  }
  const [owner, extra] = args.positionals;
  if (!owner || extra !== undefined)
    throw new UsageError('name exactly one GitHub owner, such as escalator agent-key acme');
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(owner))
    throw new UsageError(`"${owner.slice(0, 60)}" is not a GitHub login; write the organisation or user name`);
  const secret = env.ESCALATOR_AGENT_TOKEN;
  if (!secret)
    throw new UsageError(
      'ESCALATOR_AGENT_TOKEN is not set; run this where the web role runs, or export the same value first',
    );
  io.stdout(`${agentKey(secret, owner)}\n`);
  return 0;
}
