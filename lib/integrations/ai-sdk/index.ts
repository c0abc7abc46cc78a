/**
 * The Vercel AI SDK (`ai`, an optional peer dependency), by name.
 *
 * @module agent-state-machine/ai-sdk
 */
export { fromAISDK } from './fromAISDK';
export type { FromAISDKOptions, AISDKAgentLoop, AISDKCallSettings } from './fromAISDK';
export { usageFromAISDK } from './usageFromAISDK';
export { budgetFor } from './budgetFor';
export type { BudgetForOptions, AISDKBudgetGuard } from './budgetFor';
export { mirrorAISDK } from './mirrorAISDK';
export type { MirrorAISDKOptions, AISDKMirror, AISDKMirrorSettings, AISDKMirrorSettingsFor } from './mirrorAISDK';
