/** `/`-separated repository paths: the parent folder, '' at the root. */
export function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/** Join a relative reference onto a directory; `undefined` when it climbs out of the repository. */
export function resolvePath(dir: string, relative: string): string | undefined {
  if (relative.startsWith('/')) return undefined;
  const parts = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}
