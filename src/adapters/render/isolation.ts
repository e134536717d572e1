import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readlinkSync,
  readSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';

/**
 * How kustomize and helm are kept from the network and from every file but their checkout
 * (issue 22, part 1: a kustomization the pre-check misses must still fetch nothing and read
 * nothing of another tenant).
 *
 * - `namespace` (the default): the tool runs in new user, network, mount, PID and IPC namespaces
 *   (`unshare`, util-linux). Its network namespace has only a loopback interface that is down, so
 *   no address at all can be reached — 127.0.0.1 included. Its root is a private tmpfs holding
 *   only the checkout (read-only, at the path it has outside, so arguments, working directory and
 *   error messages need no rewriting), the tool binaries (read-only, same paths, with their
 *   libraries when they are dynamic), `/dev/null`, and a writable HOME and /tmp inside that tmpfs
 *   (64 MiB at most). It is entered with chroot and every capability is dropped before the tool
 *   starts (`setpriv`: empty bounding set, no-new-privs, `noroot`), so the tool can neither mount,
 *   nor chroot out, nor reach the worker's processes (they are outside its PID namespace).
 * - `proxy`: for containers that forbid user namespaces. Every proxy variable Go's HTTP client,
 *   git and curl read points at port 0 of 127.0.0.1 (no process can listen there), git may use no
 *   transport at all, and the tool runs on a private copy of its checkout in a fresh 0700
 *   directory holding nothing else. Its gaps are real (docs/operations.md): Go never proxies
 *   `localhost` or loopback addresses, so those are fetched directly; the tool still sees the
 *   whole file system the worker sees, so an absolute path to a file readable by the worker is
 *   read; and nothing but the tool itself keeps it off raw sockets.
 *
 * The mode is probed once per process; when it does not work here every render is refused with
 * {@link isolationUnavailableMessage}. There is no third mode: Escalator never renders unisolated.
 */
export type RenderIsolationMode = 'namespace' | 'proxy';

export const RENDER_ISOLATION_MODES = ['namespace', 'proxy'] as const;

export interface IsolationSettings {
  /** @default namespace */
  mode?: RenderIsolationMode;
  /**
   * Executables the tool may start (kustomize starts helm through `--helm-command`); bound into the
   * sandbox at their own paths, besides the tool itself.
   */
  binaries?: string[];
  /** Where `unshare` is (tests point it at a path that does not exist to see the refusal). @default found on the system PATH */
  unshare?: string;
}

export type IsolationStatus = { available: true } | { available: false; reason: string };

/** One tool run, wrapped: what to spawn, where, with which environment, and what to clean up after. */
export interface IsolatedRun {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** The checkout's path as the tool sees it (for making error messages relative). */
  checkoutDir: string;
  dispose(): void;
}

/** Find an executable on a PATH string, like `command -v`. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Where the sandbox's own helpers are looked up: the system's directories, never the tool PATH. */
const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/** Scratch space (HOME and /tmp together) of one sandboxed render; writes past it fail with ENOSPC. */
export const SANDBOX_SCRATCH_BYTES = 64 * 1024 * 1024;

/** Proxy URL of the `proxy` mode: TCP port 0 can never be listened on, so every connection is refused. */
export const CLOSED_PROXY = 'http://127.0.0.1:0';

/** Exit status of the sandbox's set-up script when it could not build the sandbox. */
export const SETUP_FAILED = 125;
const SETUP_MARKER = 'escalator-sandbox: ';

/**
 * The set-up script run inside the new namespaces, before the tool: a tmpfs on the (empty, 0700)
 * mount point, every folder of the sandbox made in one `mkdir` (newline-separated in `$4`), then
 * every entry of `kind path extra` triples up to `--` (a bind mount or a link), then chroot
 * (unshare --root/--wd) and setpriv, which drops every capability and execs the tool. Bind mounts
 * are read-only, nosuid and nodev (noexec too for the checkout); /dev/null keeps device access.
 * The script's own PATH is the system's, restored for the tool before exec. One process per bind
 * and as few others as possible: every exec here is part of each render's cost.
 */
