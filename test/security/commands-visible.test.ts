import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/planners/commands.js';

/**
 * Only a command on its own line of the text GitHub shows counts (CommonMark 0.31 block rules:
 * fenced and indented code, HTML blocks, blockquotes with their lazy continuation lines, inline
 * HTML comments spanning lines). A hidden command must never run.
 */
describe('parseCommand', () => {
  describe('when the command is not visible text on its own line', () => {
    it.each([
      ['an HTML comment on one line', '<!-- /escalator promote prod -->'],
      ['an HTML comment spanning lines', 'Looks good.\n<!--\n/escalator promote prod\n-->'],
      [
        'an HTML comment opened at the end of a paragraph line',
        'Looks good <!--\n/escalator promote prod\n-->\nthanks',
      ],
      ['an HTML comment with the command after its opener', '<!-- note\n\n/escalator promote prod\n\n-->'],
      [
        'an HTML comment closed only later, after text on the closing line',
        '<!--\n/escalator promote prod\nstill hidden --> visible',
      ],
      ['an indented code block (4 spaces)', '    /escalator promote prod'],
      ['an indented code block (a tab)', '\t/escalator promote prod'],
      ['an indented code block (2 spaces and a tab)', '  \t/escalator promote prod'],
      ['an indented line after a paragraph line', 'text\n     /escalator promote prod'],
      ['a backtick fence', '```\n/escalator promote prod\n```'],
      ['a tilde fence', '~~~\n/escalator promote prod\n~~~'],
      ['a longer fence that a shorter one does not close', '````\n```\n/escalator promote prod\n````'],
      ['a tilde fence that a backtick fence does not close', '~~~\n```\n/escalator promote prod\n~~~'],
      ['a backtick fence that a tilde fence does not close', '```\n~~~\n/escalator promote prod\n```'],
      ['a fence with an info string', '```sh\n/escalator promote prod\n```'],
      ['an indented fence (3 spaces)', '   ```\n/escalator promote prod\n   ```'],
      ['an unclosed fence (it runs to the end)', 'see:\n```\n/escalator promote prod'],
      [
        'a fence whose closing line has an info string (so it does not close)',
        '```\n```sh\n/escalator promote prod\n```',
      ],
      ['a fence inside a list item', '- step:\n  ```\n  /escalator promote prod\n  ```'],
      ['a blockquote', '> /escalator promote prod'],
      ['a nested blockquote', '> > /escalator promote prod'],
      ['a lazy continuation line of a blockquote', '> he wrote\n/escalator promote prod'],
      ['a <details> HTML block', '<details>\n/escalator promote prod\n</details>'],
      [
        'a collapsed <details> section, after a blank line',
        '<details>\n<summary>more</summary>\n\n/escalator promote prod\n\n</details>',
      ],
      [
        'a <details> section that is never closed',
        'see below\n\n<details><summary>more</summary>\n\n/escalator promote prod',
      ],
      ['nested <details> sections', '<details>\n\n<details>\n\n</details>\n\n/escalator promote prod\n\n</details>'],
      ['a <div hidden> HTML block', '<div hidden>\n/escalator promote prod\n</div>'],
      ['a <pre> HTML block spanning a blank line', '<pre>\n\n/escalator promote prod\n</pre>'],
      ['a <script> HTML block', '<script>\n/escalator promote prod\n</script>'],
      ['a processing instruction', '<?\n/escalator promote prod\n?>'],
      ['a CDATA section', '<![CDATA[\n/escalator promote prod\n]]>'],
      ['a line that starts with text', 'please /escalator promote prod'],
      ['a list item', '- /escalator promote prod'],
      ['a heading', '# /escalator promote prod'],
      ['a code span', '`/escalator promote prod`'],
    ])('ignores a command in %s', (_what, body) => {
      expect(parseCommand(body)).toBeNull();
    });
  });

  describe('when the command is visible on its own line', () => {
    it.each([
      ['alone', '/escalator promote prod'],
      ['indented by 3 spaces', '   /escalator promote prod'],
      ['after a closed HTML comment', '<!-- a note -->\n\n/escalator promote prod'],
      ['after a multi-line HTML comment', '<!--\nnote\n-->\n/escalator promote prod'],
      ['after an inline comment closed on its line', 'hi <!-- x --> there\n/escalator promote prod'],
      ['after a closed backtick fence', '```\ncode\n```\n/escalator promote prod'],
      ['after a closed longer fence', '````\n```\n````\n/escalator promote prod'],
      ['after a closed tilde fence', '~~~~\n~~~\n~~~~~\n/escalator promote prod'],
      ['after a blockquote and a blank line', '> he wrote\n\n/escalator promote prod'],
      ['after an HTML block and a blank line', '<div align="right">\n<b>x</b>\n\n/escalator promote prod'],
      [
        'after a closed <details> section',
        '<details>\n<summary>x</summary>\n\nlog\n\n</details>\n\n/escalator promote prod',
      ],
      ['after an indented code block', '    code\n\n/escalator promote prod'],
      ['with CRLF line ends', 'thanks\r\n\r\n/escalator promote prod\r\n'],
    ])('reads a command %s', (_what, body) => {
      expect(parseCommand(body)).toEqual({ ok: true, command: { name: 'promote', environment: 'prod' } });
    });

    it('reads the first visible command, not an earlier hidden one', () => {
      expect(parseCommand('<!--\n/escalator promote prod\n-->\n/escalator plan')).toEqual({
        ok: true,
        command: { name: 'plan' },
      });
      expect(parseCommand('    /escalator promote prod\n\n/escalator plan')).toEqual({
        ok: true,
        command: { name: 'plan' },
      });
    });

    it('refuses arguments that open an HTML comment on the command line', () => {
      expect(parseCommand('/escalator promote prod <!-- hidden -->')).toMatchObject({ ok: false });
    });
  });
});
