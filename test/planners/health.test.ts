import { describe, expect, it } from 'vitest';
import { type AppHealth, foldReport, type HealthReport, healthySinceAt } from '../../src/planners/health.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const TOLERATE = 60_000;

function report(at: string, fields: Partial<HealthReport> = {}): HealthReport {
  return {
    owner: 'example',
    repo: 'gitops',
    environment: 'staging',
    app: 'hello',
    revision: A,
    sync: 'synced',
    health: 'healthy',
    at: `2026-12-05T10:${at}Z`,
    source: { agent: 'argocd', object: 'hello-staging' },
    ...fields,
  };
}

function fold(...reports: HealthReport[]): AppHealth {
  let health: AppHealth | undefined;
  for (const each of reports) health = foldReport(health, each, TOLERATE);
  return health!;
}

describe('foldReport', () => {
  describe('when the first report says synced and healthy', () => {
    it('starts healthy-since at the report', () => {
      expect(fold(report('00:00'))).toEqual({
        revision: A,
        sync: 'synced',
        health: 'healthy',
        healthySince: '2026-12-05T10:00:00Z',
        reportedAt: '2026-12-05T10:00:00Z',
        source: { agent: 'argocd', object: 'hello-staging' },
      });
    });
  });

  describe('when later healthy reports name the same revision', () => {
    it('keeps healthy-since', () => {
      const health = fold(report('00:00'), report('05:00'), report('30:00'));
      expect(health.healthySince).toBe('2026-12-05T10:00:00Z');
      expect(health.reportedAt).toBe('2026-12-05T10:30:00Z');
    });
  });

  describe('when a report names a new revision', () => {
    it('starts healthy-since at that report when it is healthy', () => {
      expect(fold(report('00:00'), report('10:00', { revision: B })).healthySince).toBe('2026-12-05T10:10:00Z');
    });
    it('has no healthy-since while the new revision progresses', () => {
      const health = fold(report('00:00'), report('10:00', { revision: B, health: 'progressing' }));
      expect(health.revision).toBe(B);
      expect(health.healthySince).toBeUndefined();
    });
  });

  describe('when a report is older than the recorded one', () => {
    it('is ignored', () => {
      const recorded = fold(report('00:00'), report('10:00', { revision: B }));
      expect(foldReport(recorded, report('05:00', { health: 'degraded' }), TOLERATE)).toBe(recorded);
    });
  });

  describe('when the app goes degraded', () => {
    it('records degraded-since and the last degraded time', () => {
      const health = fold(report('00:00'), report('10:00', { health: 'degraded' }));
      expect(health.degradedSince).toBe('2026-12-05T10:10:00Z');
      expect(health.lastDegradedAt).toBe('2026-12-05T10:10:00Z');
    });
    it('counts a failed sync as degraded', () => {
      const health = fold(report('00:00', { sync: 'failed', health: 'unknown' }));
      expect(health.degradedSince).toBe('2026-12-05T10:00:00Z');
      expect(health.healthySince).toBeUndefined();
    });
    it('keeps degraded-since across further degraded reports', () => {
      const health = fold(report('00:00', { health: 'degraded' }), report('00:20', { health: 'degraded' }));
      expect(health.degradedSince).toBe('2026-12-05T10:00:00Z');
      expect(health.lastDegradedAt).toBe('2026-12-05T10:00:20Z');
    });
  });

  describe('when healthy returns within tolerate of degraded-since', () => {
    it('keeps healthy-since', () => {
      const health = fold(report('00:00'), report('10:00', { health: 'degraded' }), report('10:45'));
      expect(health.healthySince).toBe('2026-12-05T10:00:00Z');
      expect(health.degradedSince).toBeUndefined();
      expect(health.lastDegradedAt).toBe('2026-12-05T10:10:00Z');
    });
    it('keeps healthy-since through a progressing report between the two', () => {
      const health = fold(
        report('00:00'),
        report('10:00', { health: 'degraded' }),
        report('10:20', { health: 'progressing' }),
        report('11:30'),
      );
      expect(health.healthySince).toBe('2026-12-05T10:00:00Z');
    });
  });

  describe('when the degraded spell lasts tolerate or longer', () => {
    it('drops healthy-since at the report that shows it', () => {
      const health = fold(
        report('00:00'),
        report('10:00', { health: 'degraded' }),
        report('11:00', { health: 'degraded' }),
      );
      expect(health.healthySince).toBeUndefined();
    });
    it('restarts healthy-since when healthy returns', () => {
      const health = fold(report('00:00'), report('10:00', { health: 'degraded' }), report('12:00'));
      expect(health.healthySince).toBe('2026-12-05T10:12:00Z');
    });
  });

  describe('when a report at the same revision progresses without a degraded spell', () => {
    it('keeps healthy-since', () => {
      const health = fold(report('00:00'), report('10:00', { sync: 'out-of-sync', health: 'progressing' }));
      expect(health.healthySince).toBe('2026-12-05T10:00:00Z');
    });
  });
});

describe('healthySinceAt', () => {
  const degraded = fold(report('00:00'), report('10:00', { health: 'degraded' }));
  it('counts healthy-since while a degraded spell is shorter than tolerate', () => {
    expect(healthySinceAt(degraded, Date.parse('2026-12-05T10:10:59Z'), TOLERATE)).toBe('2026-12-05T10:00:00Z');
  });
  it('counts nothing once the spell lasted tolerate, with no report since', () => {
    expect(healthySinceAt(degraded, Date.parse('2026-12-05T10:11:00Z'), TOLERATE)).toBeUndefined();
  });
});
