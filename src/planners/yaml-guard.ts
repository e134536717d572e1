/**
 * Limits on YAML read from repositories, checked before and right after parsing so that hostile
 * text is refused in milliseconds instead of exhausting the worker: too large, nested too deep
 * (the `yaml` package recurses per level, and near the stack limit V8 can abort the process),
 * too many anchors or aliases (resolving an alias is linear in the document, so many aliases are
 * quadratic), or aliases that expand to a huge value (a "billion laughs" bomb).
 *
 * Pure: text and parsed documents in, a refusal (what is wrong, where, what to do) or nothing out.
 */
import { isAlias, isCollection, isPair, isScalar, Lexer, type Alias, type Document, type Node } from 'yaml';
import { parseYamlDocuments } from './yaml-parse.js';
import { lineAt } from './text.js';

export interface YamlLimits {
  /** Largest text, in UTF-16 code units (bytes for ASCII). */
  maxBytes: number;
  /** Deepest nesting of collections, flow (`[[…]]`) or block (indentation, `- - -`). */
  maxDepth: number;
  /** Most anchors, and most aliases, in one document. */
  maxAliases: number;
  /** Most nodes that aliases may add when the document is read as data. */
  maxAliasExpansion: number;
  /**
   * Most lines plus flow separators (`,`) in the text one parse reads: the parser's time grows
   * with the number of nodes (about 6 µs each here), not with the bytes.
   */
  maxNodes: number;
}

/**
 * Generous for any Kubernetes manifest, Kustomization or values file written by hand or by a
 * tool (the largest common CRD bundles are a few MB), tiny for an attacker.
 */
export const DEFAULT_YAML_LIMITS: YamlLimits = {
  maxBytes: 8 * 1024 * 1024,
  maxDepth: 100,
  maxAliases: 1_000,
  maxAliasExpansion: 100_000,
  maxNodes: 300_000,
};

export interface YamlLimitProblem {
  reason: string;
  /** 1-based line, when the problem has one place. */
  line?: number;
}

export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

function countChar(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count += 1;
  return count;
}

/**
 * The deepest flow nesting and where it is reached. Brackets are counted by the `yaml` lexer (a
 * state machine, so quotes, comments and plain scalars are read exactly as the parser reads
 * them); a file with fewer brackets than the limit cannot exceed it and is not lexed.
 */
function flowDepth(text: string, limit: number): { depth: number; offset: number } {
  if (countChar(text, '[') + countChar(text, '{') <= limit) return { depth: 0, offset: 0 };
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      depth += 1;
      if (depth > limit) return { depth, offset };
    } else if (token === ']' || token === '}') depth = Math.max(0, depth - 1);
    offset += token.length;
  }
  return { depth: 0, offset: 0 };
}

/**
 * Block nesting needs more indentation per level, except a sequence under a key (same column)
 * and compact sequences on one line (`- - - x`): depth ≤ 2 × indentation + leading dashes.
 * Limiting indentation to twice the depth and dashes to the depth keeps the parser's recursion
 * far from the stack limit whatever the file's indentation style.
 */
function blockDepth(text: string, limit: number): { what: string; offset: number } | undefined {
  let start = 0;
  while (start < text.length) {
    let at = start;
    while (text.charCodeAt(at) === 32) at += 1;
    if (at - start > limit * 2) return { what: `is indented ${at - start} columns`, offset: start };
    let dashes = 0;
    while (text.charCodeAt(at) === 45 /* - */ && (text.charCodeAt(at + 1) === 32 || text.charCodeAt(at + 1) === 10)) {
      dashes += 1;
      at += 2;
      while (text.charCodeAt(at) === 32) at += 1;
    }
    if (dashes > limit) return { what: `opens ${dashes} nested sequences`, offset: start };
    const newline = text.indexOf('\n', at);
    if (newline === -1) break;
    start = newline + 1;
  }
  return undefined;
}

/** The size of a file in UTF-8 bytes, before anything else reads it. */
export function checkYamlSize(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlLimitProblem | undefined {
  // A UTF-16 unit is 1 to 3 UTF-8 bytes: count the bytes only when the answer depends on it.
  if (text.length * 3 <= limits.maxBytes) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limits.maxBytes) return undefined;
  return {
    reason: `the file is ${formatSize(bytes)}, over the limit of ${formatSize(limits.maxBytes)} for one YAML file; split it into smaller files`,
  };
}

/**
 * A file's bytes as text, BOM kept, or why not: Escalator reads and rewrites only UTF-8, since
 * text decoded with replacement characters would put them into the file on the next write.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { problem: string } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    // The decoder does not say where; the first U+FFFD of a lenient decoding does (near enough
    // when the file also holds a real U+FFFD before it).
    const lenient = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    const at = Buffer.byteLength(lenient.slice(0, Math.max(0, lenient.indexOf('\uFFFD'))), 'utf8');
    return { problem: notUtf8(`an invalid byte near byte ${at}`) };
  }
}

/** Why text that does not encode back to its own byte count (lenient decoding happened) is refused. */
export function notUtf8(where?: string): string {
  return `the file is not UTF-8 text${where ? ` (${where})` : ''}; Escalator reads and rewrites only UTF-8 files, as rewriting it would change bytes it does not own. Save it as UTF-8`;
}

/**
 * The shape of text about to be parsed (the whole file, or the one document of a large stream
 * that can mention the image): how many nodes, how deeply nested. `offset` is where `text`
 * starts in `file`, for line numbers.
 */
