/**
 * The schema of `.github/escalator.yml`, the file a GitOps repository uses to tell Escalator
 * which environments it has and how images move through them.
 *
 * The TSDoc on each field is the documentation: `scripts/generate-schema.ts` copies it into
 * `schema/escalator.schema.json` and `docs/configuration.md`, and refuses to run when a field has
 * no TSDoc or when its `@default` disagrees with the zod default.
 *
 * String fields are checked by small pure functions that return a message and a hint (so every
 * problem tells the user what to write instead); where a JSON Schema `pattern` can say the same,
 * it is attached with `.meta({ pattern })` for editors, and tests prove both agree.
 */
import { createPublicKey } from 'node:crypto';
import { RE2JSSyntaxException } from 're2js';
import semver from 'semver';
import { z } from 'zod';
import { parseImageRef } from '../planners/image-ref.js';
import { checkPathPattern, PATH_PATTERN } from '../planners/path-pattern.js';
import { folderPatternProblem } from '../planners/config-routes.js';
import { clipValue, QUOTE_LIMIT, quoteValue } from '../planners/quote-value.js';
import { compileTagPattern, TAG_POLICIES, type TagPolicyName } from '../planners/tag-policy.js';
import { parseCron } from '../planners/cron.js';
import { checkTimeZone, checkWindows, type WindowSpec } from '../planners/windows.js';

export { clipValue, QUOTE_LIMIT, quoteValue };

/** A problem found in one string value: what is wrong, and what to write instead. */
export interface ValueProblem {
  message: string;
  hint?: string;
}

/** Names for a hint, each clipped, at most ten of them: `dev, staging and 3 more`. */
function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 10).map(clipValue).join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

/**
 * A string schema validated by `check`; each problem becomes one zod issue carrying its hint in
 * `params.hint`. `pattern` is the editor-side approximation for the JSON Schema.
 */
function checkedString(check: (text: string) => ValueProblem | undefined, pattern?: RegExp) {
  const schema = z.string().superRefine((text, ctx) => {
    const problem = check(text);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem.message, params: problem.hint ? { hint: problem.hint } : {} });
    }
  });
  return pattern ? schema.meta({ pattern: pattern.source }) : schema;
}

// ── Durations ────────────────────────────────────────────────────────────────────────────────

/** Units in the order they must appear: `1d2h30m10s`. */
const DURATION_UNITS_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** `30s`, `10m`, `2h`, `1d`, `1h30m`: whole numbers with units, largest unit first, each unit once. */
export const DURATION_PATTERN = /^(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

const DURATION_HINT = 'write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m';

/**
 * Parses a duration such as `30s`, `10m`, `2h`, `1d` or `1h30m` into milliseconds.
 * Throws an `Error` that says how to write a duration when `text` is not one.
 */
export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match) {
    throw new Error(`Invalid duration ${quoteValue(text)}: ${DURATION_HINT}.`);
  }
  const [, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * DURATION_UNITS_MS.d +
    Number(hours ?? 0) * DURATION_UNITS_MS.h +
    Number(minutes ?? 0) * DURATION_UNITS_MS.m +
    Number(seconds ?? 0) * DURATION_UNITS_MS.s;
  if (!Number.isSafeInteger(ms)) {
    throw new Error(`Invalid duration ${quoteValue(text)}: it is too long to count in milliseconds.`);
  }
  return ms;
}

function checkDuration(text: string): ValueProblem | undefined {
  if (/^\d+$/.test(text)) {
    const hint = text.length <= QUOTE_LIMIT ? `write ${text}s, ${text}m, ${text}h or ${text}d` : DURATION_HINT;
    return { message: `duration ${quoteValue(text)} has no unit`, hint };
  }
  try {
    parseDuration(text);
    return undefined;
  } catch {
    return { message: `invalid duration ${quoteValue(text)}`, hint: DURATION_HINT };
  }
}

// ── Paths ────────────────────────────────────────────────────────────────────────────────

// One dialect for every path pattern, checked and compiled by the same parser in the pure core.
export { checkPathPattern, PATH_PATTERN };

// ── Images and tags ──────────────────────────────────────────────────────────────────────────

/**
 * An image repository as distribution/reference writes it: an optional registry host (with port)
 * and lowercase path components. No tag and no digest: those are what Escalator chooses.
 */
export const IMAGE_NAME_PATTERN =
  /^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