const SETUP_SCRIPT = `set -eu
tool_path=$PATH
PATH=${SYSTEM_PATH}
root=$1; wd=$2; size=$3; dirs=$4; shift 4
fail() { echo "${SETUP_MARKER}$*" >&2; exit ${SETUP_FAILED}; }
mount -t tmpfs -o "size=$size,mode=0755,nosuid,nodev" escalator-render "$root" || fail "cannot mount a private tmpfs root"
IFS='
'
set -f
(cd "$root" && mkdir -p $dirs) || fail "cannot make the folders of the sandbox"
set +f
unset IFS
while [ "$1" != -- ]; do
  kind=$1; path=$2; extra=$3; shift 3
  case "$kind" in
    link) ln -s "$extra" "$root$path" || fail "cannot link $path in the sandbox" ;;
    dir) mount --bind -o "$extra" "$path" "$root$path" 2>/dev/null || fail "cannot bind $path into the sandbox ($extra)" ;;
    file) : > "$root$path"; mount --bind -o "$extra" "$path" "$root$path" 2>/dev/null || fail "cannot bind $path into the sandbox ($extra)" ;;
    over) mount --bind -o nosuid,nodev,noexec "$extra" "$root$path" 2>/dev/null || fail "cannot bind a writable copy over $path in the sandbox" ;;
    *) fail "unknown entry $kind" ;;
  esac
done
shift
unshare=$1; setpriv=$2; shift 2
PATH=$tool_path
exec "$unshare" --root="$root" --wd="$wd" -- "$setpriv" --no-new-privs --bounding-set=-all --inh-caps=-all --ambient-caps=-all --securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked -- "$@"
`;

interface Helpers {
  unshare: string;
  sh: string;
  setpriv: string;
}

function findHelpers(unshare: string | undefined): Helpers | string {
  const found = {
    unshare: unshare ?? findExecutable('unshare', SYSTEM_PATH),
    sh: findExecutable('sh', SYSTEM_PATH),
    setpriv: findExecutable('setpriv', SYSTEM_PATH),
  };
  if (found.unshare === undefined || !existsSync(found.unshare))
    return `unshare (util-linux) is not installed${unshare ? ` at ${unshare}` : ''}`;
  if (found.setpriv === undefined) return 'setpriv (util-linux) is not installed';
  if (found.sh === undefined) return 'there is no /bin/sh';
  for (const tool of ['mount', 'mkdir', 'ln'])
    if (findExecutable(tool, SYSTEM_PATH) === undefined) return `${tool} is not installed`;
  return found as Helpers;
}

/** What a binary needs inside the sandbox besides itself. */
interface BinaryNeeds {
  /** Shared libraries and the program interpreter of a dynamic ELF binary. */
  libraries: string[];
  /** A script (`#!`): it needs an interpreter and the commands it runs, so it sees the system's /usr read-only. */
  script: boolean;
}

const needsCache = new Map<string, BinaryNeeds>();

function hasProgramInterpreter(header: Buffer): boolean {
  // ELF64/ELF32 little-endian program headers: PT_INTERP (3) means the binary is dynamic.
  const is64 = header[4] === 2;
  const phoff = is64 ? Number(header.readBigUInt64LE(0x20)) : header.readUInt32LE(0x1c);
  const phentsize = header.readUInt16LE(is64 ? 0x36 : 0x2a);
  const phnum = header.readUInt16LE(is64 ? 0x38 : 0x2c);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 4 > header.length) return true; // cannot tell: treat as dynamic, ldd decides
    if (header.readUInt32LE(at) === 3) return true;
  }
  return false;
}

