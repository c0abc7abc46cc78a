// The framework loops the mirror-with-ledger suite times, each three ways on a mock model that
// answers at once (a tool call, then text: 2 steps and 1 tool call a run):
//  - bare:     the framework's loop alone;
//  - floor:    the same loop whose model, before each call, appends as many lines and bytes
//              as the mirror's file gains per call (history and reserve line), a write per
//              line, to a file in the same folder and forces them to the disk (bare writes +
//              fsync): the least the ledger's promise costs a writer of that file;
//  - mirrored: the loop with the library's mirror, its history in a file of that folder
//              (durability 'none', so the ledger's fsync is the only one), the ledger on;
//  - unledgered: the same mirror with the ledger off, its history in a file of its own, whose
//              model forces that file to the disk (an fsync) before each call, as the ledger
//              does its file: the same lines, written once, and the same fsyncs, without the
//              ledger, so that the suite tells the mirror's own work from the ledger's.
// Each framework is imported only when asked for: the Agents SDK needs Node 22 or later.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { generateText, stepCountIs } from 'ai';
import { z } from 'zod';
import type { Pricing } from '../lib/agent/AgentLoop';
import { JsonlHistorySink } from '../lib/history/JsonlHistorySink';
import { mirrorAISDK } from '../lib/integrations/ai-sdk/mirrorAISDK';
import { LangGraphMirror } from '../lib/integrations/langgraph/LangGraphMirror';
import type * as AgentsSdk from '@openai/agents';
import type * as AgentsMirrorModule from '../lib/integrations/openai-agents/agentsMirror';
import { FINAL_TEXT, mockModel, tools } from './aiSdkMock';
import { mockChatModel } from './mockChatModel';

export type FrameworkName = 'ai-sdk' | 'langgraph' | 'langgraph-graph' | 'openai-agents';

export interface FrameworkLoop {
  readonly label: string;
  readonly bare: () => Promise<void>;
  readonly floor: () => Promise<void>;
  readonly mirrored: () => Promise<void>;
  /** The mirror with the ledger off, its model forcing the mirror's history file to the disk before each call. */
  readonly unledgered: () => Promise<void>;
  /** The mirrored runs' history file, where the ledger's reserve lines are. */
  readonly historyFile: string;
  /** Model calls the mirror has charged so far, for checking it saw every run. */
  readonly mirroredCalls: () => number;
  /** The same, of the mirror with the ledger off. */
  readonly unledgeredCalls: () => number;
  readonly close: () => void;
}

const MAX_TOKENS = 1000;
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 1e-6;
const mirrorOptions = { logger: false as const, ledger: true, pricing, budget: { maxCostUsd: 1e9, strict: false } };
const unledgeredOptions = { ...mirrorOptions, ledger: false };

/**
 * The floor's writes + fsync before each model call. Sized once the mirror's file is known: as
 * many lines and bytes as that file gains per model call (its history lines and the ledger's
 * reserve line), a write per line as the sink makes them (each line readable as it happens),
 * then an fsync. The ledger's fsync forces every byte the file gained since the last one, and a
 * bigger flush costs more (measured here: 136 µs for 300 bytes, 150–226 µs for 2,500), so a
 * floor that wrote only a reserve line would charge the mirror for the history a writer of
 * the same file must write and force with it.
 */
