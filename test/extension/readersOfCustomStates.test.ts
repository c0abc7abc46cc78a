import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { historyToMermaid } from '../../lib/history/toMermaid';
import { validateHistory } from '../../lib/history/validateHistory';
import { tableRoles } from '../../lib/history/tableRoles';
import { createTable } from '../../lib/machine/createTable';
import { extendTable } from '../../lib/machine/extendTable';
import { StateMachine } from '../../lib/machine/StateMachine';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { collectRun, OTHER_COLOURS } from '../../lib/report/collectRun';
import { renderRunPage } from '../../lib/report/renderRunPage';
import { historyToOtlp } from '../../lib/telemetry/historyToOtlp';
import { T0 } from '../fixtures/agentRun';

/**
 * A table of its own, none of whose names is one of the sixteen: readers must take every role
 * from the table (flags and activities), never from a list of names.
 */
const OWN_TABLE = createTable(
  [
    { name: 'Off', description: 'not started', next: ['Idle'] },
    { name: 'Idle', description: 'between jobs', next: ['Asking'] },
    { name: 'Asking', description: 'asks the model', next: ['Heard', 'Broken'], activity: 'llm_request' },
    { name: 'Heard', description: 'read the answer', next: ['Acting', 'Done'], activity: 'llm_response' },
    { name: 'Acting', description: 'runs tools', next: ['Pondering'], activity: 'tool_run' },
    // The two states that declare no activity: drawn in colours of their own.
    { name: 'Pondering', description: 'thinks it over', next: ['Musing'] },
    { name: 'Musing', description: 'thinks some more', next: ['Asking'] },
    { name: 'Done', description: 'finished', next: ['Idle'], isTerminal: true },
    { name: 'Broken', description: 'failed', next: ['Idle'], isTerminal: true, isError: true },
  ],
  'Off',
);

/** The sixteen states plus AwaitingApproval and Compacting, as the adapter's extensions add them. */
const EXTENDED = extendTable(DEFAULT_TABLE, {
  states: [
    {
      name: 'AwaitingApproval',
      description: 'waits for a person',
      next: ['RunningTool', 'Cancelled'],
      activity: 'wait',
    },
    { name: 'Bargaining', description: 'a custom state with no activity', next: ['SendingToLLM', 'Error'] },
  ],
  edges: [
    ['CheckingForCancellation', 'AwaitingApproval'],
    ['SendingToLLM', 'Bargaining'],
  ],
});

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-custom-'));
}

async function writeOwnRun(file: string): Promise<void> {
  let now = T0;
  const sink = JsonlHistorySink.open<string>(file, { runId: 'own', table: OWN_TABLE });
  const machine = new StateMachine<string>({ table: OWN_TABLE, clock: () => now, logger: false, sink });
  const step = (to: string, ms: number, data?: unknown): void => {
    now += ms;
    machine.transition(to, data === undefined ? `to ${to}` : { description: `to ${to}`, data });
  };
  step('Idle', 1, { turn: 1 });
  step('Asking', 1);
  step('Heard', 40, { usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 }, model: 'm-1' });
  step('Acting', 1);
  step('Pondering', 30, { results: [{ callId: 'c1', name: 'grep', isError: false, ms: 30 }] });
  step('Musing', 5);
  step('Asking', 5);
  step('Heard', 20, { usage: { inputTokens: 30, outputTokens: 9, costUsd: 0.03 } });
  step('Done', 1, { outcome: 'end_of_turn' });
  sink.close();
}

