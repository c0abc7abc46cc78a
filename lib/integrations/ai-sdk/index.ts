// agent-state-machine/ai-sdk: the Vercel AI SDK (`ai`, an optional peer dependency), by name.
export { fromAISDK } from './fromAISDK';
export type { FromAISDKOptions, AISDKAgentLoop, AISDKCallSettings } from './fromAISDK';
export { usageFromAISDK } from './usageFromAISDK';
export { budgetFor } from './budgetFor';
export type { BudgetForOptions, AISDKBudgetGuard } from './budgetFor';
export { mirrorAISDK } from './mirrorAISDK';
export type { MirrorAISDKOptions, AISDKMirror, AISDKMirrorSettings, AISDKMirrorSettingsFor } from './mirrorAISDK';
