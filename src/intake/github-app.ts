import type { Probot } from 'probot';
import type { RepoState } from '../adapters/store/repo-state.js';
import {
  normalizeCheckRunEvent,
  normalizeDeploymentStatusEvent,
  normalizeStatusEvent,
  type AgentResult,
} from '../events/agents/index.js';
import { normalizeGithub } from '../events/index.js';
import { agentReports } from '../observability/metrics.js';
import { mapAgentReport } from '../events/agents/health-map.js';
import { enqueueAgentReport } from './agent-routes.js';
import type { Logger } from '../observability/logger.js';
import { escalatorMarker, livingBranchBase } from '../planners/pull-marker.js';
import { actionCommand, DASHBOARD_MARKER, tickedActions } from '../planners/dashboard.js';
import {
  COMMAND_MEMORY_SECONDS,
  enqueueCommand,
  enqueueDashboard,
  enqueueDashboardCommand,
  enqueueDiff,
  enqueueImage,
  enqueueIndex,
} from '../queue/enqueue.js';
import type { Producer } from '../queue/producer.js';

/**
 * The Probot application: GitHub webhook events in, jobs out. Probot has verified the
 * `X-Hub-Signature-256` over the raw body before any handler here runs.
 * Handlers stay tiny — normalize and enqueue — because GitHub aborts a delivery after 10 s. A
 * handler that throws makes Probot answer 500, so GitHub records a failed delivery that can be
 * redelivered: nothing accepted is lost.
 */
export interface GitHubAppDeps {
  log: Logger;
  producer?: Producer;
  store?: RepoState;
  /** This App's id: deployment statuses of the Deployments it created itself are not agent reports. */
  appId?: number | string;
  now?: () => Date;
}

/**
 * `author_association` values of people with a standing in the repository: a writer is always one
 * of them (an organization member, an outside collaborator or the owner); `CONTRIBUTOR`,
 * `FIRST_TIMER`, `FIRST_TIME_CONTRIBUTOR`, `MANNEQUIN` and `NONE` are not (the `author-association`
 * enum of GitHub's REST OpenAPI description, github/rest-api-description).
 */
const collaborators = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

/** What the intake asks GitHub about a default branch: its head (`GET /repos/{owner}/{repo}/git/ref/heads/{branch}`). */
interface DefaultBranchReader {
  rest: {
    git: {
      getRef(params: { owner: string; repo: string; ref: string }): Promise<{ data: { object: { sha: string } } }>;
    };
  };
}

