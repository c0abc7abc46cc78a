import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { STALL_EXTENSION } from '../../lib/agent/extensionStates';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { parseStallSpecs } from '../../lib/replay/parseStallSpecs';
import { scanStalls } from '../../lib/replay/scanStalls';
import { renderRunPage } from '../../lib/report/renderRunPage';
import { historyToOtlp } from '../../lib/telemetry/historyToOtlp';
import { STALL_EVENT } from '../../lib/telemetry/stallEvent';
import { runCli } from '../helpers/runCli';

const TABLE = extendTable(DEFAULT_TABLE, STALL_EXTENSION);
const read = (i: number): ScriptedReply => ({ toolCalls: [{ id: `c${i}`, name: 'read', input: { path: 'a.txt' } }] });
const REPLIES = [read(1), read(2), read(3), read(4), { text: 'n/a' }];
const REASON_3 = 'called read with the same input 3 times in this run: {"path":"a.txt"}';
const REASON_4 = 'called read with the same input 4 times in this run: {"path":"a.txt"}';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-stall-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One turn of REPLIES written to a file with the journal, with the default stall policy or none. */
async function writeRun(name: string, stall: boolean): Promise<string> {
  const file = path.join(dir, name);
  const table = stall ? TABLE : DEFAULT_TABLE;
  const sink = JsonlHistorySink.open<string>(file, { runId: name, table });
  let t = Date.UTC(2026, 0, 1);
  const agent = new AgentWithStateMachine(createScriptedAgent({ replies: REPLIES, tools: { read: {} } }), {
    table,
    journal: true,
    logger: false,
    clock: () => (t += 10),
    sink,
    ...(stall ? { stall: true } : {}),
  });
  await agent.runTurn('read a.txt');
  sink.close();
  return file;
}

