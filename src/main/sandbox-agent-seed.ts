/**
 * The sandbox's seeded repository with `health:` on every environment, named after the simulated
 * agent's objects (`agentObjects`), so the agent's reports map to environments and apps. A copy:
 * the folder given is never changed.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentObjects, type AgentObject, type SimulatedAgentKind } from './sandbox-agent.js';

export function withAgentHealth(
  dir: string,
  agent: SimulatedAgentKind,
): { dir: string; objects: AgentObject[]; remove: () => void } {
  const copy = mkdtempSync(join(tmpdir(), 'escalator-sandbox-agent-'));
  const remove = () => rmSync(copy, { recursive: true, force: true });
  try {
    cpSync(dir, copy, { recursive: true, filter: (source) => !source.split(/[\\/]/).includes('.git') });
    const path = join(copy, '.github', 'escalator.yml');
    const apps = existsSync(join(copy, 'apps'))
      ? readdirSync(join(copy, 'apps'), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
      : [];
    if (!existsSync(path)) return { dir: copy, objects: [], remove };
    // Line by line: under `environments:`, each `- name: <env>` gets a `health:` line after it.
    const environments: string[] = [];
    let inEnvironments = false;
    const lines = readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((line) => {
        if (/^\S/.test(line)) inEnvironments = /^environments:/.test(line);
        const match = inEnvironments ? /^(\s*)-\s+name:\s*["']?([\w.-]+)["']?/.exec(line) : null;
        if (!match) return [line];
        const name = match[2] ?? '';
        environments.push(name);
        const indent = `${match[1] ?? ''}  `;
        return [line, `${indent}health: ${agentObjects(agent, [name], apps).health(name)}`];
      });
    writeFileSync(path, lines.join('\n'));
    return { dir: copy, objects: agentObjects(agent, environments, apps).objects, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
