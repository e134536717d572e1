/** The `escalator` command: wiring only; commands live in src/cli. */
import { runCli } from '../cli/index.js';

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
process.exitCode = code;