function checkImageName(text: string): ValueProblem | undefined {
  const at = text.indexOf('@');
  if (at >= 0) {
    return {
      message: `image name ${quoteValue(text)} has a digest`,
      hint: `remove ${quoteValue(text.slice(at))}; set pinDigest: true to have Escalator write digests`,
    };
  }
  const lastSegment = text.slice(text.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  if (colon >= 0) {
    return {
      message: `image name ${quoteValue(text)} has a tag`,
      hint: `remove ${quoteValue(lastSegment.slice(colon))}; choose tags with tags: and policy:`,
    };
  }
  if (!IMAGE_NAME_PATTERN.test(text)) {
    const hint =
      text !== text.toLowerCase() && IMAGE_NAME_PATTERN.test(text.toLowerCase())
        ? `image repositories are lowercase: ${quoteValue(text.toLowerCase())}`
        : 'write the repository as it appears in your manifests, like ghcr.io/example/hello';
    return { message: `${quoteValue(text)} is not an image repository name`, hint };
  }
  // The image grammar decides whether a policy's name is the repository an event names.
  const parsed = parseImageRef(text);
  if (!parsed.ok) return { message: `${quoteValue(text)} is not an image repository name`, hint: parsed.reason };
  return undefined;
}

// The tags compiler is the tag policy's (src/planners/tag-policy.ts): what is checked here is what matches there.
export { compileTagPattern };

/** Longer patterns are refused: compiling one costs time in its length, and a tag has at most 128 characters. */
export const MAX_TAG_PATTERN_LENGTH = 1_000;

const TAG_PATTERN_HINT =
  'tags is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax), like ^\\d+\\.\\d+\\.\\d+$';

/** What to write instead of the JavaScript-only constructs RE2 refuses. */
function tagPatternHint(text: string): string {
  if (/\\[1-9k]/.test(text)) return `RE2 has no backreferences; write the repeated part out. ${TAG_PATTERN_HINT}`;
  if (/\(\?<?[=!]/.test(text))
    return `RE2 has no lookahead or lookbehind; match the tag's whole shape instead, like ^v\\d+$ for "v" and digits. ${TAG_PATTERN_HINT}`;
  if (/\\u/.test(text)) return `RE2 writes a code point as \\x{e9}, not \\u00e9. ${TAG_PATTERN_HINT}`;
  return TAG_PATTERN_HINT;
}

function checkTagPattern(text: string): ValueProblem | undefined {
  if (text.length > MAX_TAG_PATTERN_LENGTH) {
    return {
      message: `tags is longer than ${MAX_TAG_PATTERN_LENGTH.toLocaleString('en-US')} characters (${text.length.toLocaleString('en-US')})`,
      hint: 'a tag has at most 128 characters; write a shorter pattern',
    };
  }
  try {
    compileTagPattern(text);
    return undefined;
  } catch (error) {
    let reason = error instanceof Error ? error.message : String(error);
    if (error instanceof RE2JSSyntaxException) {
      // `input` is the offending piece (`\1`, `(?=`), or the whole pattern for errors like a missing ")".
      // RE2 reads `(?<=` as a bad group name; say what it is.
      const lookbehind = /^\(\?<[=!]/.exec(error.input ?? '');
      reason = lookbehind
        ? `unsupported lookbehind "${lookbehind[0]}"`
        : error.input && error.input !== text
          ? `${error.error} ${quoteValue(error.input)}`
          : error.error;
    }
    return { message: `tags is not a valid RE2 regular expression: ${reason}`, hint: tagPatternHint(text) };
  }
}

function checkRange(text: string): ValueProblem | undefined {
  if (text.trim() === '' || semver.validRange(text) === null) {
    return {
      message: `invalid semver range ${quoteValue(text)}`,
      hint: 'write a range like "^1.2", "~2.0.1" or ">=1.4.0 <2.0.0"',
    };
  }
  return undefined;
}

/** How Escalator picks the next tag of an image among the tags that pass `tags`. */
export { TAG_POLICIES };
export type TagPolicy = TagPolicyName;

// ── People and names ─────────────────────────────────────────────────────────────────────────

/** A GitHub login (`alice`, `@alice`) or a team (`@example/release-managers`, `example/release-managers`). */
export const REVIEWER_PATTERN =
  /^@?[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\/[A-Za-z0-9][A-Za-z0-9_.-]*)?$/;

function checkReviewer(text: string): ValueProblem | undefined {
  return REVIEWER_PATTERN.test(text)
    ? undefined
    : {
        message: `${quoteValue(text)} is not a GitHub user or team`,
        hint: 'write a login like alice or a team like @example/release-managers',
      };
}

/** Environment names appear in branch names and labels, so they stay plain. */
export const ENVIRONMENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** The `from` value of environments that take new images straight from the registry. */
export const REGISTRY_SOURCE = 'registry';

function checkEnvironmentName(text: string): ValueProblem | undefined {
  if (text === REGISTRY_SOURCE) {
    return {
      message: '"registry" cannot name an environment',
      hint: 'it is the source of new images in from:; choose another name',
    };
  }
  if (!ENVIRONMENT_NAME_PATTERN.test(text)) {
    return {
      message: `invalid environment name ${quoteValue(text)}`,
      hint: 'use letters, digits, "-" and "_" (at most 63), starting with a letter or digit',
    };
  }
  return undefined;
}

/** GitHub limits label names to 50 characters. */
function checkLabel(text: string): ValueProblem | undefined {
  if (text.trim() === '') return { message: 'label is empty', hint: 'remove it or write a label name' };
  if ([...text].length > 50)
    return {
      message: `label ${quoteValue(text)} is longer than 50 characters`,
      hint: 'GitHub accepts label names up to 50 characters',
    };
  return undefined;
}

// ── Schemas ──────────────────────────────────────────────────────────────────────────────────

/** A path pattern: a kustomization directory or a file, relative to the repository root. */
const PathPattern = checkedString(checkPathPattern, PATH_PATTERN);

/** An agent object name: letters, digits, `.`, `-`, `_`, `/` (namespace), `*` (any run) and `{app}`. */
export const AGENT_OBJECT_PATTERN = /^(?=.*[A-Za-z0-9{*])[A-Za-z0-9._/*{}-]{1,253}$/;

function checkAgentObject(text: string): ValueProblem | undefined {
  if (!AGENT_OBJECT_PATTERN.test(text) || /\{(?!app\})|(?<!\{app)\}/.test(text))
    return {
      message: `${quoteValue(text)} is not an agent object name`,
      hint: 'write the name as the agent shows it, with {app} for the app and * for any run of characters, like "{app}-staging" or "flux-system/apps-staging"',
    };
  return undefined;
}

/** A GitHub login: letters, digits and single hyphens inside, at most 39 characters. */
export const GITHUB_LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

function checkLogin(text: string): ValueProblem | undefined {
  if (/\[bot\]$/i.test(text))
    return {
      message: `${quoteValue(text)} is a GitHub App's bot account, not a user`,
      hint: `write app: ${quoteValue(text.replace(/\[bot\]$/i, ''))} instead of user:`,
    };
  if (!GITHUB_LOGIN_PATTERN.test(text))
    return {
      message: `${quoteValue(text)} is not a GitHub login`,
      hint: 'write the login of the user whose token the agent posts with, like "flux-bot"',
    };
  return undefined;
}

/** A GitHub App's slug, as in `https://github.com/apps/<slug>`. */
export const GITHUB_APP_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9_.-]{0,98}[a-z0-9])?$/;

function checkAppSlug(text: string): ValueProblem | undefined {
  if (!GITHUB_APP_SLUG_PATTERN.test(text))
    return {
      message: `${quoteValue(text)} is not a GitHub App slug`,
      hint: "write the slug from the App's page https://github.com/apps/<slug> (lowercase), or its numeric id",
    };
  return undefined;
}

/**
 * One GitHub-posted health source: a commit-status context, check-run name or deployment
 * environment, and who may post it. Only reports from that poster count (docs/health.md, "Who
 * may speak for an environment").
 */
export const StatusSource = z
  .strictObject({
    /**
     * The commit-status context, check-run name or deployment environment, `*` matching any run
     * and `{app}` standing for the app: `"kustomization/apps-staging/*"`.
     */
    context: checkedString(checkAgentObject, AGENT_OBJECT_PATTERN),
    /**
     * The GitHub App that posts it: its slug (`"argocd-notifications"`) or numeric id. Argo CD
     * Notifications' `github` service posts as the App it is configured with.
     * @default none
     */
    app: z.union([checkedString(checkAppSlug, GITHUB_APP_SLUG_PATTERN), z.number().int().positive()]).optional(),
    /**
     * The user whose token the agent posts with: Flux's `github` Provider posts as the owner of
     * the token in its Secret.
     * @default none
     */
    user: checkedString(checkLogin, GITHUB_LOGIN_PATTERN).optional(),
  })
  // Checked even when another field failed, but only on a mapping (a bare string has its own problem).
  .superRefine(checkStatusPoster, {
    when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
  });
export type StatusSource = z.infer<typeof StatusSource>;

/**
 * Health. Where Escalator learns that this environment runs a version and is healthy, so that
 * promotions out of it wait for that (docs/health.md). Name at least one of `argocd`, `flux` and
 * `statuses`.
 */
export const HealthConfig = z
  .strictObject({
    /**
     * The Argo CD Application of each app, `{app}` standing for the app: `"{app}-staging"`, or
     * with its namespace `"argocd/{app}-staging"`.
     * @default none
     */
    argocd: checkedString(checkAgentObject, AGENT_OBJECT_PATTERN).optional(),
    /**
     * The Flux Kustomization or HelmRelease that applies this environment, as `namespace/name` or
     * `name`: one for every app (`"flux-system/apps-staging"`) or one per app (`"{app}-staging"`).
     * @default none
     */
    flux: checkedString(checkAgentObject, AGENT_OBJECT_PATTERN).optional(),
    /**
     * Commit-status contexts, check-run names and deployment environments the agents post on the
     * commit they synced, each with who posts it: `[{ context: "kustomization/apps-staging/*",
     * user: "flux-bot" }]`. A success counts as synced and healthy, a failure or error as
     * degraded; only from that poster, and only about a commit the default branch pointed at.
     * @default []
     */
    statuses: z.array(StatusSource).default([]),
    /**
     * A degraded spell shorter than this does not reset healthy-since (rollouts often go
     * Degraded for seconds while new pods start).
     * @default "60s"
     */
    tolerate: checkedString(checkDuration, DURATION_PATTERN).default('60s'),
    /**
     * How long after a merge the agent has to report the merged revision synced and healthy
     * before the health gate fails.
     * @default "15m"
     */
    timeout: checkedString(checkDuration, DURATION_PATTERN).default('15m'),
    /**
     * Create a GitHub Deployment per merged Escalator pull request in this environment, with
     * statuses that follow the reports. Turn it off when the agent creates Deployments itself.
     * @default true
     */
    deployments: z.boolean().default(true),
  })
  .superRefine(checkHealthSource, { when: () => true });
export type HealthConfig = z.infer<typeof HealthConfig>;

// ── Windows ──────────────────────────────────────────────────────────────────────────────────

function checkCron(text: string): ValueProblem | undefined {
  const parsed = parseCron(text);
  if (parsed.ok) return undefined;
  return {
    message: `invalid cron ${quoteValue(text)}: ${parsed.reason}`,
    hint: 'write five fields, minute hour day-of-month month day-of-week, like "0 9 * * 1-5" (09:00 on weekdays)',
  };
}

function checkZone(text: string): ValueProblem | undefined {
  const problem = checkTimeZone(text);
  return problem
    ? { message: problem, hint: 'write an IANA time zone name like "Europe/Berlin", "America/New_York" or "UTC"' }
    : undefined;
}

/** One window: it opens at the times of `cron`, read in `zone`, and stays open for `duration`. */
export const WindowConfig = z.strictObject({
  /** When the window opens: a five-field cron expression (`0 9 * * 1-5`: 09:00 Monday to Friday). */
  cron: checkedString(checkCron),
  /** How long it stays open once opened: `8h`, `30m`, `1d`, `9d`. */
  duration: checkedString(checkDuration, DURATION_PATTERN),
  /**
   * The IANA time zone `cron` is read in (`Europe/Berlin`); daylight-saving changes move the
   * window with the wall clock.
   * @default "UTC"
   */
  zone: checkedString(checkZone).default('UTC'),
});
export type WindowConfig = z.infer<typeof WindowConfig>;

/**
 * Windows. When promotions merge into this environment automatically (docs/controls.md). With
 * `allow`, only inside one of its windows; never inside a `deny` window (denials win). Outside,
 * promotion pull requests show a pending `escalator/window` check saying when it opens.
 */
export const WindowsConfig = z
  .strictObject({
    /**
     * Windows in which automatic merges may happen. Empty: any time not denied.
     * @default []
     */
    allow: z.array(WindowConfig).default([]),
    /**
     * Windows in which nothing merges automatically, whatever `allow` says.
     * @default []
     */
    deny: z.array(WindowConfig).default([]),
  })
  .superRefine(checkWindowSet, { when: () => true });
export type WindowsConfig = z.infer<typeof WindowsConfig>;

/**
 * "Never opens" and "denials cover every allowed window" are judged from a fixed date so that the
 * same file always gets the same answer (config checks take no clock).
 */
const WINDOW_CHECK_FROM = Date.UTC(2027, 0, 1);

/** Windows that cannot work together: zero lengths, duplicates, a window that never opens. */
function checkWindowSet(value: unknown, ctx: z.RefinementCtx): void {
  const lists = { allow: field(value, 'allow'), deny: field(value, 'deny') };
  const specs: Record<'allow' | 'deny', WindowSpec[]> = { allow: [], deny: [] };
  let readable = true;
  for (const kind of ['allow', 'deny'] as const) {
    const list = lists[kind];
    if (!Array.isArray(list)) continue;
    const seen = new Map<string, number>();
    for (const [i, window] of list.entries()) {
      const cron = stringField(window, 'cron');
      const duration = stringField(window, 'duration');
      const zone = stringField(window, 'zone') ?? 'UTC';
      if (
        cron === undefined ||
        duration === undefined ||
        checkCron(cron) ||
        checkZone(zone) ||
        checkDuration(duration)
      ) {
        readable = false;
        continue;
      }
      const durationMs = parseDuration(duration);
      if (durationMs === 0) {
        ctx.addIssue({
          code: 'custom',
          path: [kind, i, 'duration'],
          message: `a window of length ${quoteValue(duration)} is never open`,
          params: { hint: 'give it a length, like 8h' },
        });
        readable = false;
        continue;
      }
      const key = `${cron.trim().split(/\s+/).join(' ')}|${durationMs}|${zone}`;
      const first = seen.get(key);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [kind, i],
          message: `this window repeats ${kind}[${first}]`,
          params: { hint: 'remove one of the two' },
        });
      seen.set(key, i);
      specs[kind].push({ cron, durationMs, zone });
    }
  }
  if (!readable) return;
  // Five years: a window on 29 February opens within them whatever the year it starts from.
  for (const problem of checkWindows(specs, WINDOW_CHECK_FROM, 5 * 366 * 86_400_000)) {
    const at = /^(allow|deny)\[(\d+)\]/.exec(problem);
    ctx.addIssue({
      code: 'custom',
      path: at ? [at[1]!, Number(at[2]), 'cron'] : specs.deny.length > 0 ? ['deny'] : ['allow'],
      message: problem,
      params: {
        hint: at
          ? 'check the day of month and the month: a date like 30 February never comes'
          : 'shorten or remove a deny window, or add an allow window outside them',
      },
    });
  }
}

// ── Verification ─────────────────────────────────────────────────────────────────────────────

/** The name of a Sigstore trusted root the operator mounted: `<name>.json` in ESCALATOR_SIGSTORE_TRUSTED_ROOTS. */
export const TRUSTED_ROOT_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

function checkTrustedRootName(text: string): ValueProblem | undefined {
  if (TRUSTED_ROOT_NAME_PATTERN.test(text) && !text.includes('..')) return undefined;
  return {
    message: `${quoteValue(text)} is not a trusted root name`,
    hint: 'write the name of a file the operator mounted in ESCALATOR_SIGSTORE_TRUSTED_ROOTS, without ".json": lowercase letters, digits, ".", "-" and "_", like "public-good"',
  };
}

/** A cosign public key in PEM (`cosign.pub`); at most 8 KiB. */
function checkPublicKey(text: string): ValueProblem | undefined {
  const hint =
    'paste the whole cosign.pub, from "-----BEGIN PUBLIC KEY-----" to "-----END PUBLIC KEY-----", as a block scalar (keys: [|])';
  if (text.length > 8192) return { message: 'the public key is longer than 8 KiB', hint };
  if (!/^\s*-----BEGIN PUBLIC KEY-----[A-Za-z0-9+/=\s]+-----END PUBLIC KEY-----\s*$/.test(text))
    return { message: 'the key is not a PEM public key', hint };
  try {
    const key = createPublicKey(text);
    if (key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ed25519')
      return {
        message: `the key is an ${key.asymmetricKeyType ?? 'unknown'} key`,
        hint: 'cosign signs with ECDSA (P-256), RSA or Ed25519 keys',
      };
    return undefined;
  } catch {
    return { message: 'the public key cannot be read (its base64 is damaged)', hint };
  }
}

function checkIssuer(text: string): ValueProblem | undefined {
  if (/^https:\/\/[A-Za-z0-9.-]+(:\d+)?(\/[\x21-\x7e]*)?$/.test(text) && text.length <= 256) return undefined;
  return {
    message: `issuer ${quoteValue(text)} is not an https URL`,
    hint: 'write the OIDC issuer that signed the identity, like "https://token.actions.githubusercontent.com" for GitHub Actions',
  };
}

function checkSubject(text: string): ValueProblem | undefined {
  if (text.length > 0 && text.length <= 1024 && !/\s/.test(text)) return undefined;
  return {
    message: `subject ${quoteValue(text)} is empty, too long or holds spaces`,
    hint: 'write the certificate subject exactly, like "https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main"',
  };
}

function checkSubjectPattern(text: string): ValueProblem | undefined {
  const hint =
    'write an RE2 pattern matched against the whole subject, like "^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/tags/v.*$"';
  if (text.length > 1024) return { message: 'subjectPattern is longer than 1,024 characters', hint };
  try {
    compileTagPattern(text);
  } catch (error) {
    const reason = error instanceof RE2JSSyntaxException ? error.error : String(error);
    return { message: `subjectPattern is not a valid RE2 regular expression: ${reason}`, hint };
  }
  if (!text.startsWith('^') || !text.endsWith('$'))
    return {
      message: `subjectPattern ${quoteValue(text)} is not anchored`,
      hint: `start it with ^ and end it with $ (${quoteValue(`^${text.replace(/^\^/, '').replace(/\$$/, '')}$`)}), or any subject that merely contains it would pass`,
    };
  return undefined;
}

/** `owner/name` of a GitHub repository. */
export const SOURCE_REPOSITORY_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}\/[A-Za-z0-9._-]{1,100}$/;

function checkSourceRepository(text: string): ValueProblem | undefined {
  if (SOURCE_REPOSITORY_PATTERN.test(text)) return undefined;
  return {
    message: `${quoteValue(text)} is not a repository`,
    hint: 'write owner/name of the repository the image is built from, like "acme/hello"',
  };
}

/**
 * Signer. Who must have signed a Sigstore bundle (keyless): the certificate Fulcio issued names
 * the identity (subject), the OIDC issuer and, for CI identities, the source repository.
 */
export const SignerConfig = z
  .strictObject({
    /** The OIDC issuer, exactly: `https://token.actions.githubusercontent.com` for GitHub Actions. */
    issuer: checkedString(checkIssuer),
    /**
     * The certificate's subject, exactly: for GitHub Actions the workflow,
     * `https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main`.
     * @default none; write subject or subjectPattern
     */
    subject: checkedString(checkSubject).optional(),
    /**
     * An RE2 pattern, anchored with `^` and `$`, that the whole subject must match, for a workflow
     * run from any tag: `^https://github\.com/acme/hello/\.github/workflows/release\.yml@refs/tags/v.*$`.
     * @default none; write subject or subjectPattern
     */
    subjectPattern: checkedString(checkSubjectPattern).optional(),
    /**
     * The repository the signing workflow ran in (`owner/name`), read from the certificate's
     * source repository extension.
     * @default any repository
     */
    repository: checkedString(checkSourceRepository, SOURCE_REPOSITORY_PATTERN).optional(),
  })
  .superRefine(checkSigner, { when: () => true });
export type SignerConfig = z.infer<typeof SignerConfig>;

/**
 * Verification. What an image must carry before Escalator writes it into this environment: a
 * cosign signature by one of `keys`, or a Sigstore bundle by one of `signers`, and with
 * `provenance` a SLSA provenance attestation of the image's digest (docs/security.md).
 */
export const VerifyConfig = z
  .strictObject({
    /**
     * Cosign public keys in PEM (`cosign.pub`). A signature in the image's `sha256-<digest>.sig`
     * tag made with any of them satisfies the policy.
     * @default []
     */
    keys: z.array(checkedString(checkPublicKey)).max(16).default([]),
    /**
     * Keyless signers. A Sigstore bundle attached to the image (OCI referrers) whose certificate
     * chains to `trustedRoot` and names one of them satisfies the policy.
     * @default []
     */
    signers: z.array(SignerConfig).max(16).default([]),
    /**
     * The Sigstore trusted root that keyless bundles are checked against: the name of a file
     * `<name>.json` the operator mounted in ESCALATOR_SIGSTORE_TRUSTED_ROOTS. Nothing is fetched.
     * @default none; required with signers
     */
    trustedRoot: checkedString(checkTrustedRootName, TRUSTED_ROOT_NAME_PATTERN).optional(),
    /**
     * Also require SLSA provenance (`https://slsa.dev/provenance/v1`) whose subject is the
     * image's digest, in a Sigstore bundle by one of `signers`.
     * @default false
     */
    provenance: z.boolean().default(false),
  })
  .superRefine(checkVerify, { when: () => true });
export type VerifyConfig = z.infer<typeof VerifyConfig>;

function checkSigner(signer: unknown, ctx: z.RefinementCtx): void {
  const subject = field(signer, 'subject');
  const pattern = field(signer, 'subjectPattern');
  if ((subject === undefined) === (pattern === undefined))
    ctx.addIssue({
      code: 'custom',
      path: subject === undefined ? [] : ['subjectPattern'],
      message: subject === undefined ? 'a signer names no subject' : 'a signer has both subject and subjectPattern',
      params: {
        hint:
          subject === undefined
            ? 'add subject: (the exact identity) or subjectPattern: (an anchored RE2 pattern); without one, anyone the issuer vouches for would pass'
            : 'keep one: subject for one exact identity, subjectPattern for several',
      },
    });
}

function checkVerify(verify: unknown, ctx: z.RefinementCtx): void {
  const keys = field(verify, 'keys');
  const signers = field(verify, 'signers');
  const hasKeys = Array.isArray(keys) && keys.length > 0;
  const hasSigners = Array.isArray(signers) && signers.length > 0;
  const add = (path: string[], message: string, hint: string) =>
    ctx.addIssue({ code: 'custom', path, message, params: { hint } });
  if (!hasKeys && !hasSigners)
    add(
      [],
      'verify names no key and no signer',
      'add keys: (cosign public keys) or signers: (keyless identities), or remove verify',
    );
  if (hasSigners && field(verify, 'trustedRoot') === undefined)
    add(
      ['signers'],
      'signers need a trustedRoot',
      'add trustedRoot: with the name of the Sigstore trusted root the operator mounted (docs/security.md)',
    );
  if (field(verify, 'provenance') === true && !hasSigners)
    add(
      ['provenance'],
      'provenance needs signers',
      'SLSA provenance is checked in a keyless Sigstore bundle: add signers: naming the workflow that builds the image',
    );
}

/**
 * Configuration promotion. Carry what people merge into the `from` environment's files (an
 * environment variable, a ConfigMap key, a resource limit, a new patch) into this environment's
 * files, three-way: a value this environment holds on its own is kept (docs/configuration.md,
 * "Promote configuration").
 */
export const PromoteConfig = z.strictObject({
  /**
   * Propose configuration changes merged into the `from` environment, in the same promotion pull
   * request as its image versions and behind the same gates.
   * @default false
   */
  config: z.boolean().default(false),
  /**
   * Which files travel, as path patterns relative to the app's environment folder
   * (`patches/**`, `kustomization.yaml`). Empty: every file.
   * @default []
   */
  include: z.array(PathPattern).default([]),
  /**
   * Files that never travel, relative to the app's environment folder (`secrets/**`); they win
   * over `include`.
   * @default []
   */
  exclude: z.array(PathPattern).default([]),
});
export type PromoteConfig = z.infer<typeof PromoteConfig>;

/**
 * Environment. The paths it owns in this repository, where its images come from, and the gates
 * a change passes before it lands.
 */
export const EnvironmentConfig = z.strictObject({
  /** The environment's name, used in `from`, branch names and pull request titles. */
  name: checkedString(checkEnvironmentName, ENVIRONMENT_NAME_PATTERN),
  /**
   * Where the environment lives: kustomization directories or files, relative to the repository
   * root. `*` matches one path segment (or part of one) and names the app; `**` matches any depth;
   * `?`, `[abc]` and `{web,api}` match one character, one of a class and one of the names.
   */
  paths: z.array(PathPattern).min(1),
  /**
   * Where new versions come from: `registry` for images as they are pushed, or the name of
   * another environment to promote, app by app, the versions it runs.
   */
  from: z.string(),
  /**
   * Merge Escalator's pull requests for this environment on their own once required checks and
   * reviews pass (GitHub auto-merge).
   * @default false
   */
  autoMerge: z.boolean().default(false),
  /**
   * How long a version must have run in the `from` environment (or, for `from: registry`, how
   * long ago it was pushed) before it is proposed here: `30s`, `10m`, `2h`, `1d`, `1h30m`.
   * @default "0s"
   */
  soak: checkedString(checkDuration, DURATION_PATTERN).default('0s'),
  /**
   * Users (`alice`) and teams (`@example/release-managers`) asked to review this environment's
   * pull requests.
   * @default []
   */
  reviewers: z.array(checkedString(checkReviewer, REVIEWER_PATTERN)).default([]),
  /**
   * Open one pull request for all apps of the environment instead of one per app.
   * @default false
   */
  group: z.boolean().default(false),
  /**
   * Add an `images:` entry, as `kustomize edit set image` does, to this environment's
   * kustomizations that render a pushed image (through their resources and bases) but have no
   * entry for it, written in the file's own style. Without it a file that does not mention the
   * image is left alone. Entries are added by bumps of images pushed to the registry; promotions
   * into the environment set the entries that exist.
   * @default false
   */
  addImages: z.boolean().optional(),
  /**
   * Where the cluster reports this environment's sync and health (docs/health.md). With it,
   * promotions out of this environment wait until it runs the version healthy, and soak counts
   * from healthy-since.
   * @default none; promotions count soak from the merge
   */
  health: HealthConfig.optional(),
  /**
   * What to do when this environment goes degraded or fails to sync after a promotion into it:
   * `manual` halts further promotion of that app and says why; `auto` also opens the rollback
   * pull request to the last version that was healthy here (and merges it with autoMerge).
   * @default "manual"
   */
  rollback: z.enum(['manual', 'auto']).default('manual'),
  /**
   * When promotions may merge into this environment automatically (docs/controls.md):
   * `allow` and `deny` windows, each a cron expression, a duration and a time zone.
   * @default none; any time
   */
  windows: WindowsConfig.optional(),
  /**
   * What an image must carry to be written into this environment, by a bump or a promotion
   * (docs/security.md): without it, no check.
   * @default none; nothing is verified
   */
  verify: VerifyConfig.optional(),
  /**
   * What else travels from the `from` environment besides image versions: `config: true` carries
   * the configuration changes people merge there (docs/configuration.md, "Promote configuration").
   * @default none; only image versions are promoted
   */
  promote: PromoteConfig.optional(),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfig>;

/** A Flux ImagePolicy as setter markers name it: `<namespace>:<name>`, both Kubernetes names. */
export const FLUX_POLICY_PATTERN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?:[a-z0-9](?:[-.a-z0-9]*[a-z0-9])?$/;

function checkFluxPolicy(text: string): ValueProblem | undefined {
  if (FLUX_POLICY_PATTERN.test(text)) return undefined;
  const role = /^(.+:.+):(?:tag|name|digest)$/.exec(text)?.[1];
  return {
    message: `Flux policy ${quoteValue(text)} is not <namespace>:<name>`,
    hint:
      role !== undefined
        ? `write ${quoteValue(role)}: the :tag, :name and :digest suffixes belong to markers, not to the policy`
        : 'write it as the markers name it, e.g. "flux-system:hello"',
  };
}

/** Image policy. Which tags of one image Escalator proposes, and how it writes them. */
export const ImageConfig = z
  .strictObject({
    /** The image repository without tag or digest, spelled as in your manifests (`ghcr.io/example/hello`). */
    name: checkedString(checkImageName, IMAGE_NAME_PATTERN),
    /**
     * A regular expression that tags must match to be proposed, in RE2 syntax (no backreferences,
     * no lookaround), so matching takes time linear in the tag whatever the pattern.
     * @default every tag that is not ignored
     */
    tags: checkedString(checkTagPattern).optional(),
    /**
     * How to choose among tags: `newest` takes each pushed tag; `semver` the highest semantic
     * version; `semver-range` the highest within `range`; `lexical` and `numerical` the highest
     * by string or number order.
     * @default "newest"
     */
    policy: z.enum(TAG_POLICIES).default('newest'),
    /**
     * The semver range for `policy: semver-range`, like `^1.2` or `>=1.4.0 <2.0.0`.
     * @default none; required with semver-range
     */
    range: checkedString(checkRange).optional(),
    /**
     * Write the digest with the tag (`hello:1.2.3@sha256:…`, or Kustomize's `digest:`) so every
     * environment runs exactly the image that was tested.
     * @default false
     */
    pinDigest: z.boolean().default(false),
    /**
     * Flux image policies (`<namespace>:<name>`) whose setter markers
     * (`# {"$imagepolicy": "flux-system:hello:tag"}`) set this image. A field marked for one of
     * them is this image's edit site whatever repository it names (a `:name` field and a full
     * reference are rewritten to this name, as Flux does); once an image lists policies, a field
     * marked for any other policy is left alone even when it names this repository. Without it,
     * a marked field is the image it names.
     * @default []
     */
    fluxPolicies: z.array(checkedString(checkFluxPolicy, FLUX_POLICY_PATTERN)).optional(),
    /**
     * The charts read literal dotted keys (`image.tag: 1.2.3` as one key beside `image.name` or
     * `image.repository`) as they are, so Escalator edits them. Without it such keys are reported
     * with their line and left alone, because Helm reads them as keys with a dot, not as `image.tag`.
     * @default false
     */
    helmDottedKeys: z.boolean().optional(),
  })
  .superRefine(checkImagePolicy, { when: () => true })
  .meta({
    // Editors get the same rule as checkImagePolicy.
    if: { properties: { policy: { const: 'semver-range' } }, required: ['policy'] },
    then: { properties: { range: { type: 'string' } }, required: ['range'] },
    else: { properties: { range: false } },
  });
export type ImageConfig = z.infer<typeof ImageConfig>;

/** Rendered diffs. Settings for the rendered-manifest diff Escalator posts on pull requests. */
export const DiffConfig = z.strictObject({
  /**
   * Render the affected targets at base and head and post the diff on every pull request.
   * @default true
   */
  enabled: z.boolean().default(true),
  /**
   * Also render pull requests from forks. Rendering runs kustomize and helm on the fork's
   * files; turn it on only when you trust them.
   * @default false
   */
  forks: z.boolean().default(false),
  /**
   * Render targets (kustomization directories, charts, plain manifest directories), with the
   * same patterns as environment paths. Empty: every target Escalator discovers (docs/diff.md).
   * @default []
   */
  paths: z.array(PathPattern).default([]),
});
export type DiffConfig = z.infer<typeof DiffConfig>;

/**
 * Escalator repository configuration. Read from `.github/escalator.yml` on the default branch; see
 * docs/configuration.md.
 */
export const RepoConfig = z
  .strictObject({
    /**
     * The version of this file's format. Only 1 exists.
     * @default 1
     */
    version: z.literal(1).optional(),
    /** The environments, in any order; `from` links them into promotion chains that start at `registry`. */
    environments: z.array(EnvironmentConfig).min(1),
    /**
     * Tag policies per image. Images without an entry take every pushed tag that is not ignored.
     * @default []
     */
    images: z.array(ImageConfig).default([]),
    /**
     * Plan and report, but create no branches, commits or pull requests.
     * @default false
     */
    dryRun: z.boolean().default(false),
    /**
     * Rendered-manifest diffs on pull requests.
     * @default {}
     */
    diff: DiffConfig.prefault({}),
    /**
     * Extra labels on every pull request Escalator opens.
     * @default []
     */
    labels: z.array(checkedString(checkLabel).meta({ pattern: String.raw`\S`, maxLength: 50 })).default([]),
    /**
     * Keep one pinned issue, `Escalator: environments`, showing what runs where, the open pull
     * requests and their gates, holds, freezes and windows, with checkboxes that act like commands
     * (docs/controls.md). Off unless asked for: it opens an issue and takes one of the
     * repository's three pinned slots.
     * @default false
     */
    dashboard: z.boolean().default(false),
  })
  .superRefine(checkRepoConfig, { when: () => true });
export type RepoConfig = z.infer<typeof RepoConfig>;
/** What a user may write: the same shape with defaults left out. */
export type RepoConfigInput = z.input<typeof RepoConfig>;

// ── Cross-field checks ───────────────────────────────────────────────────────────────────────

/** `range` goes with `policy: semver-range`, and only with it. */
function checkImagePolicy(image: unknown, ctx: z.RefinementCtx): void {
  const policy = stringField(image, 'policy');
  const range = field(image, 'range');
  if (policy === 'semver-range' && range === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['policy'],
      message: 'policy semver-range needs a range',
      params: { hint: 'add a range, like range: "^1.2"' },
    });
  }
  if (
    range !== undefined &&
    policy !== undefined &&
    policy !== 'semver-range' &&
    (TAG_POLICIES as readonly string[]).includes(policy)
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['range'],
      message: `range applies only to policy semver-range, not ${policy}`,
      params: { hint: 'set policy: semver-range, or remove range' },
    });
  }
}

