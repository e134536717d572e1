/**
 * Registry events as a registry or a CI pipeline sends them, timed: `POST /api/v1/images` (CI API,
 * bearer token) or `POST /registry/distribution` (a CNCF Distribution notification envelope with
 * one tagged OCI index push). Each request is sent once (no retry): anything but 202 is counted.
 * The time is from the request's start to the end of the answer's body, in the bench process.
 */
import { createHash } from 'node:crypto';
import { tagOf } from './fixture.js';

export type Source = 'ci' | 'distribution';

export interface Accepted {
  image: string;
  version: number;
  at: number;
}

export class ImageSender {
  readonly latencies = new Map<Source, number[]>([
    ['ci', []],
    ['distribution', []],
  ]);
  /** HTTP status (or the error's name) → count, for everything but 202. */
  readonly failures = new Map<string, number>();
  readonly accepted: Accepted[] = [];
  /** Highest version accepted (202) per image. */
  readonly acceptedVersion = new Map<string, number>();
  sent = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly webUrl: string,
    private readonly tokens: { ci: string; registry: string },
  ) {}

  get pending(): number {
    return this.inFlight.size;
  }

  /** Send one event in the background. */
  send(image: string, version: number, source: Source): void {
    this.sent++;
    const sending = this.post(image, version, source).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race([...this.inFlight]);
  }

  get failed(): number {
    return [...this.failures.values()].reduce((sum, n) => sum + n, 0);
  }

  private async post(image: string, version: number, source: Source): Promise<void> {
    const tag = tagOf(version);
    const request = source === 'ci' ? this.ciRequest(image, tag) : this.distributionRequest(image, tag);
    const started = performance.now();
    try {
      const response = await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      this.latencies.get(source)?.push(performance.now() - started);
      if (response.status === 202) {
        this.accepted.push({ image, version, at: Date.now() });
        this.acceptedVersion.set(image, Math.max(this.acceptedVersion.get(image) ?? 0, version));
      } else this.failures.set(`HTTP ${response.status}`, (this.failures.get(`HTTP ${response.status}`) ?? 0) + 1);
    } catch (error) {
      const name = `no answer (${(error as Error).name})`;
      this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
    }
  }

  private ciRequest(image: string, tag: string) {
    return {
      url: `${this.webUrl}/api/v1/images`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.tokens.ci}` },
      body: JSON.stringify({ image: `${image}:${tag}` }),
    };
  }

  private distributionRequest(image: string, tag: string) {
    const [host, ...path] = image.split('/');
    const repository = path.join('/');
    const digest = `sha256:${createHash('sha256').update(`${image}:${tag}`).digest('hex')}`;
    const envelope = {
      events: [
        {
          id: createHash('sha1').update(digest).digest('hex'),
          timestamp: new Date().toISOString(),
          action: 'push',
          target: { mediaType: 'application/vnd.oci.image.index.v1+json', size: 1_234, digest, length: 1_234, repository, url: `https://${host}/v2/${repository}/manifests/${digest}`, tag },
          request: { id: createHash('sha1').update(`${digest}:request`).digest('hex'), addr: '10.0.0.7:41822', host, method: 'PUT', useragent: 'buildkit/v0.16' },
          actor: { name: 'ci' },
          source: { addr: 'registry-0:5000', instanceID: 'load' },
        },
      ],
    };
    return {
      url: `${this.webUrl}/registry/distribution`,
      headers: { 'content-type': 'application/vnd.docker.distribution.events.v1+json', authorization: `Bearer ${this.tokens.registry}` },
      body: JSON.stringify(envelope),
    };
  }
}
