/**
 * The environment of the golden corpora's own kustomize and helm runs (the checks that the
 * expected files mean what they claim to the real tools): Go's garbage collector off.
 *
 * Each run is short and small (under ~100 MB resident), and a `kubectl kustomize` of a golden
 * case spent about half of its CPU collecting garbage: `npx tsx bench/golden-renders.ts` prints
 * the CPU of the same renders both ways and checks their output is the same bytes. Only these
 * test-side renders use it; the product's renders run with the tools' defaults.
 */
export const goldenRenderEnv: Readonly<Record<string, string>> = { GOGC: 'off' };