export function createGitHubApp(deps: GitHubAppDeps) {
  const now = deps.now ?? (() => new Date());
  return (app: Probot): void => {
    const producer = deps.producer;
    if (!producer) return; // Probot's setup mode: no queues yet.
    // This App's bot login (`<slug>[bot]`), asked once: only its own pull requests carry markers.
    let botLogin: Promise<string> | undefined;
    const ownLogin = (): Promise<string> =>
      (botLogin ??= app
        .auth()
        .then((octokit) => octokit.rest.apps.getAuthenticated())
        .then(({ data }) => `${data?.slug}[bot]`)
        .catch((error: unknown) => {
          botLogin = undefined;
          throw error;
        }));

    app.on('push', async (context) => {
      const { ref, repository, installation, after, deleted } = context.payload;
      if (!installation || ref !== `refs/heads/${repository.default_branch}`) return;
      // The default branch now points at `after`: one of the only commits a report posted on
      // GitHub may be about (the line of merges, never a side branch's commit).
      if (!deleted && /^[0-9a-f]{40}$/.test(after) && !/^0+$/.test(after))
        await deps.store?.heads.record(
          repository.owner?.login ?? repository.full_name.split('/')[0]!,
          repository.name,
          after,
          now().getTime(),
        );
      // Any push to the default branch may change the config or an environment's files.
      await enqueueIndex(
        producer,
        {
          installationId: installation.id,
          owner: repository.owner?.login ?? repository.full_name.split('/')[0]!,
          repo: repository.name,
          reason: 'push',
        },
        context.id,
      );
    });

    app.on(
      ['installation.created', 'installation.new_permissions_accepted', 'installation_repositories.added'],
      async (context) => {
        const payload = context.payload as {
          installation: { id: number };
          repositories?: Array<{ full_name: string }>;
          repositories_added?: Array<{ full_name: string }>;
        };
        for (const repo of payload.repositories ?? payload.repositories_added ?? []) {
          const [owner, name] = repo.full_name.split('/') as [string, string];
          await enqueueIndex(
            producer,
            { installationId: payload.installation.id, owner, repo: name, reason: 'installation' },
            context.id,
          );
        }
      },
    );

    app.on(['installation.deleted', 'installation_repositories.removed'], async (context) => {
      const payload = context.payload as {
        installation: { id: number };
        repositories?: Array<{ full_name: string }>;
        repositories_removed?: Array<{ full_name: string }>;
      };
      for (const repo of payload.repositories ?? payload.repositories_removed ?? []) {
        const [owner, name] = repo.full_name.split('/') as [string, string];
        await deps.store?.subscriptions.dropRepo({ installationId: payload.installation.id, owner, repo: name });
      }
    });

    app.on(['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened'], async (context) => {
      const { pull_request: pull, repository, installation } = context.payload;
      if (!installation) return;
      await enqueueDiff(producer, {
        installationId: installation.id,
        owner: repository.owner.login,
        repo: repository.name,
        number: pull.number,
        headSha: pull.head.sha,
        reason: 'pull_request',
      });
    });

    app.on('check_run.rerequested', async (context) => {
      const { check_run: run, repository, installation } = context.payload;
      if (!installation || run.name !== 'escalator/diff') return;
      for (const pull of run.pull_requests) {
        await enqueueDiff(
          producer,
          {
            installationId: installation.id,
            owner: repository.owner.login,
            repo: repository.name,
            number: pull.number,
            headSha: run.head_sha,
            reason: 'rerequest',
          },
          `${run.head_sha}-rerun-${context.id}`,
        );
      }
    });

    app.on('pull_request.closed', async (context) => {
      const { pull_request: pull, repository, installation } = context.payload;
      // One of Escalator's pull requests closed without a merge: the dashboard lists it no more (a
      // merge re-renders it through the push). The dashboard job does nothing where it is off.
      if (!pull.merged && installation && typeof pull.head.ref === 'string' && pull.head.ref.startsWith('escalator/'))
        await enqueueDashboard(
          producer,
          { installationId: installation.id, owner: repository.owner.login, repo: repository.name },
          context.id,
        );
      const own =
        installation && deps.store && pull.head.ref.startsWith('escalator/') && pull.head.repo?.id === repository.id;
      if (own)
        // The branch is done with: its next run creates it afresh, or judges what is left of it (living-pull.ts).
        await deps.store!.living.forgetClosed(
          { owner: repository.owner.login, repo: repository.name },
          livingBranchBase(pull.head.ref),
          pull.head.ref,
          pull.number,
        );
      if (!pull.merged || !installation || !deps.store || !pull.head.ref.startsWith('escalator/')) return;
      const marker = escalatorMarker(pull, repository.full_name, await ownLogin());
      if (!marker) return;
      // The chain a promotion carries: dev PR → staging PR → this. Stored for the next hop.
      const sources = [...(marker.sources ?? []), `#${pull.number}`];
      const key = { installationId: installation.id, owner: repository.owner.login, repo: repository.name };
      await deps.store.provenance.saveProvenance(key, marker.environment, marker.app, sources);
      // By merge commit too: a later rollback to these versions names the change that brought them.
      if (typeof pull.merge_commit_sha === 'string')
        await deps.store.provenance.saveProvenanceAt(
          key,
          marker.environment,
          marker.app,
          pull.merge_commit_sha,
          sources,
        );
    });

    app.on('issue_comment.created', async (context) => {
      const { comment, issue, repository, installation } = context.payload;
      if (!installation || comment.user?.type === 'Bot' || !/^\s*\/escalator(\s|$)/m.test(comment.body)) return;
      const age = now().getTime() - Date.parse(comment.created_at);
      if (!(age <= COMMAND_MEMORY_SECONDS * 1000)) {
        deps.log.warn(
          { deliveryId: context.id, commentId: comment.id, createdAt: comment.created_at },
          'Command not run: the comment is older than the commands Escalator remembers (a replayed delivery?)',
        );
        return;
      }
      await enqueueCommand(
        producer,
        {
          installationId: installation.id,
          owner: repository.owner.login,
          repo: repository.name,
          issueNumber: issue.number,
          isPull: Boolean(issue.pull_request),
          author: comment.user?.login ?? 'ghost',
          body: comment.body.slice(0, 65_536),
          ...(issue.pull_request && issue.body ? { prBody: issue.body.slice(0, 262_144) } : {}),
        },
        comment.id,
        // Anyone who can comment can queue a command: those of people without a standing in the
        // repository wait behind everyone else's (the job still asks GitHub for the permission).
        { stranger: !collaborators.has(comment.author_association) },
      );
    });

    /**
     * Sync and health as the agents post them to GitHub (docs/health.md): a commit status, a check
     * run or a deployment status about a commit of an indexed repository whose config listens to
     * its context, name or environment becomes one `health` job per (environment, app). Escalator's
     * own checks, statuses and Deployments are not reports.
     */
    const healthEvent = async (
      event: string,
      deliveryId: string,
      payload: {
        repository: { name: string; owner: { login: string }; default_branch: string };
        installation?: { id: number };
      },
      result: AgentResult,
      octokit: DefaultBranchReader,
    ): Promise<void> => {
      const repo = `${payload.repository.owner.login}/${payload.repository.name}`;
      if (result.kind !== 'report' || !result.report.revision) {
        agentReports.inc({ agent: 'status', outcome: 'ignored' });
        deps.log.debug(
          {
            deliveryId,
            event,
            repo,
            reason:
              result.kind === 'invalid' ? result.message : result.kind === 'ignored' ? result.reason : 'no commit',
          },
          'GitHub event not a health report',
        );
        return;
      }
      if (result.report.object.name.startsWith('escalator/')) return; // Escalator's own check or status.
      const index = await deps.store?.subscriptions.loadRepo(payload.repository.owner.login, payload.repository.name);
      // Only a report its bound poster posted is heard (mapAgentReport); and only about a commit the
      // default branch pointed at: a side branch's commit "contains" the merge as much as the
      // default branch does, and anyone with write access can make one.
      if (
        index &&
        mapAgentReport(index, result.report).length > 0 &&
        !(await onDefaultBranch(payload.repository, result.report.revision, octokit))
      ) {
        agentReports.inc({ agent: 'status', outcome: 'ignored' });
        deps.log.info(
          { deliveryId, event, repo, object: result.report.object.name, revision: result.report.revision },
          'GitHub health report ignored: its commit was never the head of the default branch (a side branch, a fork or a pull request)',
        );
        return;
      }
      const intake = index
        ? await enqueueAgentReport(
            producer,
            index,
            { ...result.report, revision: result.report.revision },
            now().toISOString(),
          )
        : undefined;
      if (!intake || intake.targets.length === 0) {
        // Most statuses and check runs are CI's, not an agent's: not "unknown applications" but traffic to pass by.
        agentReports.inc({ agent: 'status', outcome: 'ignored' });
        deps.log.debug(
          {
            deliveryId,
            event,
            repo,
            object: result.report.object.name,
            reason: index ? 'no environment listens to it' : 'repository not indexed',
          },
          'GitHub event about an unknown application',
        );
        return;
      }
      agentReports.inc({
        agent: 'status',
        outcome: intake.duplicates === intake.jobs.length ? 'duplicate' : 'accepted',
      });
      deps.log.info(
        {
          deliveryId,
          event,
          repo,
          object: result.report.object.name,
          revision: result.report.revision,
          sync: result.report.sync,
          health: result.report.health,
          targets: intake.targets.map((target) => `${target.environment}/${target.app || '*'}`),
        },
        'Health report from GitHub accepted',
      );
    };

    /**
     * Whether the default branch ever pointed at `sha`: recorded from its push events (and the
     * index), else — a report may overtake the push's delivery — its head now, asked once.
     */
    const onDefaultBranch = async (
      repository: { name: string; owner: { login: string }; default_branch: string },
      sha: string,
      octokit: DefaultBranchReader,
    ): Promise<boolean> => {
      const owner = repository.owner.login;
      if (await deps.store!.heads.has(owner, repository.name, sha)) return true;
      const { data } = await octokit.rest.git.getRef({
        owner,
        repo: repository.name,
        ref: `heads/${repository.default_branch}`,
      });
      if (data.object.sha.toLowerCase() !== sha.toLowerCase()) return false;
      await deps.store!.heads.record(owner, repository.name, sha, now().getTime());
      return true;
    };

    app.on('status', async (context) => {
      await healthEvent('status', context.id, context.payload, normalizeStatusEvent(context.payload), context.octokit);
    });

    app.on(['check_run.created', 'check_run.completed'], async (context) => {
      await healthEvent(
        'check_run',
        context.id,
        context.payload,
        normalizeCheckRunEvent(context.payload),
        context.octokit,
      );
    });

    app.on('deployment_status', async (context) => {
      // Escalator's own statuses follow the reports; they are not reports themselves (the normalizer says so).
      await healthEvent(
        'deployment_status',
        context.id,
        context.payload,
        normalizeDeploymentStatusEvent(context.payload, deps.appId),
        context.octokit,
      );
    });

    // A person ticked a box on the dashboard issue: each box runs as the command it stands for (the
    // command job checks the sender's permission through the API and answers on the issue), then
    // the dashboard is rendered again, which unticks it.
    app.on('issues.edited', async (context) => {
      const { issue, changes, sender, repository, installation } = context.payload;
      const before = (changes as typeof changes | undefined)?.body?.from;
      if (!installation || sender.type === 'Bot' || before === undefined || !issue.body?.startsWith(DASHBOARD_MARKER))
        return;
      if (issue.user?.login !== (await ownLogin())) return;
      const actions = tickedActions(before, issue.body);
      if (actions.length === 0) return;
      const ref = { installationId: installation.id, owner: repository.owner.login, repo: repository.name };
      for (const action of actions)
        await enqueueDashboardCommand(
          producer,
          { ...ref, issueNumber: issue.number, isPull: false, author: sender.login, body: actionCommand(action) },
          issue.updated_at,
        );
      await enqueueDashboard(producer, { ...ref, force: true }, context.id);
      deps.log.info(
        { deliveryId: context.id, issue: issue.number, actions: actions.length },
        'Dashboard boxes ticked; running them as commands',
      );
    });

    app.on(['registry_package', 'package'], async (context) => {
      const result = normalizeGithub(context.payload, { deliveryId: context.id, receivedAt: now().toISOString() });
      if (result.kind !== 'images') {
        deps.log.info(
          {
            deliveryId: context.id,
            outcome: result.kind,
            reason: result.kind === 'ignored' ? result.reason : result.message,
          },
          'Package event not used',
        );
        return;
      }
      // GitHub signs this delivery and is the registry (GHCR) itself: the push happened, so every
      // repository using the image may take it, as from any registry's own webhook.
      const scope = { by: `github:${context.name}`, owners: '*' as const };
      for (const event of result.events) {
        const added = await enqueueImage(producer, event, scope);
        if (added.duplicate)
          deps.log.info(
            { deliveryId: context.id, image: `${event.repository}:${event.tag}`, ...added.duplicate },
            'Package event already seen: no new work',
          );
      }
    });
  };
}