export function checkYamlShape(
  text: string,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
  file = text,
  offset = 0,
): YamlLimitProblem | undefined {
  const nodes = countChar(text, '\n') + countChar(text, ',');
  if (nodes > limits.maxNodes) {
    return {
      reason: `the file has ${nodes.toLocaleString('en-US')} lines and list items to read at once, over the limit of ${limits.maxNodes.toLocaleString('en-US')}; split it into smaller files (or into several YAML documents)`,
    };
  }
  const flow = flowDepth(text, limits.maxDepth);
  if (flow.depth > limits.maxDepth) {
    const line = lineAt(file, offset + flow.offset);
    return {
      reason: `the file nests flow collections ([ or {) more than ${limits.maxDepth} levels deep at line ${line}; no manifest needs that many, flatten it`,
      line,
    };
  }
  const block = blockDepth(text, limits.maxDepth);
  if (block) {
    const line = lineAt(file, offset + block.offset);
    return {
      reason: `line ${line} ${block.what}, deeper than the limit of ${limits.maxDepth} nesting levels; no manifest needs that many, flatten it`,
      line,
    };
  }
  return undefined;
}

/** Size, then shape: for callers that parse the whole text at once. */
export function checkYamlText(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlLimitProblem | undefined {
  return checkYamlSize(text, limits) ?? checkYamlShape(text, limits);
}

/**
 * Every limit, for a file another program parses (kustomize, helm): size and shape, then anchors,
 * aliases and their expansion, which need a parse (done only when the text has both `&` and `*`).
 */
export function checkYamlInput(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlLimitProblem | undefined {
  const problem = checkYamlText(text, limits);
  if (problem || !text.includes('&') || !text.includes('*')) return problem;
  for (const doc of parseYamlDocuments(text, { prettyErrors: false })) {
    const aliases = resolveAliases(doc, text, 0, limits);
    if (aliases.problem) return aliases.problem;
  }
  return undefined;
}

/** Each alias's anchored node (undefined when no anchor precedes it), found in one pass. */
export type AliasTargets = Map<Alias, Node | undefined>;

type Walkable = Node | { key: unknown; value: unknown } | null | undefined;

/** The children of a node, in document order (a pair's key, then its value). */
function childrenOf(node: unknown): unknown[] {
  if (isCollection(node)) return node.items as unknown[];
  if (isPair(node)) return [node.key, node.value];
  return [];
}

/**
 * Resolves every alias of `doc` the way the `yaml` package does (the last anchor of that name
 * before the alias, in document order), in one walk instead of one walk per alias. Refuses a
 * document with more anchors or aliases than the limit, or whose aliases would expand to more
 * than `maxAliasExpansion` nodes.
 */
export function resolveAliases(
  doc: Document.Parsed,
  text: string,
  offset: number,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
): { targets: AliasTargets; problem?: YamlLimitProblem } {
  const targets: AliasTargets = new Map();
  const anchors = new Map<string, Node>();
  let anchorCount = 0;
  // An explicit stack: the document is already within the depth limit, but the walk need not recurse.
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop() as Walkable;
    if (node === null || node === undefined) continue;
    if (isAlias(node)) {
      targets.set(node, anchors.get(node.source));
      if (targets.size > limits.maxAliases) {
        const line = lineAt(text, offset + (node.range?.[0] ?? 0));
        return {
          targets,
          problem: {
            reason: `the file has more than ${limits.maxAliases} aliases (*name, here at line ${line}); write the values out instead of aliasing them`,
            line,
          },
        };
      }
      continue;
    }
    const anchor = (node as { anchor?: string }).anchor;
    if (typeof anchor === 'string' && (isScalar(node) || isCollection(node))) {
      anchors.set(anchor, node);
      anchorCount += 1;
      if (anchorCount > limits.maxAliases) {
        const line = lineAt(text, offset + (node.range?.[0] ?? 0));
        return {
          targets,
          problem: {
            reason: `the file has more than ${limits.maxAliases} anchors (&name, here at line ${line}); write the values out instead`,
            line,
          },
        };
      }
    }
    const children = childrenOf(node);
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]);
  }
  if (targets.size === 0) return { targets };
  const expansion = aliasExpansion(targets, limits.maxAliasExpansion);
  if (expansion > limits.maxAliasExpansion) {
    return {
      targets,
      problem: {
        reason: `the file's aliases expand to more than ${limits.maxAliasExpansion.toLocaleString('en-US')} values when read (an alias bomb, or an alias inside the value it names); write the values out instead`,
      },
    };
  }
  return { targets };
}

/** How many nodes the aliases add when the document is read as data, counted up to `cap` + 1. */
function aliasExpansion(targets: AliasTargets, cap: number): number {
  const sizes = new Map<unknown, number>();
  const sizeOf = (root: unknown): number => {
    // Post-order with an explicit stack; `sizes` holds -1 while a node is being measured, so an
    // alias that reaches a node containing it counts as unbounded.
    const stack: Array<{ node: unknown; expanded: boolean }> = [{ node: root, expanded: false }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { node: unknown; expanded: boolean };
      const node = isAlias(top.node) ? targets.get(top.node) : top.node;
      const known = sizes.get(node);
      if (known !== undefined && known >= 0) {
        stack.pop();
        continue;
      }
      if (known === -1 && !top.expanded) return cap + 1;
      const children = childrenOf(node);
      if (!top.expanded) {
        top.expanded = true;
        sizes.set(node, -1);
        for (const child of children) stack.push({ node: child, expanded: false });
        continue;
      }
      let size = 1;
      for (const child of children) size += sizes.get(isAlias(child) ? targets.get(child) : child) ?? 0;
      sizes.set(node, Math.min(size, cap + 1));
      stack.pop();
    }
    return sizes.get(isAlias(root) ? targets.get(root) : root) ?? 0;
  };
  let total = 0;
  for (const target of targets.values()) {
    if (target === undefined) continue;
    total += sizeOf(target);
    if (total > cap) return total;
  }
  return total;
}
