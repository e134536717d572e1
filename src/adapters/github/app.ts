import type { Octokit } from './client.js';

/** Every repository of every installation of the App, one at a time. */
export async function* listInstalledRepos(
  app: Octokit,
  forInstallation: (installationId: number) => Octokit,
): AsyncGenerator<{ installationId: number; owner: string; repo: string }> {
  const installations = await app.paginate(app.rest.apps.listInstallations, { per_page: 100 });
  for (const installation of installations) {
    const octokit = forInstallation(installation.id);
    const repos = await octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    for (const repo of repos) yield { installationId: installation.id, owner: repo.owner.login, repo: repo.name };
  }
}

/** The App's webhook deliveries, newest first, a page at a time (the caller stops when they get too old). */
export async function* listDeliveries(
  app: Octokit,
): AsyncGenerator<Array<{ id: number; guid: string; delivered_at: string; status_code: number }>> {
  for await (const page of app.paginate.iterator(app.rest.apps.listWebhookDeliveries, { per_page: 100 }))
    yield page.data;
}

export async function redeliver(app: Octokit, deliveryId: number): Promise<void> {
  await app.rest.apps.redeliverWebhookDelivery({ delivery_id: deliveryId });
}
