/**
 * The product's waits, as the tests set them: a 200 ms bump debounce (1.5 s in production), a
 * 100 ms busy-repository retry (ESCALATOR_BUSY_RETRY_MS; 1 s) and a 200 ms dashboard debounce
 * (2 s). The tests wait for the job or the webhook they expect; these only say how soon it comes.
 * Every stack, Escalator process and sandbox a test starts takes them (a test may override one).
 */
export const testDelays = {
  ESCALATOR_DEBOUNCE_MS: '200',
  ESCALATOR_BUSY_RETRY_MS: '100',
  ESCALATOR_DASHBOARD_DEBOUNCE_MS: '200',
} as const;
