// The framework crash test (test/helpers/frameworkCrash.ts) for AI SDK loops: `generateText` and
// `streamText` through `mirrorAISDK`, the real @ai-sdk/openai client (the child is bundled against
// the SDK major this project runs).
import * as ai from 'ai';
import { describeFrameworkCrash } from '../../helpers/frameworkCrash';

/** ai 7 has `isStepCount`. */
const AI7 = 'isStepCount' in ai;

describeFrameworkCrash('AI SDK loops', {
  fixture: 'aiSdkBatchToKill',
  variants: ['generate', 'stream'],
  alias: AI7 ? { ai: 'ai-7', '@ai-sdk/openai': '@ai-sdk/openai-4' } : {},
  seed: 7,
});
