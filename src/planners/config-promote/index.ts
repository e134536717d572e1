export type {
  ConfigEdit,
  ConfigFileInput,
  ConfigFilePlan,
  ConfigPromotionPlan,
  ConfigRefusal,
  KeptValue,
} from './types.js';
import { planConfigFile } from './plan-file.js';
import type { ConfigFileInput, ConfigPromotionPlan } from './types.js';

/**
 * Carry X's change to Y, file by file (see ./types.ts and docs/configuration.md, "Promote
 * configuration — the three-way rules"): each file is planned on its own (`plan-file.ts`), and a
 * file with any refusal is not written.
 */
export function planConfigPromotion(files: readonly ConfigFileInput[]): ConfigPromotionPlan {
  return { files: files.map((file) => planConfigFile(file)) };
}
