export type {
  ConfigEdit,
  ConfigFileInput,
  ConfigFilePlan,
  ConfigPromotionPlan,
  ConfigRefusal,
  KeptValue,
} from './types.js';
export { refusedFile } from './plan-file.js';
import { planConfigFile, refusedFile } from './plan-file.js';
import type { ConfigFileInput, ConfigFilePlan, ConfigPromotionPlan } from './types.js';

/**
 * Carry X's change to Y, file by file (see ./types.ts and docs/configuration.md, "Promote
 * configuration — the three-way rules"): each file is planned on its own (`plan-file.ts`), and a
 * file with any refusal is not written.
 */
export function planConfigPromotion(files: readonly ConfigFileInput[]): ConfigPromotionPlan {
  return { files: files.map((file) => planSafely(file)) };
}

/** A planner bug refuses its file with what happened, rather than failing the whole promotion. */
function planSafely(file: ConfigFileInput): ConfigFilePlan {
  try {
    return planConfigFile(file);
  } catch (error) {
    return refusedFile(
      file.path,
      `internal error while planning this file (${(error as Error).message}); nothing was written, please report this and promote the file by hand meanwhile`,
    );
  }
}