function binaryNeeds(path: string): BinaryNeeds {
  const stat = statSync(path);
  const key = `${path}\0${stat.mtimeMs}\0${stat.size}`;
  const known = needsCache.get(key);
  if (known) return known;
  const header = Buffer.alloc(4096);
  const fd = openSync(path, 'r');
  let length: number;
  try {
    length = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  let needs: BinaryNeeds = { libraries: [], script: false };
  if (header.subarray(0, 2).toString('latin1') === '#!') needs = { libraries: [], script: true };
  else if (
    length > 64 &&
    header.subarray(0, 4).toString('latin1') === '\x7fELF' &&
    hasProgramInterpreter(header.subarray(0, length))
  ) {
    let listing: string;
    try {
      listing = execFileSync(findExecutable('ldd', SYSTEM_PATH) ?? 'ldd', [path], {
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { PATH: SYSTEM_PATH },
      }).toString('utf8');
    } catch {
      listing = '';
    }
    const libraries = [...listing.matchAll(/(?:=>\s*)?(\/[^\s)]+)\s+\(0x/g)].map((match) => match[1] as string);
    needs = { libraries: [...new Set(libraries)], script: false };
  }
  needsCache.set(key, needs);
  return needs;
}

let mountPoint: string | undefined;

/** The empty 0700 directory every sandbox mounts its private tmpfs on (inside its own mount namespace; it stays empty outside). */
function sandboxMountPoint(): string {
  if (mountPoint === undefined || !existsSync(mountPoint)) {
    const made = mkdtempSync(join(tmpdir(), 'escalator-sandbox-'));
    // rmdir, never a recursive remove: the folder is only ever a mount point, empty outside the sandboxes.
    if (mountPoint === undefined)
      process.once('exit', () => {
        try {
          rmdirSync(mountPoint ?? made);
        } catch {
          // already gone, or (unexpectedly) not empty: leave it
        }
      });
    mountPoint = made;
  }
  return mountPoint;
}

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The system directories a script tool sees read-only: /usr, and /bin, /lib… as the system has them (directories or links into /usr). */
function systemEntries(): string[] {
  const entries: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) entries.push('link', dir, readlinkSync(dir));
      else if (stat.isDirectory()) entries.push('dir', dir, 'ro,nosuid,nodev');
    } catch {
      // not on this system
    }
  }
  return entries;
}

interface NamespaceRunInput {
  helpers: Helpers;
  command: string;
  args: string[];
  /** The checkout (bound read-only), or undefined for the probe. */
  checkoutDir: string | undefined;
  binaries: string[];
  env: Record<string, string>;
  /** More folders the tool reads (values written for one render), bound read-only like the checkout. */
  readOnlyDirs?: readonly string[];
  /** Writable copies bound over folders of the checkout (after it), so a tool can write there and nowhere else. */
  overlays?: readonly Overlay[];
}

/**
 * A writable copy of one folder of the checkout (a chart whose dependencies `helm dependency build`
 * writes into `charts/`, or whose values.yaml is replaced): the tool sees `source` at `target`.
 */
export interface Overlay {
  /** The folder of the checkout it covers (absolute, inside the checkout). */
  target: string;
  /** The copy (absolute, outside the checkout); what the tool writes there stays for the next run. */
  source: string;
}

function namespaceRun(input: NamespaceRunInput): Omit<IsolatedRun, 'dispose'> {
  const { helpers } = input;
  const entries: string[] = [];
  const bound = new Set<string>();
  const bind = (kind: 'file' | 'dir', path: string, flags: string): void => {
    if (bound.has(path)) return;
    bound.add(path);
    entries.push(kind, path, flags);
  };
  const binaries = [input.command, ...input.binaries, helpers.setpriv];
  const needs = binaries.map((binary) => ({ binary, ...binaryNeeds(binary) }));
  // A script sees the system's program directories; what they hold needs no binding of its own.
  const system = needs.some((need) => need.script);
  if (system) entries.push(...systemEntries());
  const covered = (path: string): boolean => system && SYSTEM_DIRS.some((dir) => path.startsWith(`${dir}/`));
  for (const need of needs) {
    for (const path of [need.binary, ...need.libraries]) if (!covered(path)) bind('file', path, 'ro,nosuid,nodev');
  }
  entries.push('file', '/dev/null', 'nosuid');
  // Scripts (stand-ins in tests, wrappers some images ship) may read these too; the Go tools never do.
  if (system) for (const device of ['/dev/zero', '/dev/random', '/dev/urandom']) entries.push('file', device, 'nosuid');
  if (input.checkoutDir !== undefined) entries.push('dir', input.checkoutDir, 'ro,nosuid,nodev,noexec');
  for (const dir of input.readOnlyDirs ?? []) entries.push('dir', dir, 'ro,nosuid,nodev,noexec');
  for (const overlay of input.overlays ?? []) entries.push('over', overlay.target, overlay.source);
  // Folders: mount points of directories, parents of files and links, and the writable scratch
  // (HOME and /tmp live in the tmpfs itself; nobody else is inside to read them).
  const dirs = new Set<string>(['/tmp']);
  const home = input.env.HOME;
  if (home) for (const sub of ['', '/cache', '/config', '/data', '/plugins']) dirs.add(`${home}${sub}`);
  for (let i = 0; i < entries.length; i += 3) {
    const [kind, path] = [entries[i] as string, entries[i + 1] as string];
    if (kind !== 'over') dirs.add(kind === 'dir' ? path : dirname(path));
  }
  const paths = [...dirs, ...entries];
  if (paths.some((path) => path.includes('\n'))) throw new Error('a path of the sandbox holds a line break');
  const dirList = [...dirs]
    .filter((dir) => dir !== '/')
    .map((dir) => `.${dir}`)
    .join('\n');
  const wd = input.checkoutDir ?? '/';
  return {
    command: helpers.unshare,
    args: [
      '--user',
      '--map-root-user',
      '--net',
      '--mount',
      '--pid',
      '--fork',
      '--kill-child',
      '--ipc',
      '--propagation',
      'private',
      '--',
      helpers.sh,
      '-c',
      SETUP_SCRIPT,
      'escalator-sandbox',
      sandboxMountPoint(),
      wd,
      String(SANDBOX_SCRATCH_BYTES),
      dirList || '.',
      ...entries,
      '--',
      helpers.unshare,
      helpers.setpriv,
      input.command,
      ...input.args,
    ],
    cwd: '/', // the tool's working directory is set inside the sandbox (--wd)
    env: input.env,
    checkoutDir: input.checkoutDir ?? '',
  };
}

