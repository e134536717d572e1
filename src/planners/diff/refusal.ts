import type { TargetNode } from './types.js';

/**
 * Why a target is refused before any tool runs, from what the graph found (src/planners/diff/targets.ts),
 * or nothing. One line naming each file, field and value; "cannot tell" comes first, since what
 * an unreadable file makes the tool read is unknown.
 */
export function planRefusal(node: TargetNode, allowRemote: boolean): string | undefined {
  if (node.unreadable && node.unreadable.length > 0) {
    const fix =
      node.kind === 'helm'
        ? "make the chart's Chart.yaml and values.schema.json files parse as helm reads them"
        : 'write the kustomization as one YAML mapping of the fields kustomize documents';
    return `refused: Escalator cannot tell what this target reads (${node.unreadable.join('; ')}); ${fix}, and push again`;
  }
  if (node.plugins.length > 0)
    return `refused: Escalator never runs exec or container plugins (${node.plugins.join('; ')})`;
  if (node.outside && node.outside.length > 0)
    return `refused: Escalator never reads outside the repository (${node.outside.join('; ')}); keep everything the overlay uses inside the repository`;
  if (node.arguments && node.arguments.length > 0)
    return `refused: values that reach helm's command line are not what helm expects (${node.arguments.join('; ')}); correct them and push again`;
  if (node.remote.length > 0 && !allowRemote)
    return `refused: remote resources are not fetched (${node.remote.join(', ')}); vendor them into the repository`;
  return undefined;
}