describe('readers of a stalled run', () => {
  it('the summary and `agent-sm inspect` list each firing: detector, policy, reason, evidence', async () => {
    const file = await writeRun('stalled.jsonl', true);
    const loaded = await loadHistory(file);
    const summary = summarizeHistory(loaded.entries);
    expect(summary.status).toBe('failed');
    expect(summary.turns.outcomes).toEqual({ StallStopped: 1 });
    expect(summary.stalls?.count).toBe(2);
    expect(
      summary.stalls?.list.map(({ detector, policy, reason, evidence, state, turn }) => ({
        detector,
        policy,
        reason,
        evidence,
        state,
        turn,
      })),
    ).toEqual([
      {
        detector: 'sameToolCall',
        policy: 'nudge',
        reason: REASON_3,
        evidence: { tool: 'read', input: { path: 'a.txt' }, count: 3 },
        state: 'Stalled',
        turn: 1,
      },
      {
        detector: 'sameToolCall',
        policy: 'stop',
        reason: REASON_4,
        evidence: { tool: 'read', input: { path: 'a.txt' }, count: 4 },
        state: 'Stalled',
        turn: 1,
      },
    ]);

    const { code, stdout } = await runCli('inspect', file);
    expect(code).toBe(0);
    expect(stdout).toContain('FAILED: the run ended in StallStopped');
    expect(stdout).toContain(`why:   stalled (sameToolCall): the agent ${REASON_4}`);
    expect(stdout).toContain('Stalls: 2 (a detector found the agent repeating itself)');
    const seqs = summary.stalls!.list.map((n) => n.seq);
    expect(stdout).toMatch(new RegExp(`seq ${seqs[0]}  turn 1  \\S+  sameToolCall → nudge: ${escape(REASON_3)}`));
    expect(stdout).toMatch(new RegExp(`seq ${seqs[1]}  turn 1  \\S+  sameToolCall → stop: ${escape(REASON_4)}`));
    expect(stdout).toContain('    evidence: {"tool":"read","input":{"path":"a.txt"},"count":3}');
    // A run without stalls says nothing of them.
    const plain = await runCli('inspect', await writeRun('plain.jsonl', false));
    expect(plain.stdout).not.toContain('Stalls');
    expect(summarizeHistory((await loadHistory(path.join(dir, 'plain.jsonl'))).entries).stalls).toBeUndefined();
  });

  it('the HTML report has a stall panel, and the OTLP export a stall event on the turn span', async () => {
    const file = await writeRun('stalled.jsonl', true);
    const { entries } = await loadHistory(file);
    const html = renderRunPage(entries);
    const panel = /<div class="panel incomplete" id="stalls">[\s\S]*?<\/div>/.exec(html)?.[0];
    expect(panel).toContain('Stalls: 2 firings of a detector that found the agent repeating itself');
    expect(panel).toContain('sameToolCall → nudge');
    expect(panel).toContain('sameToolCall → stop');
    expect(panel).toContain(
      'called read with the same input 4 times in this run: {&quot;path&quot;:&quot;a.txt&quot;}',
    );

    const otlp = historyToOtlp([...entries]);
    const spans = otlp.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const events = spans.flatMap((s) => s.events.filter((e) => e.name === STALL_EVENT.name));
    expect(events).toHaveLength(2);
    const attr = (e: (typeof events)[number], key: string) => e.attributes.find((a) => a.key === key)?.value;
    expect(events.map((e) => attr(e, STALL_EVENT.policy))).toEqual([{ stringValue: 'nudge' }, { stringValue: 'stop' }]);
    expect(attr(events[1]!, STALL_EVENT.detector)).toEqual({ stringValue: 'sameToolCall' });
    expect(attr(events[1]!, STALL_EVENT.reason)).toEqual({ stringValue: REASON_4 });
    expect(attr(events[1]!, STALL_EVENT.evidence)).toEqual({
      stringValue: '{"tool":"read","input":{"path":"a.txt"},"count":4}',
    });
  });

  it('`agent-sm replay FILE --stall` shows where detectors would have fired on a run recorded without them', async () => {
    const file = await writeRun('plain.jsonl', false);
    const k3 = await runCli('replay', file, '--stall', 'k=3');
    expect(k3.code).toBe(0);
    const lines = k3.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Stall detectors sameToolCall(3) over ${file}: 5 LLM responses in its journal.`);
    expect(lines[1]).toBe(
      'Would have fired 2 times (the first moves the run to Stalled; each firing counts toward the policy):',
    );
    expect(lines[2]).toMatch(
      new RegExp(`^  response 3 \\(turn 1, after move \\d+\\): sameToolCall: ${escape(REASON_3)}$`),
    );
    expect(lines[3]).toBe('    evidence: {"tool":"read","input":{"path":"a.txt"},"count":3}');
    expect(lines[4]).toMatch(/^ {2}response 4 \(turn 1, after move \d+\): sameToolCall: /);
    // The move it follows is the one into SendingToolResults before the third response.
    const { records, journal } = await loadHistory(file);
    const after = Number(/after move (\d+)/.exec(lines[2]!)![1]);
    expect(records.find((r) => r.seq === after)?.to).toBe('SendingToolResults');
    expect(scanStalls(journal, parseStallSpecs(['k=3'])).sightings.map((s) => s.response)).toEqual([3, 4]);

    expect((await runCli('replay', file, '--stall', 'text')).stdout).toContain('None would have fired.');
    const idle = await runCli('replay', file, '--stall', 'idle=2', 'text', '--json');
    const scan = JSON.parse(idle.stdout) as {
      detectors: string[];
      sightings: Array<{ response: number; finding: { detector: string } }>;
    };
    expect(scan.detectors).toEqual(['idleCalls(2)', 'repeatedText()']);
    expect(scan.sightings.map((s) => [s.response, s.finding.detector])).toEqual([
      [3, 'idleCalls'],
      [4, 'idleCalls'],
    ]);
  });

  it('`--stall` names a spec it cannot read, a file without a journal, and refuses --budget beside it', async () => {
    const file = await writeRun('plain.jsonl', false);
    const bad = await runCli('replay', file, '--stall', 'k=1');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('Expected `--stall` to be k=N with N ≥ 2');
    const typo = await runCli('replay', file, '--stall', 'repeat');
    expect(typo.stderr).toContain('Expected `--stall` to be k=N (the same tool call N times, N ≥ 2), text');
    const both = await runCli('replay', file, '--stall', 'k=3', '--budget', 'maxLlmCalls=2');
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--stall scans the journal and --budget re-drives the run: give one of them');
    // A file written without the journal has no responses to judge.
    const bare = path.join(dir, 'bare.jsonl');
    fs.writeFileSync(
      bare,
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !l.includes('"type":"llm"') && !l.includes('"type":"tool"'))
        .join('\n'),
    );
    const none = await runCli('replay', bare, '--stall', 'k=3');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('Expected `file` to be a history file written with journal: true');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