/** The environment additions of the `proxy` mode: every proxy Go, git and curl honour, closed; git with no transport. */
export function closedProxyEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'FTP_PROXY']) {
    env[name] = CLOSED_PROXY;
    env[name.toLowerCase()] = CLOSED_PROXY;
  }
  env.NO_PROXY = '';
  env.no_proxy = '';
  Object.assign(env, {
    GIT_ALLOW_PROTOCOL: 'none',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_SSH_COMMAND: '/bin/false',
  });
  return env;
}

const probes = new Map<string, Promise<IsolationStatus>>();

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.replace(SETUP_MARKER, '').slice(0, 300) ?? '';
}

async function probeNamespace(unshare: string | undefined): Promise<IsolationStatus> {
  const helpers = findHelpers(unshare);
  if (typeof helpers === 'string') return { available: false, reason: helpers };
  const run = namespaceRun({
    helpers,
    command: helpers.setpriv,
    args: ['--dump'],
    checkoutDir: undefined,
    binaries: [],
    env: { PATH: SYSTEM_PATH, HOME: '/tmp/home' },
  });
  return new Promise((resolve) => {
    execFile(run.command, run.args, { cwd: run.cwd, env: run.env, timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) resolve({ available: false, reason: firstLine(String(stderr)) || error.message });
      else if (!/Capability bounding set: \[none\]/.test(String(stdout)) || !/no_new_privs: 1/.test(String(stdout)))
        resolve({ available: false, reason: 'the sandbox did not drop its capabilities' });
      else resolve({ available: true });
    });
  });
}

/**
 * Whether a mode works on this machine; probed once per process (and `unshare` path) and cached.
 * `proxy` needs nothing from the kernel and is always available.
 */
export function probeIsolation(settings: IsolationSettings = {}): Promise<IsolationStatus> {
  const mode = settings.mode ?? 'namespace';
  const key = `${mode}\0${settings.unshare ?? ''}`;
  let pending = probes.get(key);
  if (!pending) {
    pending = mode === 'proxy' ? Promise.resolve({ available: true }) : probeNamespace(settings.unshare);
    probes.set(key, pending);
  }
  return pending;
}

/** The one sentence a target shows when isolation is not available: it was not rendered, why, and where to read more. */
export function isolationUnavailableMessage(mode: RenderIsolationMode, reason: string): string {
  return `not rendered: render isolation (${mode} mode) is not available on this worker (${reason}), and Escalator never runs kustomize or helm without it; see docs/operations.md`;
}