export class FsyncBeforeCall {
  readonly #fd: number;
  #lines = ['x'.repeat(200) + '\n'];
  constructor(file: string) {
    this.#fd = fs.openSync(file, 'a');
  }
  /** Sizes the lines as those `historyFile` (one mirrored run) holds per model call, its meta line left out. */
  sizeAs(historyFile: string): { bytes: number; lines: number } {
    const lines = fs.readFileSync(historyFile, 'utf8').split('\n');
    const calls = lines.filter((l) => l.startsWith('{"type":"reserve"')).length;
    if (calls === 0) throw new Error(`the mirror wrote no reserve line to ${historyFile}: is the ledger on?`);
    const kept = lines.filter((l) => l !== '' && !l.startsWith('{"type":"meta"'));
    const bytes = Math.round(kept.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) / calls);
    const count = Math.max(1, Math.round(kept.length / calls));
    const each = Math.max(1, Math.round(bytes / count) - 1);
    this.#lines = Array.from({ length: count }, () => `${'x'.repeat(each)}\n`);
    return { bytes, lines: count };
  }
  readonly before = (): void => {
    for (const line of this.#lines) fs.writeSync(this.#fd, line);
    fs.fsyncSync(this.#fd);
  };
  close(): void {
    fs.closeSync(this.#fd);
  }
}

/**
 * An fsync of another writer's file before each model call: the ledger-off mirror's history,
 * forced as often as the ledger forces its file, with no bytes of its own. Opened at the first
 * call, once the mirror has made the file.
 */
export class FsyncOf {
  #fd: number | undefined;
  constructor(readonly file: string) {}
  readonly before = (): void => {
    this.#fd ??= fs.openSync(this.file, 'r');
    fs.fsyncSync(this.#fd);
  };
  close(): void {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
  }
}

/** A close that closes each of `parts`, all of them whatever one throws; the first error is thrown once all ran. */
function closing(...parts: { close(): void }[]): () => void {
  return () => {
    let failure: unknown;
    for (const part of parts)
      try {
        part.close();
      } catch (error) {
        failure ??= error;
      }
    if (failure !== undefined) throw failure;
  };
}

function sinkIn(dir: string, name: string): { file: string; sink: JsonlHistorySink } {
  const file = path.join(dir, `${name}.jsonl`);
  return { file, sink: JsonlHistorySink.open(file, { runId: name, durability: 'none' }) };
}

async function aiSdk(dir: string, fsync: FsyncBeforeCall): Promise<FrameworkLoop> {
  const bareModel = mockModel();
  /** A mock model that calls `before` before each answer. */
  const modelBefore = (before: () => void): ReturnType<typeof mockModel> => {
    const model = mockModel();
    const answer = model.doGenerate.bind(model);
    model.doGenerate = (options: Parameters<typeof answer>[0]) => {
      before();
      return answer(options);
    };
    return model;
  };
  const historyFile = path.join(dir, 'ai-sdk.jsonl');
  const m = mirrorAISDK({
    ...mirrorOptions,
    model: mockModel(),
    tools,
    historyFile,
    historyOptions: { runId: 'ai-sdk', durability: 'none' },
  });
  const forced = new FsyncOf(path.join(dir, 'ai-sdk-unledgered.jsonl'));
  const unledgered = mirrorAISDK({
    ...unledgeredOptions,
    model: modelBefore(forced.before),
    tools,
    historyFile: forced.file,
    historyOptions: { runId: 'ai-sdk-unledgered', durability: 'none' },
  });
  const mirroredRun = (mirror: typeof m, name: string) => async (): Promise<void> => {
    const r = await generateText({ ...mirror.settings, maxOutputTokens: MAX_TOKENS, prompt: 'go' });
    if (r.text !== FINAL_TEXT || mirror.result?.outcome !== 'end_of_turn')
      throw new Error(`${name} run ended ${mirror.result?.outcome}: ${r.text}`);
  };
  const plain = (model: typeof bareModel) => async (): Promise<void> => {
    const r = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(20),
      maxOutputTokens: MAX_TOKENS,
      prompt: 'go',
    });
    if (r.text !== FINAL_TEXT) throw new Error(`the loop answered ${r.text}`);
  };
  return {
    label: 'AI SDK generateText (ai/test MockLanguageModelV3)',
    bare: plain(bareModel),
    floor: plain(modelBefore(fsync.before)),
    mirrored: mirroredRun(m, 'the mirror with the ledger'),
    unledgered: mirroredRun(unledgered, 'the mirror with the ledger off'),
    historyFile,
    mirroredCalls: () => m.mirror.usage.llmCalls,
    unledgeredCalls: () => unledgered.mirror.usage.llmCalls,
    close: closing(m, unledgered, forced),
  };
}

/**
 * LangGraph's ReAct agent. `observe` is where the mirror hears it: `'wrapped'` (the model and
 * tools it wrapped report to it; the graph runs with no handler of its own) or `'graph'` (the
 * handler rides the graph's callbacks, and LangChain reports every node, channel write and
 * branch of each step to them).
 */
async function langGraph(dir: string, fsync: FsyncBeforeCall, observe: 'graph' | 'wrapped'): Promise<FrameworkLoop> {
  const list = () =>
    tool(async () => 'README.md lib/', {
      name: 'list',
      description: 'Lists a folder',
      schema: z.object({ dir: z.string() }),
    });
  const bareAgent = createReactAgent({ llm: mockChatModel(MAX_TOKENS), tools: [list()] });
  const floorAgent = createReactAgent({ llm: mockChatModel(MAX_TOKENS, fsync.before), tools: [list()] });
  const { file, sink } = sinkIn(dir, `langgraph-${observe}`);
  const lg = new LangGraphMirror({ ...mirrorOptions, sink, observe });
  // Both wrapped, as a resumable run's are; observing 'graph', the wrappers only serve a resumed run's calls.
  const mirroredAgent = createReactAgent({
    llm: lg.wrapModel(mockChatModel(MAX_TOKENS)),
    tools: lg.wrapTools([list()]),
  });
  const other = sinkIn(dir, `langgraph-${observe}-unledgered`);
  const forced = new FsyncOf(other.file);
  const unledgered = new LangGraphMirror({ ...unledgeredOptions, sink: other.sink, observe });
  const unledgeredAgent = createReactAgent({
    llm: unledgered.wrapModel(mockChatModel(MAX_TOKENS, forced.before)),
    tools: unledgered.wrapTools([list()]),
  });
  const ask = { messages: [{ role: 'user', content: 'go' }] };
  const check = (out: { messages: { content: unknown }[] }): void => {
    if (out.messages.at(-1)?.content !== 'done') throw new Error('the graph did not answer');
  };
  const mirroredRun =
    (mirror: LangGraphMirror, agent: typeof mirroredAgent, name: string) => async (): Promise<void> => {
      check(await mirror.run(agent, ask));
      if (mirror.result?.outcome !== 'end_of_turn') throw new Error(`${name} run ended ${mirror.result?.outcome}`);
    };
  return {
    label: `LangGraph createReactAgent (a mock chat model), observe: '${observe}'`,
    bare: async () => check(await bareAgent.invoke(ask)),
    floor: async () => check(await floorAgent.invoke(ask)),
    mirrored: mirroredRun(lg, mirroredAgent, 'the mirror with the ledger'),
    unledgered: mirroredRun(unledgered, unledgeredAgent, 'the mirror with the ledger off'),
    historyFile: file,
    mirroredCalls: () => lg.usage.llmCalls,
    unledgeredCalls: () => unledgered.usage.llmCalls,
    close: closing(sink, other.sink, forced),
  };
}

async function openaiAgents(dir: string, fsync: FsyncBeforeCall): Promise<FrameworkLoop> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS copy, the one the mirror (required below) checks its Agent against
  const sdk = require('@openai/agents') as typeof AgentsSdk;
  // Loaded here, not at the top: the Agents SDK needs Node 22 or later.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only on the Node that can run it
  const { agentsMirror } = require('../lib/integrations/openai-agents/agentsMirror') as typeof AgentsMirrorModule;
  sdk.setTracingDisabled(true);
  const list = sdk.tool({
    name: 'list',
    description: 'Lists a folder',
    parameters: z.object({ dir: z.string() }),
    execute: async () => 'README.md lib/',
  });
  const model = (before?: () => void): AgentsSdk.Model => {
    let n = 0;
    const answer = async (): Promise<AgentsSdk.ModelResponse> => {
      before?.();
      n += 1;
      const output: AgentsSdk.ModelResponse['output'] =
        n % 2 === 1
          ? [
              {
                type: 'function_call',
                callId: `c${n}`,
                id: `fc_${n}`,
                name: 'list',
                arguments: '{"dir":"."}',
                status: 'completed',
              },
            ]
          : [
              {
                type: 'message',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: 'done' }],
              },
            ];
      return {
        output,
        usage: new sdk.Usage({ requests: 1, inputTokens: 800, outputTokens: 30, totalTokens: 830 }),
        responseId: `r${n}`,
      };
    };
    return {
      getResponse: answer,
      getStreamedResponse: () => {
        throw new Error('the bench does not stream');
      },
    };
  };
  const agent = (before?: () => void) =>
    new sdk.Agent({ name: 'bench', model: model(before), tools: [list], modelSettings: { maxTokens: MAX_TOKENS } });
  const bareAgent = agent();
  const floorAgent = agent(fsync.before);
  const mirroredAgent = agent();
  const runner = new sdk.Runner();
  const { file, sink } = sinkIn(dir, 'openai-agents');
  const sm = agentsMirror({ ...mirrorOptions, sink });
  const other = sinkIn(dir, 'openai-agents-unledgered');
  const forced = new FsyncOf(other.file);
  const unledgered = agentsMirror({ ...unledgeredOptions, sink: other.sink });
  const unledgeredAgent = agent(forced.before);
  const check = (out: { finalOutput?: unknown }): void => {
    if (out.finalOutput !== 'done') throw new Error(`the agent answered ${String(out.finalOutput)}`);
  };
  return {
    label: 'OpenAI Agents SDK run (a mock Model)',
    bare: async () => check(await runner.run(bareAgent, 'go')),
    floor: async () => check(await runner.run(floorAgent, 'go')),
    mirrored: async () => check(await sm.run(mirroredAgent, 'go')),
    unledgered: async () => check(await unledgered.run(unledgeredAgent, 'go')),
    historyFile: file,
    mirroredCalls: () => sm.usage.llmCalls,
    unledgeredCalls: () => unledgered.usage.llmCalls,
    close: closing(sink, other.sink, forced),
  };
}

export function frameworkLoop(name: FrameworkName, dir: string, fsync: FsyncBeforeCall): Promise<FrameworkLoop> {
  if (name === 'ai-sdk') return aiSdk(dir, fsync);
  if (name === 'langgraph') return langGraph(dir, fsync, 'wrapped');
  if (name === 'langgraph-graph') return langGraph(dir, fsync, 'graph');
  return openaiAgents(dir, fsync);
}
