import { createComment, loadAccess, loadBranch, loadPull } from '../../adapters/github/repo.js';
import { withWritePriority } from '../../adapters/github/write-budget.js';
import { commandRefusals } from '../../observability/metrics.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { ConfigError } from '../../observability/errors.js';
import {
  planPromotion,
  renderPlanReply,
  type PlannedPromotion,
  type PromotionInput,
} from '../../planners/promotion-plan.js';
import { carriedConfig, decideGates, loadEnvFiles } from '../shared/promotion-inputs.js';
import { rollbackGates } from '../shared/rollback-run.js';
import { commandHelp, parseCommand, type Command } from '../../planners/commands.js';
import { code, escapeText } from '../../planners/markdown.js';
import { editSettingsFrom } from '../../planners/image-edit/index.js';
import {
  describeFreeze,
  describeWhoMayLift,
  freezesInForce,
  mayLiftFreeze,
  planUnfreeze,
  type Freeze,
  type FreezeActor,
} from '../../planners/freeze.js';
import { parseMarker } from '../../planners/pull-marker.js';
import type { CommandJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import { loadConfigCarry, withConfig, type AppConfigCarry } from '../shared/config-inputs.js';
import { blockedReason, pullText } from '../../planners/config-carry.js';
import type { JobDeps } from '../shared/deps.js';
import { refreshDashboard } from '../shared/dashboard-refresh.js';
import { isEscalatorPull } from '../shared/living-pull.js';
import { enqueueDiff, enqueuePromote } from '../../queue/enqueue.js';

const writers = new Set(['admin', 'maintain', 'write']);

/** A refused author hears why once per repository within this time. */
const REFUSAL_MEMORY_MS = 24 * 60 * 60 * 1000;

/**
 * Replies to people without write access, per installation in any hour. Anyone who can comment can
 * ask for one, so they are routine writes (never the share of the write budget kept for people)
 * and few: a real person trying a command they may not run is rare, and 10 answers each of them
 * in a busy hour, while a flood of issues and accounts spends at most 10 of the 383 routine writes
 * an hour of the default budget (2%), where it used to spend them all, and the people's share with
 * them. Beyond it, a refusal is a log line and `escalator_command_refusals_total{outcome="capped"}`.
 */
export const REFUSAL_REPLIES_PER_HOUR = 10;

/**
 * Answer one `/escalator …` comment:
 * 1. parse it (not a command: nothing)
 * 2. ignore bots, and check through the API that the author may write to the repository, before
 *    anything is answered: a malformed or unknown command from someone without write access gets
 *    no answer at all (anyone who can comment must not be able to make the bot comment); a
 *    well-formed one gets a reply saying why it was refused, once per author and repository a day
 *    and at most `REFUSAL_REPLIES_PER_HOUR` per installation, written as routine work
 * 3. a malformed command from a writer: a reply saying what is wrong, with the help
 * 4. act — hold/release (and re-check open promotions), promote, rollback, plan, help
 * 5. reply with what was done
 */
export async function processCommandJob(
  deps: JobDeps,
  data: CommandJob,
  { log, job }: ProcessorContext,
): Promise<string> {
  const parsed = parseCommand(data.body);
  if (parsed === null) return 'not a command';
  // Intake drops comments of users of type Bot; a login ending in [bot] is a GitHub App all the same.
  if (data.author.endsWith('[bot]')) {
    log.debug({ author: data.author }, 'Command ignored: written by a bot');
    return 'ignored: written by a bot';
  }
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const reply = async (text: string): Promise<string> => {
    await createComment(octokit, id, data.issueNumber, text);
    return text;
  };

  const access = await accessOf(deps, data);
  const { permission } = access;
  if (!writers.has(permission)) {
    if (!parsed.ok) {
      log.debug(
        { author: data.author, permission },
        'Command ignored: malformed, from an author without write permission',
      );
      return 'ignored: malformed command without write permission';
    }
    const admission = await deps.store.refusals.admit(
      { installationId: data.installationId, ...id },
      data.author,
      job.id ?? `${data.issueNumber}-${data.author}-${data.body.length}`,
      { ttlMs: REFUSAL_MEMORY_MS, perHour: REFUSAL_REPLIES_PER_HOUR },
    );
    if (admission === 'repeated') {
      commandRefusals.inc({ outcome: 'repeated' });
      log.debug(
        { author: data.author, permission },
        'Command ignored: this author was refused in this repository today',
      );
      return 'ignored: refused in this repository today';
    }
    if (admission === 'capped') {
      commandRefusals.inc({ outcome: 'capped' });
      log.warn(
        { author: data.author, permission, command: parsed.command.name, perHour: REFUSAL_REPLIES_PER_HOUR },
        'Command refused without a reply: this installation answered as many commands from people without write access as it does in an hour (a flood of comments?); the next reply waits until the hour has room',
      );
      return `ignored: over the cap of replies to people without write access (${REFUSAL_REPLIES_PER_HOUR} an hour)`;
    }
    log.info({ author: data.author, permission, command: parsed.command.name }, 'Command refused: no write permission');
    // Anyone who can comment can ask for this write: routine work, never the share kept for people.
    const text = await withWritePriority('routine', () =>
      reply(
        `@${data.author} Escalator commands need write access to ${escapeText(`${data.owner}/${data.repo}`)}; yours is ${code(permission)}. Ask a maintainer to run it.`,
      ),
    );
    commandRefusals.inc({ outcome: 'replied' });
    return text;
  }
  if (!parsed.ok)
    return reply(`Escalator could not read that command: ${escapeText(parsed.message)}.\n\n${commandHelp}`);
  const { command } = parsed;
  if (command.name === 'help') return reply(commandHelp);

  const index = await deps.store.subscriptions.loadRepo(data.owner, data.repo);
  if (!index?.config)
    return reply(
      'Escalator has no valid `.github/escalator.yml` for this repository yet; fix it on the default branch first.',
    );
  const config = index.config;
  const appsOf = (name: string, app?: string): string[] =>
    app ? [app] : [...new Set(index.files.filter((f) => f.environment === name).map((f) => f.app))];
  /** One promotion job per app (one for a grouped environment); the job replies with what it did. */
  const promoteAll = async (
    name: string,
    reason: 'command' | 'hold' | 'rollback' | 'freeze',
    options: { app?: string | undefined; replyTo?: number; skipSoak?: boolean } = {},
  ): Promise<number> => {
    const target = config.environments.find((e) => e.name === name);
    if (!target || target.from === 'registry') return 0;
    const apps = target.group ? [''] : appsOf(target.from, options.app);
    for (const a of apps)
      await enqueuePromote(
        deps.producer,
        {
          installationId: data.installationId,
          owner: data.owner,
          repo: data.repo,
          environment: name,
          app: a,
          reason,
          requestedBy: data.author,
          ...(options.replyTo ? { replyTo: options.replyTo } : {}),
          ...(options.skipSoak ? { skipSoak: true } : {}),
        },
        `${data.issueNumber}-${deps.now().getTime()}`,
      );
    return apps.length;
  };

  if (command.name === 'freeze' || command.name === 'unfreeze') {
    const answer = await freezeCommand(deps, data, index, command, {
      login: data.author,
      maintainer: access.maintainer,
    });
    // Open promotion pull requests into each environment concerned get their freeze check again; none is opened.
    for (const name of answer.environments) await promoteAll(name, 'freeze');
    await refreshDashboard(deps, data, { index });
    return reply(answer.text);
  }
  const environment =
    command.name === 'plan' || command.name === 'diff' ? undefined : await environmentOf(deps, command, data);
  const env = environment ? config.environments.find((e) => e.name === environment) : undefined;
  if (command.name !== 'plan' && command.name !== 'diff' && !env) {
    return reply(
      environment
        ? `There is no environment ${code(environment)} in \`.github/escalator.yml\` (known: ${config.environments.map((e) => code(e.name)).join(', ')}).`
        : 'Name the environment: `/escalator ' + command.name + ' <env> [app]`.',
    );
  }
  switch (command.name) {
    case 'hold':
    case 'release': {
      await deps.store.holds.setHold(
        index,
        env!.name,
        command.app ?? '',
        command.name === 'hold' ? `@${data.author}` : null,
      );
      // Open promotion pull requests into the environment get their hold check again; none is opened.
      await promoteAll(env!.name, 'hold', { app: command.app });
      await refreshDashboard(deps, data, { index });
      return reply(
        command.name === 'hold'
          ? `Promotion into **${escapeText(env!.name)}**${command.app ? ` for ${code(command.app)}` : ''} is on hold (by @${data.author}): an open promotion pull request gets a failing \`escalator/hold\` check, and none merges until \`/escalator release\`.`
          : `Hold on **${escapeText(env!.name)}**${command.app ? ` for ${code(command.app)}` : ''} released.`,
      );
    }
    case 'promote':
    case 'rollback': {
      if (env!.from === 'registry')
        return reply(
          `**${escapeText(env!.name)}** takes images from the registry; promotions go into environments with \`from: <env>\`.`,
        );
      const frozen = freezesInForce(await deps.store.freezes.loadFreezes(index), env!.name, deps.now().getTime());
      if (command.name === 'promote' && frozen.length > 0)
        return reply(
          `Not promoting into **${escapeText(env!.name)}**: ${escapeText(frozen.map(describeFreeze).join('; '))}. Comment \`/escalator unfreeze ${frozen.some((f) => f.scope === '*') ? 'all' : escapeText(env!.name)}\` first; \`/escalator rollback\` stays allowed during a freeze.`,
        );
      if (command.now && env!.soak === '0s')
        return reply(
          `**${escapeText(env!.name)}** has no soak to skip; \`/escalator promote ${escapeText(env!.name)}\` promotes at once.`,
        );
      const jobs = await promoteAll(env!.name, command.name === 'promote' ? 'command' : 'rollback', {
        app: command.app,
        replyTo: data.issueNumber,
        ...(command.now ? { skipSoak: true } : {}),
      });
      if (jobs === 0)
        return reply(
          `Nothing to ${command.name === 'promote' ? 'promote into' : 'roll back in'} **${escapeText(env!.name)}**${command.app ? ` for ${code(command.app)}` : ''}: ${command.app ? `${code(command.app)} has no files in ${escapeText(env!.from)}` : `no app has files in ${escapeText(env!.from)}`}.`,
        );
      // Each promotion job replies here with its pull request, or why there is none.
      log.info(
        { environment: env!.name, app: command.app, jobs },
        'Promotion requested; its jobs reply with the outcome',
      );
      return `${command.name} ${env!.name}: ${jobs} job${jobs === 1 ? '' : 's'}, each replies`;
    }
    case 'plan':
      return reply(renderPlanReply(await planAll(deps, index, octokit, id)));
    case 'diff': {
      if (!data.isPull) return reply('`/escalator diff` works on pull requests.');
      const pull = await loadPull(octokit, id, data.issueNumber);
      await enqueueDiff(
        deps.producer,
        {
          installationId: data.installationId,
          owner: data.owner,
          repo: data.repo,
          number: data.issueNumber,
          headSha: pull.head.sha,
          reason: 'command',
        },
        `${pull.head.sha}-command-${deps.now().getTime()}`,
      );
      return reply(
        `Rendering the diff of ${code(pull.head.sha.slice(0, 7))} again; the comment above updates in place.`,
      );
    }
  }
}

/**
 * `/escalator freeze …` and `/escalator unfreeze …`: record or lift the freeze and say what it
 * covers. Which environments' open promotions must be checked again comes back with the text.
 */
async function freezeCommand(
  deps: JobDeps,
  data: CommandJob,
  index: RepoIndex,
  command: Extract<Command, { name: 'freeze' | 'unfreeze' }>,
  actor: FreezeActor,
): Promise<{ text: string; environments: string[] }> {
  const config = index.config!;
  const named = (command.name === 'freeze' ? command.request.environment : command.environment) ?? 'all';
  const all = named === 'all';
  const promoted = config.environments.filter((e) => e.from !== 'registry').map((e) => e.name);
  if (!all && !config.environments.some((e) => e.name === named))
    return {
      text: `There is no environment ${code(named)} in \`.github/escalator.yml\` (known: ${config.environments.map((e) => code(e.name)).join(', ')}); write \`/escalator ${command.name} all\` for the whole repository.`,
      environments: [],
    };
  const where = all ? 'the whole repository' : `**${escapeText(named)}**`;
  const now = deps.now().getTime();
  const repository = `${data.owner}/${data.repo}`;
  if (command.name === 'unfreeze') {
    const scope = all ? '*' : named;
    const { lift, kept } = planUnfreeze(await deps.store.freezes.loadFreezes(index, now), { scope, all }, actor, now);
    if (lift.length === 0 && kept.length === 0)
      return { text: `Nothing to unfreeze: ${where} was not frozen.`, environments: [] };
    if (lift.length === 0)
      return {
        text: `@${data.author} Not unfrozen: ${escapeText(kept.map(describeFreeze).join('; '))}. ${escapeText(describeWhoMayLift(kept, repository))}`,
        environments: [],
      };
    const lifted = await deps.store.freezes.liftFreezes(index, lift);
    if (lifted.length === 0) return { text: `Nothing to unfreeze: ${where} was not frozen.`, environments: [] };
    const left = all ? kept : freezesInForce(await deps.store.freezes.loadFreezes(index, now), named, now);
    const liftedText = `${kept.length > 0 ? 'Freezes lifted' : `Freeze lifted on ${where}`} (by @${data.author}): ${escapeText(lifted.map(describeFreeze).join('; '))}.`;
    const leftText =
      left.length === 0
        ? ' Open promotion pull requests are checked again and merge as their other gates allow.'
        : ` ${all ? 'Still frozen' : `${escapeText(named)} stays frozen`}: ${escapeText(left.map(describeFreeze).join('; '))}.${kept.length > 0 ? ` ${escapeText(describeWhoMayLift(kept, repository))}` : ''}`;
    return { text: liftedText + leftText, environments: all ? promoted : promoted.filter((name) => name === named) };
  }
  const { request } = command;
  // Replacing a freeze could shorten it: only who may lift it may replace it.
  const replaced = (await deps.store.freezes.loadFreezes(index, now)).find((f) => f.scope === (all ? '*' : named));
  if (replaced && !mayLiftFreeze(replaced, actor, now))
    return {
      text: `@${data.author} Not frozen again: ${escapeText(describeFreeze(replaced))}. ${escapeText(describeWhoMayLift([replaced], repository))}`,
      environments: [],
    };
  const until = request.until ?? (request.forMs ? new Date(now + request.forMs).toISOString() : undefined);
  if (until && Date.parse(until) <= now)
    return {
      text: `Not frozen: ${escapeText(until)} has already passed; give a time to come, like \`until ${new Date(now + 86_400_000).toISOString().slice(0, 10)}\` or \`for 2d\`.`,
      environments: [],
    };
  const freeze: Freeze = {
    scope: all ? '*' : named,
    by: `@${data.author}`,
    at: new Date(now).toISOString(),
    ...(request.reason ? { reason: request.reason } : {}),
    ...(until ? { until } : {}),
  };
  await deps.store.freezes.setFreeze(index, freeze);
  return {
    text: `Frozen: ${escapeText(describeFreeze(freeze))}. Promotion pull requests ${all ? '' : `into ${escapeText(named)} `}get a failing \`escalator/freeze\` check, nothing merges automatically and \`/escalator promote\` is refused until ${until ? `it ends or ` : ''}\`/escalator unfreeze ${all ? 'all' : escapeText(named)}\`, which only you or someone with maintain or admin permission may write. Rollbacks stay allowed.`,
    environments: all ? promoted : promoted.filter((name) => name === named),
  };
}

/**
 * A command that failed for good (GitHub kept failing, say) is answered once with the reason, so a
 * writer's comment never ends in silence. Only for writers' commands: the permission check comes
 * first, and a comment by anyone else must not make the bot comment.
 */
export async function reportCommandFailure(deps: JobDeps, data: CommandJob, error: Error): Promise<void> {
  const parsed = parseCommand(data.body);
  if (!parsed?.ok || data.author.endsWith('[bot]')) return;
  if (!writers.has((await accessOf(deps, data)).permission)) return;
  await createComment(
    deps.github.forInstallation(data.installationId),
    { owner: data.owner, repo: data.repo },
    data.issueNumber,
    `@${data.author} Escalator could not finish \`/escalator ${parsed.command.name}\`: ${escapeText(error.message)}. Comment the command again to retry; if it keeps failing, the operator's log has the details.`,
  );
}

function accessOf(deps: JobDeps, data: CommandJob): Promise<{ permission: string; maintainer: boolean }> {
  return loadAccess(
    deps.github.forInstallation(data.installationId),
    { owner: data.owner, repo: data.repo },
    data.author,
  );
}

/**
 * The environment a command names, or the one of Escalator's own pull request it was written on.
 * The marker is read from the pull request as GitHub holds it now, and believed only when the pull
 * request is one of Escalator's living pull requests (see `isEscalatorPull`): anyone can paste a
 * marker into the body of their own pull request, and a writer's command must not act on it.
 */
async function environmentOf(deps: JobDeps, command: Command, data: CommandJob): Promise<string | undefined> {
  if ('environment' in command && command.environment) return command.environment;
  if (!data.isPull) return undefined;
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const pull = await loadPull(octokit, id, data.issueNumber);
  const own = await isEscalatorPull(
    { octokit, store: deps.store, id },
    {
      number: pull.number,
      headRef: pull.head.ref,
      headSha: pull.head.sha,
      headRepo: pull.head.repo?.full_name ?? null,
      user: pull.user ? { login: pull.user.login, type: pull.user.type } : null,
    },
  );
  return own ? parseMarker(pull.body)?.environment : undefined;
}

/** Every promotion that would change something now, planned from the default branch as the promotion job plans it (no writes). */
async function planAll(
  deps: JobDeps,
  index: RepoIndex,
  octokit: ReturnType<JobDeps['github']['forInstallation']>,
  id: { owner: string; repo: string },
): Promise<PlannedPromotion[]> {
  const head = await loadBranch(octokit, id, index.defaultBranch);
  if (!head) throw new ConfigError(`the default branch ${index.defaultBranch} of ${id.owner}/${id.repo} is gone`);
  const planned: PlannedPromotion[] = [];
  const now = deps.now().getTime();
  for (const target of index.config?.environments ?? []) {
    if (target.from === 'registry') continue;
    const source = target.from;
    const appsIn = (name: string): string[] =>
      [...new Set(index.files.filter((f) => f.environment === name).map((f) => f.app))].sort();
    // Configuration changes waiting for the target count as apps to plan (docs/configuration.md).
    const waiting = await deps.store.configChanges.list(index, target.name);
    const withWaiting = [...new Set([...appsIn(source), ...waiting.map((entry) => entry.app)])].sort();
    const groups = target.group
      ? [{ app: '', apps: [...new Set([...withWaiting, ...appsIn(target.name)])].sort() }]
      : withWaiting.map((app) => ({ app, apps: [app] }));
    const files = { octokit, index, blobs: deps.store.blobs };
    for (const group of groups) {
      const entries: PromotionInput['apps'] = [];
      const carries: AppConfigCarry[] = [];
      for (const app of group.apps) {
        const carry = await loadConfigCarry(deps, files, target, app, head.sha, waiting);
        if (carry) carries.push(carry);
        entries.push({
          app,
          sourceFiles: await loadEnvFiles(files, source, app, head.sha),
          targetFiles: withConfig(await loadEnvFiles(files, target.name, app, head.sha), carry),
        });
      }
      const plan = planPromotion({
        source,
        target: target.name,
        app: group.app,
        apps: entries,
        editing: editSettingsFrom(index.config?.images ?? []),
      });
      const config = carries.flatMap((carry) =>
        carry.changes.map((carried) => ({
          app: carry.app,
          pull: pullText(carried.change.pull),
          outcome: carried.outcome,
          why: carried.outcome === 'blocked' ? blockedReason(target.name, source, carried) : [],
        })),
      );
      if (plan.rows.length === 0 && plan.refused.length === 0 && plan.missing.length === 0 && config.length === 0)
        continue;
      const { gates } = await decideGates(deps, index, target, group.app, entries, {
        rollback: false,
        now,
        carried: carriedConfig(carries),
      });
      // What a rollback holds back is not proposed on Escalator's own (src/planners/rollback.ts).
      const held = await rollbackGates(deps, index, target.name, source, group.apps);
      planned.push({
        source,
        target: target.name,
        app: group.app,
        plan,
        gates: [...gates, ...held],
        ...(config.length > 0 ? { config } : {}),
      });
    }
  }
  return planned;
}