/** A health setting names where reports come from. */
function checkHealthSource(health: unknown, ctx: z.RefinementCtx): void {
  const statuses = field(health, 'statuses');
  if (
    field(health, 'argocd') === undefined &&
    field(health, 'flux') === undefined &&
    (!Array.isArray(statuses) || statuses.length === 0)
  )
    ctx.addIssue({
      code: 'custom',
      message: 'health names no agent to listen to',
      params: {
        hint: 'add argocd: "{app}-<environment>", flux: "<namespace>/<kustomization>" or statuses: [{ context: "<context>", user: "<login>" }]',
      },
    });
}

/** A status source names exactly one poster: the App or the user. */
function checkStatusPoster(source: unknown, ctx: z.RefinementCtx): void {
  const app = field(source, 'app');
  const user = field(source, 'user');
  const context = field(source, 'context');
  const shown = typeof context === 'string' ? clipValue(context) : '<context>';
  if (app === undefined && user === undefined)
    ctx.addIssue({
      code: 'custom',
      message: `status context ${quoteValue(shown)} names no poster: anyone who can write to the repository could post it`,
      params: { hint: statusFix(shown) },
    });
  else if (app !== undefined && user !== undefined)
    ctx.addIssue({
      code: 'custom',
      message: `status context ${quoteValue(shown)} names both an app and a user`,
      params: { hint: 'keep the one the agent posts as: app for a GitHub App, user for a personal token' },
    });
}

