export type {
  ConfigEdit,
  ConfigFileInput,
  ConfigFilePlan,
  ConfigPromotionPlan,
  ConfigRefusal,
  KeptValue,
} from './types.js';
import type { ConfigFileInput, ConfigPromotionPlan } from './types.js';

/**
 * Carry X's change to Y, file by file (see ./types.ts). Placeholder while the three-way planner
 * is built: it refuses every file, so nothing is ever written from it.
 */
export function planConfigPromotion(files: readonly ConfigFileInput[]): ConfigPromotionPlan {
  return {
    files: files.map((file) => ({
      path: file.path,
      outcome: 'refused',
      edits: [],
      kept: [],
      refusals: [{ file: 'target', line: 1, reason: 'configuration promotion is not built yet' }],
    })),
  };
}
