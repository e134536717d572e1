/**
 * `npm start`: the product's process.
 * 1. load `.env` when present (as Probot does)
 * 2. without App credentials, serve the setup page (src/main/setup.ts: registers the App from app.yml)
 * 3. otherwise start the web and/or worker roles (ESCALATOR_ROLE)
 * 4. stop gracefully on SIGTERM/SIGINT
 */
import { existsSync } from 'node:fs';
import { needsAppSetup } from '../config/env.js';
import { createLogger } from '../observability/logger.js';
import { EnvError, startEscalator } from './server.js';
import { startSetup } from './setup.js';

if (existsSync('.env')) process.loadEnvFile('.env');

if (needsAppSetup(process.env) && process.env.NODE_ENV !== 'production') {
  // Probot's setup page: open the URL it prints, and it registers the App from app.yml and
  // writes APP_ID, PRIVATE_KEY and WEBHOOK_SECRET into .env. Restart afterwards.
  try {
    const setup = await startSetup(process.env, createLogger());
    const stop = (): void => {
      setup.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (error) {
    process.stderr.write(`The setup page could not start: ${(error as Error).message}\n`);
    process.exit(1);
  }
} else {
  try {
    const running = await startEscalator(process.env);
    const stop = (signal: string): void => {
      running.log.info({ signal }, 'Shutting down');
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  } catch (error) {
    process.stderr.write(
      `${error instanceof EnvError ? error.message : `Escalator failed to start: ${(error as Error).message}`}\n`,
    );
    process.exit(1);
  }
}