/** The exact entry to write for an unbound status context. */
export function statusFix(context: string): string {
  return `write { context: ${JSON.stringify(context)}, user: "<login whose token the agent posts with>" }, or app: "<GitHub App slug or id>" instead of user (docs/health.md, "Who may speak for an environment")`;
}

/** The parts of an environment the cross-field checks read, when the value has them. */
interface EnvironmentFacts {
  index: number;
  name?: string;
  from?: string;
  paths: string[];
}

/** Reads fields defensively: cross-field checks run even when other fields already failed. */
function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const found = field(value, key);
  return typeof found === 'string' ? found : undefined;
}

function environmentFacts(config: unknown): EnvironmentFacts[] {
  const environments = field(config, 'environments');
  if (!Array.isArray(environments)) return [];
  return environments.map((environment: unknown, index) => {
    const paths = field(environment, 'paths');
    return {
      index,
      name: stringField(environment, 'name'),
      from: stringField(environment, 'from'),
      paths: Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [],
    };
  });
}

/**
 * Checks that need more than one field: unique names, `from` links that resolve and form no
 * cycle, a chain that starts at the registry, paths owned by one environment, one policy per image.
 */
function checkRepoConfig(config: unknown, ctx: z.RefinementCtx): void {
  const add = (path: (string | number)[], message: string, hint?: string) =>
    ctx.addIssue({ code: 'custom', path, message, params: hint ? { hint } : {} });
  const environments = environmentFacts(config);

  // Names are unique; the first definition wins for the checks below.
  const byName = new Map<string, EnvironmentFacts>();
  for (const environment of environments) {
    if (environment.name === undefined) continue;
    const first = byName.get(environment.name);
    if (first) {
      add(
        ['environments', environment.index, 'name'],
        `duplicate environment name ${quoteValue(environment.name)}`,
        `environments[${first.index}] is already named ${quoteValue(environment.name)}; rename one of them`,
      );
    } else {
      byName.set(environment.name, environment);
    }
  }

  // addImages adds entries in bumps, which only environments fed by the registry get.
  const rawEnvironments = field(config, 'environments');
  if (Array.isArray(rawEnvironments))
    rawEnvironments.forEach((environment: unknown, index) => {
      const from = stringField(environment, 'from');
      if (field(environment, 'addImages') !== true || from === undefined || from === REGISTRY_SOURCE) return;
      add(
        ['environments', index, 'addImages'],
        `addImages applies to environments that take images from "${REGISTRY_SOURCE}", not from ${quoteValue(from)}`,
        `remove it here: promotions set the images: entries that exist; set it on the environment that takes from "${REGISTRY_SOURCE}"`,
      );
    });

  // promote: configuration travels from the `from` environment's folders into this one's.
  if (Array.isArray(rawEnvironments))
    rawEnvironments.forEach((environment: unknown, index) => {
      const promote = field(environment, 'promote');
      if (promote === undefined) return;
      const from = stringField(environment, 'from');
      if (from === REGISTRY_SOURCE) {
        add(
          ['environments', index, 'promote'],
          `promote applies to environments that take from another environment, not from "${REGISTRY_SOURCE}"`,
          `remove it here: what lands here comes from image pushes; set promote: { config: true } on the environment whose from: is ${quoteValue(stringField(environment, 'name') ?? 'this one')}`,
        );
        return;
      }
      if (field(promote, 'config') !== true) return;
      const own = environments[index]!;
      const source = from === undefined ? undefined : byName.get(from);
      for (const [pathIndex, pattern] of own.paths.entries()) {
        const problem = folderPatternProblem(pattern, true);
        if (problem)
          add(
            ['environments', index, 'paths', pathIndex],
            problem,
            'write the path as literal folders and the app\'s "*", like apps/*/overlays/staging, or turn promote.config off',
          );
      }
      if (!source) return;
      for (const [pathIndex, pattern] of source.paths.entries()) {
        const problem = folderPatternProblem(pattern, false);
        if (problem)
          add(
            ['environments', index, 'promote', 'config'],
            `${quoteValue(source.name ?? '')} ${problem}`,
            `write ${quoteValue(source.name ?? '')}'s paths[${pathIndex}] as folders, or turn promote.config off`,
          );
      }
      if (source.paths.length !== own.paths.length)
        add(
          ['environments', index, 'promote', 'config'],
          `configuration promotion pairs paths by position, but ${quoteValue(source.name ?? '')} has ${source.paths.length} and this environment has ${own.paths.length}`,
          `list the same number of paths in both, in the same order (paths[0] of ${quoteValue(source.name ?? '')} goes to paths[0] here)`,
        );
    });

  // `from` names the registry or another environment.
  const names = [...byName.keys()];
  for (const environment of environments) {
    const { from, name, index } = environment;
    if (from === undefined || from === REGISTRY_SOURCE) continue;
    if (from === name) {
      add(
        ['environments', index, 'from'],
        `environment ${quoteValue(from)} cannot take images from itself`,
        `use "${REGISTRY_SOURCE}" or another environment`,
      );
    } else if (!byName.has(from)) {
      const suggestion = closestMatch(from, [REGISTRY_SOURCE, ...names.filter((n) => n !== name)]);
      add(
        ['environments', index, 'from'],
        `from names no environment: ${quoteValue(from)}`,
        suggestion
          ? `did you mean "${suggestion}"?`
          : `use "${REGISTRY_SOURCE}" or one of: ${listNames(names.filter((n) => n !== name))}`,
      );
    }
  }

  // Following `from` must end at the registry; report each cycle once, at its first-listed member.
  const reported = new Set<string>();
  for (const environment of environments) {
    if (environment.name === undefined || byName.get(environment.name) !== environment) continue;
    const chain: string[] = [];
    let current: EnvironmentFacts | undefined = environment;
    while (current?.name !== undefined && !chain.includes(current.name)) {
      chain.push(current.name);
      current = current.from === undefined || current.from === current.name ? undefined : byName.get(current.from);
    }
    if (current?.name !== environment.name || chain.length < 2 || chain.some((n) => reported.has(n))) continue;
    chain.forEach((n) => reported.add(n));
    // The chain follows `from`; promotions run the other way. Start where the problem is reported.
    const promotion = [environment.name, ...chain.slice(1).reverse()];
    add(
      ['environments', environment.index, 'from'],
      `promotion cycle: ${[...promotion, promotion[0] as string].map(clipValue).join(' → ')}`,
      `one environment of the chain must take images from "${REGISTRY_SOURCE}"`,
    );
  }

  // Only when every `from` is written: a missing one is its own problem, and may be the registry.
  if (
    environments.length > 0 &&
    environments.every((e) => e.from !== undefined) &&
    !environments.some((e) => e.from === REGISTRY_SOURCE)
  ) {
    const first = environments.find((e) => e.name !== undefined)?.name;
    add(
      ['environments'],
      `no environment takes new images from "${REGISTRY_SOURCE}"`,
      first ? `set from: ${REGISTRY_SOURCE} on the first environment, ${quoteValue(first)}` : undefined,
    );
  }

  // Each path belongs to one environment, or a bump would edit two of them at once.
  const owners = new Map<string, { environment: EnvironmentFacts; index: number }>();
  for (const environment of environments) {
    environment.paths.forEach((path, pathIndex) => {
      const owner = owners.get(path);
      if (!owner) {
        owners.set(path, { environment, index: pathIndex });
      } else if (owner.environment === environment) {
        add(
          ['environments', environment.index, 'paths', pathIndex],
          `path ${quoteValue(path)} is listed twice`,
          'remove one of them',
        );
      } else {
        const ownerName = owner.environment.name ?? `environments[${owner.environment.index}]`;
        add(
          ['environments', environment.index, 'paths', pathIndex],
          `path ${quoteValue(path)} already belongs to environment ${quoteValue(ownerName)}`,
          'each path belongs to one environment',
        );
      }
    });
  }

  const images = field(config, 'images');
  if (Array.isArray(images)) {
    const firstIndex = new Map<string, number>();
    images.forEach((image: unknown, index) => {
      const name = stringField(image, 'name');
      if (name === undefined) return;
      const first = firstIndex.get(name);
      if (first === undefined) {
        firstIndex.set(name, index);
      } else {
        add(
          ['images', index, 'name'],
          `duplicate policy for image ${quoteValue(name)}`,
          `images[${first}] already configures it; merge the two entries`,
        );
      }
    });
    // A Flux policy sets one image: listed under two, a marked field would belong to both.
    const policyOwner = new Map<string, number>();
    images.forEach((image: unknown, index) => {
      const policies = field(image, 'fluxPolicies');
      if (!Array.isArray(policies)) return;
      policies.forEach((policy: unknown, policyIndex) => {
        if (typeof policy !== 'string') return;
        const owner = policyOwner.get(policy);
        if (owner === undefined) policyOwner.set(policy, index);
        else if (owner !== index)
          add(
            ['images', index, 'fluxPolicies', policyIndex],
            `Flux policy ${quoteValue(policy)} is listed for two images`,
            `images[${owner}] already lists it; a policy sets one image, keep it under that one`,
          );
      });
    });
  }
}

