// Bidirectional-text controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) reorder
// what a terminal shows: "Trojan Source" text can make a line read as something it is not. Like
// ESC and C1, they reach the terminal only escaped, whichever command prints them.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { escapeControl, escapeJsonText } from '../../lib/internal/escapeControl';
import { buildCli, runBuiltCli } from '../helpers/builtCli';
import { manualClock } from '../helpers/manualClock';

const BIDI = [
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
];
const ANY_BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
// Reads "ok" on screen while the bytes say otherwise.
const HOSTILE = `access \u202eked\u2066ni\u2069ed\u202c ok \u200f\u061c`;
const instant = async (): Promise<void> => undefined;

let dir: string;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-bidi-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('escapeControl() and escapeJsonText()', () => {
  it.each(BIDI)('escape %j as \\uXXXX', (char) => {
    const code = `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
    expect(escapeControl(`a${char}b`)).toBe(`a${code}b`);
    expect(escapeJsonText(JSON.stringify(`a${char}b`))).toBe(`"a${code}b"`);
  });

  it('leave right-to-left text itself alone', () => {
    expect(escapeControl('שלום مرحبا')).toBe('שלום مرحبا');
  });
});

describe('inspect, show and replay (built executable) never print a bidi control', () => {
  it('escapes them in descriptions, conversation, errors and the file name', async () => {
    const file = path.join(dir, `run\u202e.jsonl`);
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const agent = new AgentWithStateMachine(
      createScriptedAgent({
        sleep: instant,
        replies: [
          { toolCalls: [{ id: 'c1', name: 'bash', input: { cmd: HOSTILE } }] },
          { text: HOSTILE },
          { error: HOSTILE },
        ],
        tools: { bash: { output: HOSTILE } },
      }),
      { sink, journal: true, logger: false, clock: manualClock().now, sleep: instant },
    );
    await agent.runTurn(HOSTILE);
    await agent.runTurn('again');
    sink.close();

    for (const args of [
      ['inspect', file],
      ['inspect', '--json', file],
      ['show', file],
      ['replay', file],
      ['replay', '--json', file],
    ]) {
      const result = runBuiltCli(args);
      expect({ args, code: result.code }).toEqual({ args, code: 0 });
      expect(result.stdout).not.toMatch(ANY_BIDI);
      expect(result.stderr).not.toMatch(ANY_BIDI);
      expect(result.stdout).toMatch(/\\u202e/);
    }
    expect(runBuiltCli(['show', file]).stdout).toContain(
      'access \\u202eked\\u2066ni\\u2069ed\\u202c ok \\u200f\\u061c',
    );
  }, 60_000);
});

describe('export otlp (built executable) never prints a bidi or C1 control', () => {
  it('escapes them in the spans and in the resource, and the JSON still reads as the same text', async () => {
    const C1 = '\u0085\u009b31m';
    const file = path.join(dir, 'run.jsonl');
    const sink = JsonlHistorySink.open(file, { runId: 'r' });
    const agent = new AgentWithStateMachine(
      createScriptedAgent({ sleep: instant, replies: [{ error: `${HOSTILE} ${C1}` }] }),
      { sink, journal: true, logger: false, clock: manualClock().now, sleep: instant },
    );
    await agent.runTurn(`${HOSTILE} ${C1}`);
    sink.close();

    const result = runBuiltCli(['export', 'otlp', file, '--service-name', `svc\u202e${C1}`]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).not.toMatch(ANY_BIDI);
    expect(result.stdout).not.toMatch(/[\u007f-\u009f]/);
    expect(result.stdout).toContain('\\u202e');
    expect(result.stdout).toContain('\\u0085\\u009b31m');
    // Escaped as JSON escapes them: a collector reads the very same strings.
    const parsed = JSON.stringify(JSON.parse(result.stdout));
    expect(parsed).toContain(`svc\u202e${C1}`);
    expect(parsed).toContain(`${HOSTILE} ${C1}`);
  }, 60_000);
});
