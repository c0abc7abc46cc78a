// An Agents SDK run given `resumeFrom`: a run cut off after its first model call and its tool
// goes on from its journal. The recorded response reaches the SDK's own loop with no request,
// the recorded tool result with no tool run, and then the run goes live with the very request
// the cut-off run would have sent next. The same in a batch: a cut-off Agents SDK task of a
// resumed batch continues instead of starting again.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { JsonlHistorySink, loadHistory, validateHistory } from 'agent-state-machine/history';
import { runBatch, type RecordedLine, type StepMirror } from 'agent-state-machine';
import { AgentsMirror } from '../../../lib/integrations/openai-agents';
import { cannedModel, type CannedModel, type CannedStep } from './cannedModel';

setTracingDisabled(true);

const pricing = (u: { inputTokens?: number; outputTokens?: number }): number =>
  ((u.inputTokens ?? 0) * 10 + (u.outputTokens ?? 0) * 20) / 1e6; // $0.02 a call below
const STEPS: CannedStep[] = [
  { calls: [{ id: 'call_1', name: 'weather', args: { city: 'Oslo' } }], inputTokens: 1000, outputTokens: 500 },
  { text: 'Sunny in Oslo.', inputTokens: 1000, outputTokens: 500 },
];

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-agents-resume-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function weatherAgent(
  model: CannedModel,
  calls: { n: number },
  result: (city: string) => unknown = (city) => `sunny in ${city}`,
): Agent {
  const weather = tool({
    name: 'weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => (calls.n++, result(city) as string),
  });
  return new Agent({ name: 'forecaster', model, tools: [weather] });
}

describe.each([false, true])('an Agents SDK run resumed from a cut-off run (streamed: %s)', (stream) => {
  async function run(
    file: string,
    model: CannedModel,
    calls: { n: number },
    resumeFrom?: object,
    result?: (city: string) => unknown,
  ) {
    const sink = JsonlHistorySink.open(file, { runId: 'weather' });
    const mirror = new AgentsMirror({
      pricing,
      logger: false,
      journal: true,
      sink,
      ...(resumeFrom === undefined ? {} : { resumeFrom: resumeFrom as never }),
    });
    const agent = weatherAgent(model, calls, result);
    let output: unknown;
    if (stream) {
      const result = await mirror.run(agent, 'Weather in Oslo?', { stream: true });
      await result.completed;
      output = result.finalOutput;
    } else output = (await mirror.run(agent, 'Weather in Oslo?')).finalOutput;
    sink.close();
    return { mirror, output };
  }

  it('serves the recorded response and tool result with no request, then sends the request the run would have sent', async () => {
    const calls = { n: 0 };
    const firstModel = cannedModel(STEPS);
    const first = path.join(dir, 'first.jsonl');
    await run(first, firstModel, calls);
    expect(calls.n).toBe(1);
    // The journal as a kill after the tool would have left it: the second response is missing.
    const journal = [...(await loadHistory(first)).journal] as unknown as RecordedLine[];
    const llmLines = journal.filter((l) => l.type === 'llm');
    expect(llmLines).toHaveLength(2);
    const cut = journal.filter((l) => l !== llmLines[1]);

    const model = cannedModel([STEPS[1]!]);
    const file = path.join(dir, 'resumed.jsonl');
    const { mirror, output } = await run(file, model, calls, {
      journal: cut,
      usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 },
    });
    expect(output).toBe('Sunny in Oslo.');
    // One request: the second one, with the input the cut-off run sent, but for the provider's
    // own id of the function_call item, which the journal does not keep (the call id it keeps).
    expect(model.requests).toHaveLength(1);
    const withoutItemIds = (input: unknown) =>
      (input as Record<string, unknown>[]).map((item) =>
        item.type === 'function_call' ? { ...item, id: undefined } : item,
      );
    expect(withoutItemIds(model.requests[0]!.input)).toEqual(withoutItemIds(firstModel.requests[1]!.input));
    // The tool was not run again: its recorded result was served.
    expect(calls.n).toBe(1);
    expect(mirror.mirror.resumed).toMatchObject({ mode: 'recovered', recordedCalls: 1, servedTools: 1 });
    expect(mirror.usage).toMatchObject({ llmCalls: 2, toolCalls: 1 });
    expect(mirror.usage.costUsd).toBeCloseTo(0.04, 10);
    const history = await loadHistory(file);
    expect(validateHistory(history.entries).issues).toEqual([]);
    const served = history.journal.filter((l) => (l as { fromJournal?: boolean }).fromJournal === true);
    expect(served.map((l) => l.type)).toEqual(['llm', 'tool']);
  });

  // The SDK gives the model a tool's result as its toSmartString: the journal keeps that text,
  // so the served result reaches the model as the live one did, whatever the tool returned.
  it.each([
    ['undefined', () => undefined],
    ['null', () => null],
    ['a number', () => 21],
    ['NaN', () => Number.NaN],
    ['a bigint', () => 10n],
    ['an object', (city: string) => ({ city, sky: 'clear', temp: [18, 21] })],
    ['an object sharing a part', () => ((part) => ({ a: part, b: part }))({ sky: 'clear' })],
    ['a cycle', () => ((o: Record<string, unknown>) => ((o.self = o), o))({ sky: 'clear' })],
    ['bytes', () => Buffer.from('sunny, 21 degrees, light wind from the west')],
    ['an object holding bytes', () => ({ map: new Uint8Array([1, 2, 255]) })],
  ])('serves a tool that returned %s as the live run sent it to the model', async (_name, result) => {
    const calls = { n: 0 };
    const firstModel = cannedModel(STEPS);
    const first = path.join(dir, 'first.jsonl');
    await run(first, firstModel, calls, undefined, result);
    const journal = [...(await loadHistory(first)).journal] as unknown as RecordedLine[];
    const cut = journal.filter((l) => l !== journal.filter((j) => j.type === 'llm')[1]);
    const model = cannedModel([STEPS[1]!]);
    await run(path.join(dir, 'resumed.jsonl'), model, calls, { journal: cut }, result);
    expect(calls.n).toBe(1);
    const toolOutputs = (input: unknown) =>
      (input as Record<string, unknown>[]).filter((item) => item.type === 'function_call_result');
    const live = toolOutputs(firstModel.requests[1]!.input);
    expect(live).toHaveLength(1);
    expect(toolOutputs(model.requests[0]!.input)).toEqual(live);
  });

  it('serves a model given by name without asking its provider: a resume needs neither the network nor a key for what it serves', async () => {
    const calls = { n: 0 };
    const first = path.join(dir, 'first.jsonl');
    await run(first, cannedModel(STEPS), calls);
    const journal = [...(await loadHistory(first)).journal] as unknown as RecordedLine[];
    // Cut after the tool's result: the first response and the tool are served, the second call needs the model.
    const cut = journal.filter((l) => l !== journal.filter((j) => j.type === 'llm')[1]);
    // Each time the provider is asked: the model's name, and how many calls had been served by then.
    const asked: Array<[string, number]> = [];
    const late = cannedModel([STEPS[1]!]);
    const provider = {
      getModel: (name?: string) => {
        asked.push([name ?? '(default)', mirror.mirror.resumed?.recordedCalls ?? -1]);
        return late;
      },
    };
    const mirror: AgentsMirror = new AgentsMirror({
      pricing,
      logger: false,
      modelProvider: provider,
      resumeFrom: { journal: cut, usage: { llmCalls: 1, toolCalls: 1, costUsd: 0.02 } },
    });
    const agent = new Agent({ name: 'forecaster', model: 'gpt-named', tools: weatherAgent(late, calls).tools });
    const output = stream
      ? await (async () => {
          const result = await mirror.run(agent, 'Weather in Oslo?', { stream: true });
          await result.completed;
          return result.finalOutput;
        })()
      : (await mirror.run(agent, 'Weather in Oslo?')).finalOutput;
    expect(output).toBe('Sunny in Oslo.');
    // Asked once, for the live call after the served one; the served call and tool never asked it.
    expect(asked).toEqual([['gpt-named', 1]]);
    expect(late.requests).toHaveLength(1);
    expect(calls.n).toBe(1);
  });
});

