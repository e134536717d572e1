/**
 * The sandbox's seeded repository with `health:` on every environment, named after the simulated
 * agent's objects (`agentObjects`), so the agent's reports map to environments and apps. A copy:
 * the folder given is never changed.
 *
 * The configuration is checked first, by the checker the caller passes (Escalator's
 * `validate-config` checker; this package imports nothing of Escalator): a folder whose
 * configuration has a problem stops the sandbox before anything starts, with the file, line and
 * fix, instead of an Escalator that pauses the repository behind a "running" sandbox.
 * The agent's settings are merged by meaning: an environment without `health:` gets one line after
 * its `name:`; an environment with one keeps it, with its `argocd`/`flux` object replaced by the
 * simulated agent's (its other settings stay). Every other byte of the file stays as written.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Pair, type YAMLMap } from 'yaml';
import { agentObjects, type AgentObject, type SimulatedAgentKind } from './agent.js';

/** Where a repository keeps its Escalator configuration, and how to check one. */
export interface SeedConfigCheck {
  /** The configuration file, relative to the repository root (`.github/escalator.yml`). */
  path: string;
  /** The problems of `text` read from `file`, one per line as file:line:col: message (fix); undefined when there are none. */
  problems(text: string, file: string): string | undefined;
}

/** The seeded folder's configuration has problems; the message lists each as file:line:col: message (fix). */
export class SeededConfigError extends Error {
  constructor(file: string, problems: string) {
    super(
      [
        `${file} has problems, so Escalator would pause this repository and no pull request would come:`,
        problems,
        `Fix them (npm run escalator -- validate-config ${file} checks the file again), then start the sandbox again.`,
      ].join('\n'),
    );
    this.name = 'SeededConfigError';
  }
}

/** Throws SeededConfigError when `dir`'s configuration (when there is one) is not valid. */
export function checkSeededConfig(dir: string, config: SeedConfigCheck): void {
  const path = join(dir, config.path);
  if (!existsSync(path)) return;
  const problems = config.problems(readFileSync(path, 'utf8'), path);
  if (problems !== undefined) throw new SeededConfigError(path, problems);
}

export function withAgentHealth(
  dir: string,
  agent: SimulatedAgentKind,
  config: SeedConfigCheck,
): { dir: string; objects: AgentObject[]; remove: () => void } {
  checkSeededConfig(dir, config);
  const copy = mkdtempSync(join(tmpdir(), 'escalator-sandbox-agent-'));
  const remove = () => rmSync(copy, { recursive: true, force: true });
  try {
    cpSync(dir, copy, { recursive: true, filter: (source) => !source.split(/[\\/]/).includes('.git') });
    const path = join(copy, config.path);
    const apps = existsSync(join(copy, 'apps'))
      ? readdirSync(join(copy, 'apps'), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
      : [];
    if (!existsSync(path)) return { dir: copy, objects: [], remove };
    const { text, environments } = mergeAgentHealth(readFileSync(path, 'utf8'), agent, apps);
    writeFileSync(path, text);
    // The merge is ours: a problem in its result is a bug here, said as plainly as the user's own.
    checkSeededConfig(copy, config);
    return { dir: copy, objects: agentObjects(agent, environments, apps).objects, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/**
 * `text` (a valid configuration) with the simulated agent's `health` object on every environment,
 * edited in place: bytes outside the inserted line or the replaced `health:` value are kept.
 */
export function mergeAgentHealth(
  text: string,
  agent: SimulatedAgentKind,
  apps: string[],
): { text: string; environments: string[] } {
  const doc = parseDocument(text);
  const list = doc.get('environments', true);
  if (!isSeq(list)) return { text, environments: [] };
  const environments: string[] = [];
  const edits: Array<{ start: number; end: number; insert: string }> = [];
  let whole = false;
  const other = agent === 'argocd' ? 'flux' : 'argocd';
  for (const item of list.items) {
    if (!isMap(item)) continue;
    const name = item.get('name');
    if (typeof name !== 'string') continue;
    environments.push(name);
    const object = agentObjects(agent, [name], apps).health(name);
    const health = item.get('health', true);
    if (item.flow || !item.range) {
      // `- { name: dev, … }`: no line to add to; set it in the document and write that instead.
      item.set('health', merged(doc.createNode({}) as YAMLMap, health, agent, other, object, doc));
      whole = true;
      continue;
    }
    if (health === undefined) {
      const namePair = item.items.find((pair) => isScalar(pair.key) && pair.key.value === 'name') as Pair;
      const keyStart = (namePair.key as { range: [number, number, number] }).range[0];
      const valueEnd = (namePair.value as { range: [number, number, number] }).range[1];
      const lineEnd = text.indexOf('\n', valueEnd);
      const at = lineEnd === -1 ? text.length : lineEnd + 1;
      const indent = ' '.repeat(keyStart - (text.lastIndexOf('\n', keyStart) + 1));
      edits.push({ start: at, end: at, insert: `${lineEnd === -1 ? '\n' : ''}${indent}health: ${object}\n` });
      continue;
    }
    const range = (health as { range?: [number, number, number] }).range;
    if (!range) continue;
    // The simulated agent's object, then the user's other settings as they wrote them.
    const kept = isMap(health)
      ? health.items.flatMap((pair) => {
          const key = isScalar(pair.key) ? pair.key.value : undefined;
          if (key === agent || key === other) return [];
          const value = pair.value as { range?: [number, number, number]; flow?: boolean; toJSON(): unknown };
          const keyRange = (pair.key as { range?: [number, number, number] }).range;
          if (!keyRange || !value?.range) return [];
          if (isScalar(value) || value.flow) return [text.slice(keyRange[0], value.range[1])];
          return [`${text.slice(keyRange[0], keyRange[1])}: ${JSON.stringify(value.toJSON())}`];
        })
      : [];
    const replaced = text.slice(range[0], range[1]);
    edits.push({
      start: range[0],
      end: range[1],
      insert: `{ ${[object.slice(2, -2), ...kept].join(', ')} }${replaced.endsWith('\n') ? '\n' : ''}`,
    });
  }
  if (whole) return { text: doc.toString(), environments };
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.insert + out.slice(edit.end);
  return { text: out, environments };
}

/** The agent's object first, then the user's other health settings (without the other agent's object). */
function merged(
  into: YAMLMap,
  health: unknown,
  agent: SimulatedAgentKind,
  other: string,
  object: string,
  doc: ReturnType<typeof parseDocument>,
): YAMLMap {
  const ours = parseDocument(object).contents as YAMLMap;
  into.set(agent, ours.get(agent));
  if (isMap(health))
    for (const pair of health.items) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (key === agent || key === other) continue;
      into.items.push(doc.createPair(pair.key, pair.value));
    }
  into.flow = true;
  return into;
}