/** The message of a render whose sandbox could not be set up although the probe passed. */
export function sandboxFailureMessage(stderr: string): string | undefined {
  const line = stderr
    .split('\n')
    .find((text) => text.startsWith(SETUP_MARKER) || text.startsWith('unshare: ') || text.startsWith('setpriv: '));
  if (line === undefined) return undefined;
  return `not rendered: the render sandbox could not be set up (${firstLine(line)}); see docs/operations.md`;
}

/**
 * Wrap one tool run in the chosen isolation. `env` is the scrubbed environment the tool gets
 * (its HOME is created inside the sandbox, or in the private directory of the `proxy` mode).
 * The probe must have passed; callers check {@link probeIsolation} first.
 */
export function isolateRun(
  settings: IsolationSettings,
  command: string,
  args: string[],
  checkoutDir: string,
  env: Record<string, string>,
  readOnlyDirs: readonly string[] = [],
  overlays: readonly Overlay[] = [],
): IsolatedRun {
  const mode = settings.mode ?? 'namespace';
  if (mode === 'proxy') {
    const privateDir = mkdtempSync(join(tmpdir(), 'escalator-render-'));
    try {
      const copy = join(privateDir, 'checkout');
      // cp(1) copies a checkout about five times faster than fs.cpSync; links stay links.
      const cp = findExecutable('cp', SYSTEM_PATH);
      if (cp) execFileSync(cp, ['-a', '--', checkoutDir, copy], { stdio: 'ignore', timeout: 60_000 });
      else cpSync(checkoutDir, copy, { recursive: true, verbatimSymlinks: true });
      // Overlays replace their folder in the private copy, and what the tool writes goes back to them.
      const copyOf = (target: string): string => join(copy, relative(checkoutDir, target));
      const copyTree = (from: string, to: string): void => {
        rmSync(to, { recursive: true, force: true });
        if (cp) execFileSync(cp, ['-a', '--', from, to], { stdio: 'ignore', timeout: 60_000 });
        else cpSync(from, to, { recursive: true, verbatimSymlinks: true });
      };
      for (const overlay of overlays) copyTree(overlay.source, copyOf(overlay.target));
      const saveOverlays = (): void => {
        for (const overlay of overlays) copyTree(copyOf(overlay.target), overlay.source);
      };
      const home = join(privateDir, 'home');
      for (const sub of ['cache', 'config', 'data', 'plugins'])
        mkdirSync(join(home, sub), { recursive: true, mode: 0o700 });
      const rehomed = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [
          name,
          env.HOME && value.startsWith(env.HOME) ? home + value.slice(env.HOME.length) : value,
        ]),
      );
      return {
        command,
        args,
        cwd: copy,
        env: { ...rehomed, ...closedProxyEnv(), TMPDIR: join(privateDir, 'home') },
        checkoutDir: copy,
        dispose: () => {
          try {
            saveOverlays();
          } finally {
            rmSync(privateDir, { recursive: true, force: true });
          }
        },
      };
    } catch (error) {
      rmSync(privateDir, { recursive: true, force: true });
      throw error;
    }
  }
  const helpers = findHelpers(settings.unshare);
  if (typeof helpers === 'string') throw new Error(helpers);
  const run = namespaceRun({
    helpers,
    command,
    args,
    checkoutDir,
    binaries: (settings.binaries ?? []).filter((binary) => binary !== command),
    env,
    readOnlyDirs,
    overlays,
  });
  return { ...run, dispose: () => undefined };
}

/** What {@link warnIfRenderIsolationUnavailable} needs of a logger (pino's signature). */
export interface IsolationLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Probe the configured mode at worker start and say loudly when it does not work here: from then
 * on every kustomize and helm target of every pull request fails with
 * {@link isolationUnavailableMessage}. The probe's result is cached for the renders.
 */
export async function warnIfRenderIsolationUnavailable(
  log: IsolationLog,
  mode: RenderIsolationMode,
  settings: Omit<IsolationSettings, 'mode'> = {},
): Promise<IsolationStatus> {
  const status = await probeIsolation({ ...settings, mode });
  if (status.available) log.info({ mode }, 'Render isolation is available');
  else
    log.warn(
      { mode, reason: status.reason, docs: 'docs/operations.md' },
      'Render isolation is not available on this worker: every kustomize and helm render will be refused until it is (allow user namespaces, or set ESCALATOR_RENDER_ISOLATION=proxy)',
    );
  return status;
}