describe('a resumed batch of Agents SDK tasks', () => {
  it('continues a cut-off task from its journal: no answered call is asked again, no tool run twice', async () => {
    const calls = { n: 0 };
    const models: CannedModel[] = [];
    const tasks = (steps: CannedStep[]) =>
      ['a', 'b'].map((id) => ({
        id,
        input: 'Weather in Oslo?',
        drive: (mirror: StepMirror) => {
          const model = cannedModel(steps);
          models.push(model);
          return new AgentsMirror({ mirror }).run(weatherAgent(model, calls), 'Weather in Oslo?');
        },
      }));
    await runBatch(tasks(STEPS), { historyDir: dir, pricing, logger: false, total: { maxCostUsd: 1, strict: false } });
    // Task b as a kill after its tool leaves it: the file ends before its second call's reserve line.
    const file = path.join(dir, 'b.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const reserves = lines.flatMap((l, i) => (l.startsWith('{"type":"reserve"') ? [i] : []));
    expect(reserves).toHaveLength(2);
    fs.writeFileSync(file, `${lines.slice(0, reserves[1]).join('\n')}\n`);
    const before = { requests: models.reduce((n, m) => n + m.requests.length, 0), tools: calls.n };
    models.length = 0;

    const report = await runBatch(tasks([STEPS[1]!]), {
      historyDir: dir,
      pricing,
      logger: false,
      resume: true,
      total: { maxCostUsd: 1, strict: false },
    });
    expect(report.runs.map((r) => [r.id, r.outcome, r.resumed])).toEqual([
      ['a', 'end_of_turn', 'finished'],
      ['b', 'end_of_turn', 'recovered'],
    ]);
    expect(before).toEqual({ requests: 4, tools: 2 });
    // One request in all (b's second call), and no tool run again.
    expect(models.reduce((n, m) => n + m.requests.length, 0)).toBe(1);
    expect(calls.n).toBe(2);
    // Both attempts' spend counts: b's two calls at $0.02 each, a's two.
    expect(report.totals.costUsd).toBeCloseTo(0.08, 10);
    expect(validateHistory((await loadHistory(file)).entries).issues).toEqual([]);
  });
});
