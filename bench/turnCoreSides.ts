// The two units the turncore suite times, on one turn core (bench/roundStart.ts): an adapter turn
// and a mirrored AI SDK run. The CPU-time rows (turnCore.bench.ts) and the instruction counts
// (turnCoreInstructions.ts, through turnCoreChild.ts) drive the same ones.
import { generateText } from 'ai';
import type { AgentLoop, LLMResponse, ToolCall } from '../lib/agent/AgentLoop';
import { FINAL_TEXT, mockModel, tools } from './aiSdkMock';
import type { TurnCore } from './roundStart';

export type TurnCoreKey = 'adapter' | 'mirror';

/** Loads a bundle made by `buildTurnCores` (bench/roundStart.ts). */
export function loadTurnCore(file: string): TurnCore {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle built at run time, loaded synchronously
  return require(file) as TurnCore;
}

function zeroLatencyAgent(): AgentLoop {
  const toolReply: LLMResponse = {
    toolCalls: [{ id: 'call_1', name: 'list_files', input: { dir: '.' } }],
    usage: { inputTokens: 800, outputTokens: 30, costUsd: 0.003 },
  };
  const textReply: LLMResponse = { text: 'done', usage: { inputTokens: 900, outputTokens: 25, costUsd: 0.003 } };
  return {
    sendUserMessage: async () => toolReply,
    sendToolResults: async () => textReply,
    runTool: async (call: ToolCall) => ({ callId: call.id, output: 'README.md lib/' }),
  };
}

export interface Side {
  readonly adapterTurn: () => Promise<unknown>;
  readonly mirrorRun: () => Promise<unknown>;
}

/** One adapter and one mirror on `core`, each checked to end as it should every time. */
export function side(core: TurnCore): Side {
  const adapter = new core.AgentWithStateMachine(zeroLatencyAgent(), { budget: { maxCostUsd: 1e9, strict: false } });
  const m = core.mirrorAISDK({
    model: mockModel(),
    tools,
    budget: { maxCostUsd: 1e9, strict: false },
    pricing: (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6,
  });
  return {
    adapterTurn: async () => {
      const r = await adapter.runTurn('What files are here?');
      if (r.outcome !== 'end_of_turn' || r.transitions !== 12)
        throw new Error(`adapter turn ended ${r.outcome} after ${r.transitions} moves`);
    },
    mirrorRun: async () => {
      const r = await generateText({ ...m.settings, prompt: 'list the files' });
      if (r.text !== FINAL_TEXT || m.result?.outcome !== 'end_of_turn')
        throw new Error(`mirrored run ended ${m.result?.outcome}: ${r.text}`);
    },
  };
}
