import { parseYamlDocuments } from '../yaml-parse.js';
import type { RenderOutcome, Target } from './types.js';

/**
 * Render a plain manifest target natively: its `.yaml`/`.yml` files in path order, joined as one
 * multi-document stream. `read` gives a file's text (undefined when missing). Objects are parsed
 * later with the same alias cap as every render.
 */
export function renderPlain(
  target: Target & { inputFiles: readonly string[] },
  read: (path: string) => string | undefined,
): RenderOutcome {
  const files = (target.file ? [target.file] : target.inputFiles).filter((path) => /\.ya?ml$/i.test(path));
  const parts: string[] = [];
  for (const path of [...files].sort()) {
    const text = read(path);
    if (text === undefined) continue;
    // Parse errors name the file here; once joined they could only name a document number.
    const error = parseYamlDocuments(text, { prettyErrors: false })
      .flatMap((document) => ('errors' in document ? document.errors : []))
      .at(0);
    if (error)
      return {
        status: 'failed',
        message: `${path}${error.linePos ? `:${error.linePos[0].line}` : ''}: ${error.message}`,
      };
    parts.push(`# Source: ${path}\n${text.endsWith('\n') ? text : `${text}\n`}`);
  }
  if (parts.length === 0) return { status: 'absent' };
  return { status: 'ok', yaml: parts.join('---\n') };
}
