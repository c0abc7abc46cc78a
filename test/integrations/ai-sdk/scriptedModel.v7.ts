// AI SDK 7 only (type-checked by tsconfig.v7.json, run by the ai7-openai7 jest project).
import type {
  LanguageModelV3CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { scriptedModel, type Step } from './scriptedModel';

/**
 * The scripted model of scriptedModel.ts as a `LanguageModelV4` (AI SDK 7's model interface): the
 * same steps, prompt checks and records, behind `MockLanguageModelV4`. The casts are sound for what
 * the script holds: text and tool calls out, text, tool calls and tool results in, parts whose
 * shapes V3 and V4 share (they differ in file parts).
 */
export function scriptedModelV4(
  steps: Step[],
): MockLanguageModelV4 & { prompts: ReturnType<typeof scriptedModel>['prompts'] } {
  const script = scriptedModel(steps);
  const model = new MockLanguageModelV4({
    modelId: 'mock-model-v4',
    doGenerate: async (options) =>
      (await script.doGenerate(
        options as unknown as LanguageModelV3CallOptions,
      )) as unknown as LanguageModelV4GenerateResult,
    doStream: async (options) =>
      (await script.doStream(
        options as unknown as LanguageModelV3CallOptions,
      )) as unknown as LanguageModelV4StreamResult,
  });
  return Object.assign(model, { prompts: script.prompts });
}
