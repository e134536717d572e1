import {
  normalizeCheckRunEvent,
  normalizeDeploymentStatusEvent,
  normalizeStatusEvent,
  type AgentResult,
} from '../../events/agents/index.js';
import { mapAgentReport } from '../../events/agents/health-map.js';
import { agentReports } from '../../observability/metrics.js';
import { enqueueAgentReport } from '../agent-routes.js';
import { handler, type GitHubEventName, type IntakeEvent } from './event.js';

/** What the health handlers read of a delivery: the repository, and a client for its default branch's head. */
type HealthDelivery = Pick<IntakeEvent<GitHubEventName>, 'id' | 'repository' | 'log' | 'intake'> & {
  payload: { repository: { default_branch: string } };
  octokit: {
    rest: {
      git: {
        getRef(params: { owner: string; repo: string; ref: string }): Promise<{ data: { object: { sha: string } } }>;
      };
    };
  };
};

/**
 * Sync and health as the agents post them to GitHub (docs/health.md): a commit status, a check
 * run or a deployment status about a commit of an indexed repository whose config listens to its
 * context, name or environment becomes one `health` job per (environment, app). Escalator's own
 * checks, statuses and Deployments are not reports.
 */
async function healthEvent(event: string, delivery: HealthDelivery, result: AgentResult): Promise<void> {
  const { repository: key, log, intake } = delivery;
  if (!key) return; // every status, check run and deployment status names its repository
  const repo = `${key.owner}/${key.repo}`;
  if (result.kind !== 'report' || !result.report.revision) {
    agentReports.inc({ agent: 'status', outcome: 'ignored' });
    log.debug(
      {
        event,
        repo,
        reason: result.kind === 'invalid' ? result.message : result.kind === 'ignored' ? result.reason : 'no commit',
      },
      'GitHub event not a health report',
    );
    return;
  }
  const report = { ...result.report, revision: result.report.revision };
  if (report.object.name.startsWith('escalator/')) return; // Escalator's own check or status.
  const index = await intake.store?.subscriptions.loadRepo(key.owner, key.repo);
  // Only a report its bound poster posted is heard (mapAgentReport); and only about a commit the
  // default branch pointed at: a side branch's commit "contains" the merge as much as the default
  // branch does, and anyone with write access can make one. The head store answers from the push
  // events it recorded, else asks GitHub for the head once (a report may overtake the push).
  if (
    index &&
    intake.store &&
    mapAgentReport(index, report).length > 0 &&
    !(await intake.store.heads.pointedAt(
      key.owner,
      key.repo,
      report.revision,
      async () =>
        (
          await delivery.octokit.rest.git.getRef({
            owner: key.owner,
            repo: key.repo,
            ref: `heads/${delivery.payload.repository.default_branch}`,
          })
        ).data.object.sha,
      intake.now().getTime(),
    ))
  ) {
    agentReports.inc({ agent: 'status', outcome: 'ignored' });
    log.info(
      { event, repo, object: report.object.name, revision: report.revision },
      'GitHub health report ignored: its commit was never the head of the default branch (a side branch, a fork or a pull request)',
    );
    return;
  }
  const accepted = index
    ? await enqueueAgentReport(intake.producer, index, report, intake.now().toISOString())
    : undefined;
  if (!accepted || accepted.targets.length === 0) {
    // Most statuses and check runs are CI's, not an agent's: not "unknown applications" but traffic to pass by.
    agentReports.inc({ agent: 'status', outcome: 'ignored' });
    log.debug(
      {
        event,
        repo,
        object: report.object.name,
        reason: index ? 'no environment listens to it' : 'repository not indexed',
      },
      'GitHub event about an unknown application',
    );
    return;
  }
  agentReports.inc({
    agent: 'status',
    outcome: accepted.duplicates === accepted.jobs.length ? 'duplicate' : 'accepted',
  });
  log.info(
    {
      event,
      repo,
      object: report.object.name,
      revision: report.revision,
      sync: report.sync,
      health: report.health,
      targets: accepted.targets.map((target) => `${target.environment}/${target.app || '*'}`),
    },
    'Health report from GitHub accepted',
  );
}

export const commitStatus = handler('status', (delivery) =>
  healthEvent('status', delivery, normalizeStatusEvent(delivery.payload)),
);

export const checkRun = handler(['check_run.created', 'check_run.completed'], (delivery) =>
  healthEvent('check_run', delivery, normalizeCheckRunEvent(delivery.payload)),
);

// Escalator's own statuses follow the reports; they are not reports themselves (the normalizer says so).
export const deploymentStatus = handler('deployment_status', (delivery) =>
  healthEvent('deployment_status', delivery, normalizeDeploymentStatusEvent(delivery.payload, delivery.intake.appId)),
);
