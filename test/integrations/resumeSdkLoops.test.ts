// Each ready-made loop, resumed from the journal of a run cut off after its second response:
// the recorded responses rebuild its conversation through acceptRecorded with no request, and
// the next live request, sent with the SDK's real client to the strict local server, is valid
// and the same as the one the uninterrupted run sent.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AgentWithStateMachine, type AgentLoop } from 'agent-state-machine';
import { JsonlHistorySink } from 'agent-state-machine/history';
import { resumeAgent } from 'agent-state-machine/replay';
import { fromAnthropic } from '../../lib/integrations/anthropic';
import { fromOpenAIChat, fromOpenAIResponses } from '../../lib/integrations/openai';
import { startAnthropicMessagesServer } from '../../examples/servers/anthropicMessagesServer';
import { startOpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { startOpenAIResponsesServer } from '../../examples/servers/openaiResponsesServer';
import { readFile, recordingSleep } from '../helpers/sdkLoopTest';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resume-sdk-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A server that answers two tool calls then text, the loop on it, and what each request carried. */
interface Setup {
  loop(): AgentLoop;
  /** The bodies of the requests the server accepted (rejected ones are counted apart). */
  requests(): unknown[];
  rejected(): number;
  /** The conversation part of a request body. */
  conversation(body: unknown): unknown;
  close(): Promise<void>;
}

function assistantTurns(messages: { role: string }[]): number {
  return messages.filter((m) => m.role === 'assistant').length;
}

async function chat(): Promise<Setup> {
  const replies = [
    { toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }] },
    { content: 'now b', toolCalls: [{ id: 'call_2', name: 'read_file', arguments: '{"path":"b.txt"}' }] },
    { content: 'both read' },
  ];
  // Answers by how far the conversation has got, so that a resumed run gets the reply the whole one got.
  const s = await startOpenAIChatServer({ respond: (b) => replies[assistantTurns(b.messages)]! });
  const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
  return {
    loop: () => fromOpenAIChat(client, { model: 'gpt-4o-mini', tools: { read_file: readFile }, system: 'Be terse.' }),
    requests: () => s.exchanges.filter((e) => e.rejected === undefined).map((e) => e.body),
    rejected: () => s.rejected.length,
    conversation: (body) => (body as { messages: unknown }).messages,
    close: () => s.close(),
  };
}

async function responses(): Promise<Setup> {
  const replies = [
    { toolCalls: [{ callId: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }] },
    { toolCalls: [{ callId: 'call_2', name: 'read_file', arguments: '{"path":"b.txt"}' }] },
    { text: 'both read' },
  ];
  const s = await startOpenAIResponsesServer({
    respond: (b) => replies[(b.input as { type?: string }[]).filter((x) => x.type === 'function_call').length]!,
  });
  const client = new OpenAI({ apiKey: 'sk-local', baseURL: s.baseURL });
  return {
    loop: () =>
      fromOpenAIResponses(client, { model: 'gpt-4.1-mini', tools: { read_file: readFile }, system: 'Be terse.' }),
    requests: () => s.exchanges.filter((e) => e.rejected === undefined).map((e) => e.body),
    rejected: () => s.rejected.length,
    conversation: (body) => (body as { input: unknown }).input,
    close: () => s.close(),
  };
}

async function anthropic(): Promise<Setup> {
  const replies = [
    { toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } }] },
    { text: 'now b', toolUses: [{ id: 'toolu_2', name: 'read_file', input: { path: 'b.txt' } }] },
    { text: 'both read' },
  ];
  const s = await startAnthropicMessagesServer({ respond: (b) => replies[assistantTurns(b.messages)]! });
  const client = new Anthropic({ apiKey: 'sk-ant-local', baseURL: s.baseURL });
  return {
    loop: () =>
      fromAnthropic(client, { model: 'claude-sonnet-4-5', tools: { read_file: readFile }, system: 'Be terse.' }),
    requests: () => s.exchanges.filter((e) => e.rejected === undefined).map((e) => e.body),
    rejected: () => s.rejected.length,
    conversation: (body) => (body as { messages: unknown }).messages,
    close: () => s.close(),
  };
}

describe.each([
  ['fromOpenAIChat', chat],
  ['fromOpenAIResponses', responses],
  ['fromAnthropic', anthropic],
])('%s resumed from a journal', (_name, setup) => {
  it.each([
    ['rerun', 'the cut-off read runs again'],
    ['serve', 'the cut-off read is answered as interrupted'],
  ] as const)('continues with a valid request (policy %s: %s)', async (policy, _what) => {
    const server = await setup();
    try {
      const whole = path.join(dir, 'whole.jsonl');
      const sink = JsonlHistorySink.open(whole, { runId: 'r' });
      const first = new AgentWithStateMachine(server.loop(), {
        sink,
        journal: true,
        logger: false,
        sleep: recordingSleep(),
      });
      expect((await first.runTurn('Read a.txt and b.txt')).outcome).toBe('end_of_turn');
      sink.close();
      const original = server.requests();
      expect(original).toHaveLength(3);

      // Cut just after the second response's journal line: b.txt's read was running.
      const lines = fs.readFileSync(whole, 'utf8').split('\n');
      const second = lines.findIndex((l) => l.includes('"type":"llm"') && l.includes('"sendToolResults"'));
      const cut = path.join(dir, 'cut.jsonl');
      fs.writeFileSync(cut, `${lines.slice(0, second + 1).join('\n')}\n`);

      const out = JsonlHistorySink.open(path.join(dir, 'resumed.jsonl'), { runId: 'r' });
      const { results, resumed } = await resumeAgent(cut, server.loop(), {
        sink: out,
        journal: true,
        logger: false,
        sleep: recordingSleep(),
        resumeTools: { default: 'serve', ...(policy === 'rerun' ? { rerun: ['read_file'] } : {}) },
      });
      out.close();
      expect(results.map((r) => [r.outcome, r.text, r.error?.message])).toEqual([
        ['end_of_turn', 'both read', undefined],
      ]);
      expect(resumed).toMatchObject({ mode: 'recovered', recordedCalls: 2 });
      // One request more, only for the call the file had no response to; the server rejected nothing.
      const all = server.requests();
      expect(all).toHaveLength(4);
      expect(server.rejected()).toBe(0);
      const live = server.conversation(all[3]);
      if (policy === 'rerun') expect(live).toEqual(server.conversation(original[2]));
      else expect(JSON.stringify(live)).toContain('interrupted: the run was cut off');
    } finally {
      await server.close();
    }
  });
});
