import { basename, resolve } from 'node:path';
import {
  LocalGitSourceTree,
  RENDER_ISOLATION_MODES,
  renderAndDiff,
  type RenderIsolationMode,
} from '../adapters/render/index.js';
import { configPath, formatProblems, parseRepoConfig, type RepoConfig } from '../config/repo-config.js';
import { ConflictError, NotFoundError } from '../observability/errors.js';
import { planSharedChange, reachEnvironments, renderComment, toJsonReport } from '../planners/diff/index.js';
import { parseArgs, terminalJson, UsageError, type CliIo, type ExitCode } from './io.js';

export const diffHelp = `Usage: escalator diff --base <rev> --head <rev> [--merged] [--repo <dir>] [--format markdown|json] [--path <pattern>…]

Render the Kustomize, Helm and plain-manifest targets that changed between two commits of a local
git repository, at both commits, and diff them per Kubernetes object. Prints exactly the comment
the GitHub App posts on a pull request (or the same report as JSON).

  --base <rev>          the commit to compare against (branch, tag or SHA)
  --head <rev>          the commit with the changes
  --merged              render head merged into base, as the App renders GitHub's merge commit of a
                        pull request (git merge-tree, git 2.38 or later; no ref or file changes).
                        The comment's "Reproduce locally" line says when to use it
  --repo <dir>          the git repository (default: the current directory)
  --format <format>     markdown (default) or json
  --path <pattern>      render only these targets (\`*\` matches one path segment); repeat for
                        more. Default: diff.paths of .github/escalator.yml at --base, as the App
                        reads it; when that is empty or absent, every target is discovered
  --repository <name>   owner/name shown in the comment (default: the directory's name)
  --cache-dir <dir>     checkouts and renders are cached here (default: <tmp>/escalator-render)
  --timeout <seconds>   stop a kustomize/helm run after this long (default: 60)
  --allow-remote        let kustomize fetch remote resources (refused by default)
  --render-isolation <mode>
                        namespace (default): kustomize and helm run with no network and see only
                        their checkout (needs user namespaces: \`unshare -rn true\` must work);
                        proxy: a weaker fallback for machines without them (docs/operations.md).
                        When the mode does not work here, every kustomize and helm target is
                        reported as not rendered

Secret values never appear in the output: Secrets show per key "changed (24 → 32 bytes)",
"added" or "removed". Tools: \`kustomize\` (else \`kubectl kustomize\`) and \`helm\` from PATH.
Exit status: 0 the diff was produced — also when it reports targets that fail to render (read the
report, or the JSON "failure" fields); 2 bad arguments or an unknown revision; 1 unexpected failure.`;

/** Take every `--path` (the shared parser keeps only the last value of an option). */
function takePaths(argv: string[]): { rest: string[]; paths: string[] } {
  const rest: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--path') {
      const value = argv[++i];
      if (value === undefined) throw new UsageError('--path needs a value');
      paths.push(value);
    } else if (arg.startsWith('--path=')) paths.push(arg.slice('--path='.length));
    else rest.push(arg);
  }
  return { rest, paths };
}

/**
 * The repository configuration at base, as the App reads it (the configuration of the branch a
 * pull request merges into), for its `diff.paths` and its environments. A file that does not parse
 * is said on stderr (unless `--path` is given), and every target is discovered, as the App does
 * without a valid configuration.
 */
function configAtBase(base: LocalGitSourceTree, io: CliIo, pathsGiven: boolean): RepoConfig | undefined {
  let text: string;
  try {
    text = base.read(configPath).toString('utf8');
  } catch {
    return undefined;
  }
  const parsed = parseRepoConfig(text, configPath);
  if (!parsed.ok) {
    // With --path its diff.paths do not matter; its environments only name a shared base's reach.
    if (!pathsGiven)
      io.stderr(
        `${configPath} at ${base.sha.slice(0, 7)} is not valid (run escalator validate-config ${configPath}); its diff.paths are not used, every target is discovered:\n${formatProblems(parsed.problems)}\n`,
      );
    return undefined;
  }
  return parsed.config;
}

function isRenderIsolationMode(value: string): value is RenderIsolationMode {
  return (RENDER_ISOLATION_MODES as readonly string[]).includes(value);
}

export async function runDiff(argv: string[], io: CliIo): Promise<ExitCode> {
  const { rest, paths } = takePaths(argv);
  const args = parseArgs(rest, {
    flags: ['help', 'allow-remote', 'merged'],
    options: ['repo', 'base', 'head', 'format', 'repository', 'cache-dir', 'timeout', 'render-isolation'],
  });
  if (args.flags.has('help')) {
    io.stdout(`${diffHelp}\n`);
    return 0;
  }
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument "${args.positionals[0]}"`);
  const baseRev = args.options.get('base');
  const headRev = args.options.get('head');
  if (!baseRev || !headRev) throw new UsageError('diff needs --base <rev> and --head <rev>');
  const format = args.options.get('format') ?? 'markdown';
  if (format !== 'markdown' && format !== 'json')
    throw new UsageError(`--format must be markdown or json, not "${format}"`);
  const timeout = args.options.get('timeout');
  const timeoutSeconds = timeout === undefined ? 60 : Number(timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new UsageError(`--timeout must be a positive number of seconds, not "${timeout}"`);
  const isolation = args.options.get('render-isolation') ?? 'namespace';
  if (!isRenderIsolationMode(isolation))
    throw new UsageError(`--render-isolation must be ${RENDER_ISOLATION_MODES.join(' or ')}, not "${isolation}"`);
  const repo = resolve(io.cwd, args.options.get('repo') ?? '.');

  let base: LocalGitSourceTree;
  let head: LocalGitSourceTree;
  let mergedFrom: string | undefined;
  try {
    base = LocalGitSourceTree.open(repo, baseRev);
    head = LocalGitSourceTree.open(repo, headRev);
    if (args.flags.has('merged')) {
      mergedFrom = head.sha;
      head = LocalGitSourceTree.merge(repo, base.sha, head.sha);
    }
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof ConflictError) throw new UsageError(error.message);
    throw error;
  }
  const cacheDir = args.options.get('cache-dir');
  const config = configAtBase(base, io, paths.length > 0);
  const report = await renderAndDiff({
    base,
    head,
    changedPaths: null,
    targets: paths.length > 0 ? paths : (config?.diff.paths ?? []),
    options: {
      timeoutMs: timeoutSeconds * 1000,
      allowRemote: args.flags.has('allow-remote'),
      isolation,
      ...(cacheDir ? { cacheDir: resolve(io.cwd, cacheDir) } : {}),
    },
  });
  if (format === 'json') {
    io.stdout(terminalJson(toJsonReport(report)));
    return 0;
  }
  // The same callout as the App's comment when the change reaches several environments at once.
  const sharedChange = config
    ? planSharedChange({ report, environments: reachEnvironments(config.environments), files: head.listFiles() })
    : undefined;
  io.stdout(
    renderComment(report, {
      baseSha: base.sha,
      headSha: head.sha,
      ...(mergedFrom !== undefined ? { mergedFrom } : {}),
      repository: args.options.get('repository') ?? basename(repo),
      ...(sharedChange ? { sharedChange } : {}),
    }),
  );
  return 0;
}