describe('readers of a table with custom states', () => {
  it('a file of a table of its own keeps the states’ activities, and reads back with the same roles', async () => {
    const dir = tmp();
    const file = path.join(dir, 'own.jsonl');
    await writeOwnRun(file);
    const meta = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!) as { table: { activities?: unknown } };
    expect(meta.table.activities).toEqual({ Asking: 'llm_request', Heard: 'llm_response', Acting: 'tool_run' });
    const loaded = await loadHistory(file);
    const roles = tableRoles(loaded.table!);
    expect([...roles.llmRequest]).toEqual(['Asking']);
    expect([...roles.userRequest]).toEqual(['Asking']);
    expect([...roles.toolRun]).toEqual(['Acting']);
    expect(roles.activity.has('Pondering')).toBe(false);
  });

  it('the sixteen-state table stores no activities: its meta line is what it was', () => {
    const sink = JsonlHistorySink.open(path.join(tmp(), 'default.jsonl'), { runId: 'd' });
    sink.close();
    expect(fs.readFileSync(sink.path, 'utf8')).not.toContain('activities');
  });

  it('OTLP export finds the LLM call and the tool call of a table of its own, and ends the turn at its terminal state', async () => {
    const dir = tmp();
    const file = path.join(dir, 'own.jsonl');
    await writeOwnRun(file);
    const { entries } = await loadHistory(file);
    const spans = historyToOtlp(entries).resourceSpans[0]!.scopeSpans[0]!.spans;
    const names = spans.map((s) => s.name);
    expect(names.filter((n) => n.startsWith('chat'))).toHaveLength(2);
    expect(names).toContain('execute_tool grep');
    const turn = spans.find((s) => s.name.startsWith('invoke_agent'))!;
    expect(turn.status?.code).not.toBe(2);
    const chats = spans.filter((s) => s.name.startsWith('chat'));
    // Neither call failed: each left Asking for Heard, the table's llm_response state.
    for (const chat of chats) expect(chat.status?.code ?? 0).not.toBe(2);
    const op = chats[0]!.attributes.find((a) => a.key === 'agent_state_machine.llm.operation');
    expect(op?.value).toEqual({ stringValue: 'sendUserMessage' });
  });

  it('validate, summarize and Mermaid take the file’s table: no issue, no unknown state, every state drawn', async () => {
    const dir = tmp();
    const file = path.join(dir, 'own.jsonl');
    await writeOwnRun(file);
    const { entries } = await loadHistory(file);
    const validation = validateHistory(entries);
    expect(validation.issues).toEqual([]);
    expect(validation.interrupted).toBeUndefined();
    const summary = summarizeHistory(entries);
    expect(summary.status).toBe('ok');
    const mermaid = historyToMermaid(entries);
    for (const state of ['Asking', 'Heard', 'Acting', 'Pondering', 'Musing', 'Done']) expect(mermaid).toContain(state);
  });

  it('the report gives states colours from their activity, and each custom state one picked from its name, the same every time', async () => {
    const dir = tmp();
    const file = path.join(dir, 'own.jsonl');
    await writeOwnRun(file);
    const { entries } = await loadHistory(file);
    const facts = collectRun(entries);
    expect(facts.kinds['Asking']).toBe('llm');
    expect(facts.kinds['Acting']).toBe('tool');
    expect(facts.kinds['Done']).toBe('end');
    expect(facts.kinds['Broken']).toBe('error');
    expect(facts.kinds['Idle']).toBe('idle');
    for (const custom of ['Pondering', 'Musing']) {
      expect(facts.kinds[custom]).toMatch(new RegExp(`^other-[0-${OTHER_COLOURS - 1}]$`));
      expect(collectRun(entries).kinds[custom]).toBe(facts.kinds[custom]);
    }
    const html = renderRunPage(entries);
    expect(html).toContain(`k-${facts.kinds['Pondering']!}`);
    // Every colour class a state can get is in the page's style sheet.
    for (let i = 0; i < OTHER_COLOURS; i++) expect(html).toContain(`.k-other-${i} {`);
    expect(html).toContain('.k-wait {');
  });

  it('an extended sixteen-state table: the waiting state is drawn as waiting, the other custom state in its own colour', async () => {
    const file = path.join(tmp(), 'extended.jsonl');
    const sink = JsonlHistorySink.open<string>(file, { runId: 'x', table: EXTENDED });
    const machine = new StateMachine<string>({ table: EXTENDED, clock: () => T0, logger: false, sink });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('SendingToLLM', 'send');
    machine.transition('Bargaining', 'haggle');
    machine.transition('SendingToLLM', 'again');
    sink.close();
    const facts = collectRun((await loadHistory(file)).entries);
    expect(facts.kinds['AwaitingApproval']).toBe('wait');
    expect(facts.kinds['Bargaining']).toMatch(/^other-\d$/);
    expect(facts.kinds['SendingToLLM']).toBe('llm');
  });
});