// ── Suggestions ──────────────────────────────────────────────────────────────────────────────

/**
 * Longest name a suggestion is looked for: every key, policy and environment name is shorter.
 * Longer text is not a typo of one, and comparing it would cost time in the product of lengths.
 */
export const MAX_SUGGESTION_LENGTH = 64;

/**
 * Edit distance between two strings: insertions, deletions, substitutions and swaps of two
 * neighbouring characters (`dve` → `dev` is one edit), each costing one. With `max`, returns
 * `max + 1` for anything farther, and costs time in `a`'s length times `max`: only cells within
 * `max` of the diagonal can lead to a distance within it (Ukkonen's band), and it stops as soon
 * as a whole row is over `max`. Keeps three rows (a swap looks two back): memory linear in `b`.
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const m = b.length;
  // Cells outside the band read as Infinity; their true values are over `max` anyway.
  let before = new Array<number>(m + 2).fill(Infinity);
  let above = new Array<number>(m + 2).fill(Infinity);
  let row = new Array<number>(m + 2).fill(Infinity);
  for (let j = 0; j <= Math.min(m, max); j++) above[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(m, i + max);
    // The arrays are reused: clear what this row's neighbours will read just outside its band.
    row[0] = i;
    if (lo > 1) row[lo - 1] = Infinity;
    if (hi < m) row[hi + 1] = Infinity;
    let smallest = lo === 1 ? i : Infinity;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] as number) + 1);
      }
      row[j] = best;
      if (best < smallest) smallest = best;
    }
    // Rows never get smaller (a swap costs at least the substitution in the row between), so
    // once a whole row is over `max` the distance is too.
    if (smallest > max) return max + 1;
    [before, above, row] = [above, row, before];
  }
  const distance = above[m] as number;
  return distance > max ? max + 1 : distance;
}

/**
 * The candidate `text` most likely meant: equal ignoring case, `-` and `_` (`auto_merge` →
 * `autoMerge`), else the closest by edit distance when it is within a third of the length.
 * Text or candidates longer than {@link MAX_SUGGESTION_LENGTH} get no suggestion.
 */
export function closestMatch(text: string, candidates: readonly string[]): string | undefined {
  if (text.length > MAX_SUGGESTION_LENGTH) return undefined;
  const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const folded = fold(text);
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate.length > MAX_SUGGESTION_LENGTH) continue;
    const foldedCandidate = fold(candidate);
    if (foldedCandidate === folded) return candidate;
    const max = Math.min(Math.max(1, Math.floor(candidate.length / 3)), best ? best.distance - 1 : Infinity);
    const distance = editDistance(folded, foldedCandidate, max);
    if (distance <= max) best = { candidate, distance };
  }
  return best?.candidate;
}
