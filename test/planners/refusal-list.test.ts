import { describe, expect, it } from 'vitest';
import { refusalLines, refusalList } from '../../src/planners/markdown.js';

// The escalator/bump check lists refused files with refusalList, as pull request bodies do with
// refusalLines: a path or reason from a repository must not break out of its code span or inject markdown.
describe('refusalList', () => {
  it('keeps a path with backticks inside its code span and escapes the reason', () => {
    const lines = refusalList([
      { path: 'apps/a`](https://evil.example)`/x.yaml', line: 3, reason: 'duplicate key <img src=x> @team' },
    ]);
    expect(lines).toEqual(['- ``apps/a`](https://evil.example)`/x.yaml:3``: duplicate key &lt;img src=x&gt; \\@team']);
  });

  it('is the list the pull request body quotes', () => {
    const refused = [
      { path: 'a.yaml', reason: 'r' },
      { path: 'b`.yaml', line: 2, reason: 's' },
    ];
    expect(refusalLines(refused).slice(3)).toEqual(refusalList(refused).map((line) => `> ${line}`));
  });
});
