// A run taken over says why its money is uncertain over every attempt, each call once: the
// earlier attempt's calls by their own reason, and the call whose hold the takeover charges
// again (its credit) by the takeover's reason alone. Real Redis, a FileStore, two real workers,
// the first worker's job lock lapsing when the test says.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createScriptedAgent, type AgentLoop, type LLMResponse, type ScriptedReply } from 'agent-state-machine';
import { releaseRedis, testRedisUrl } from '../../helpers/redis';
import { takenOver } from '../../helpers/takenOver';
import { moment, until } from '../../helpers/moment';

let url: string;
beforeAll(async () => {
  url = await testRedisUrl();
});
afterAll(() => releaseRedis());

const usage = { inputTokens: 100, outputTokens: 20 };
// A 500 after the request left (its $0.01 hold charged, uncertain), an answer asking for a tool, then the end.
const REPLIES: ScriptedReply[] = [
  { error: 'HTTP 500' },
  { toolCalls: [{ id: 'c1', name: 'work', input: {} }], model: 'gpt-local', usage },
  { text: 'done', model: 'gpt-local', usage },
];

/**
 * Two workers on one run: the first runs `firstAgent` until it calls `lost` (a moment it then
 * waits at for good), its lock lapses, and the second takes the run over and ends it. The run's report.
 */
async function takenOverRun(
  firstAgent: (lost: () => Promise<void>) => AgentLoop,
  options: { replies?: ScriptedReply[]; retryDelayMs?: number; lostWhen?: (dir: string) => Promise<void> } = {},
) {
  const lost = moment('the first attempt lost');
  let release!: () => void;
  const forever = new Promise<void>((resolve) => (release = resolve));
  return takenOver(
    url,
    {
      agent: (attempt) =>
        attempt === 1
          ? firstAgent(() => {
              lost.reached();
              return forever;
            })
          : createScriptedAgent({
              replies: options.replies ?? REPLIES,
              tools: { work: { output: 'worked' } },
              bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
              sleep: async () => undefined,
            }),
      lost: lost.wait,
      ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
      beforeLapse: async (scene) => options.lostWhen?.(scene.dir),
      letGo: () => release(),
    },
    (run) => {
      expect(run).toMatchObject({ id: 't0', outcome: 'end_of_turn', attempt: 2, worker: 'takeover' });
      return run;
    },
  );
}

/** The scripted agent of `replies` whose user messages go through `through` (`calls`: the how-manyth, from 1). */
function sendingThrough(
  replies: ScriptedReply[],
  through: (calls: number, send: () => Promise<LLMResponse>) => Promise<LLMResponse>,
): AgentLoop {
  const inner = createScriptedAgent({
    replies,
    bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
    sleep: async () => undefined,
  });
  let calls = 0;
  return { ...inner, sendUserMessage: (message, ctx) => through(++calls, () => inner.sendUserMessage(message, ctx)) };
}

const TAKEN_OVER = /^taken over: attempt 1's call held at its worst case/;

it("names the earlier attempt's 500 and the takeover's credit: two calls, each once", async () => {
  // Lost while its tool runs: its 500 reached the budget; its answer's charge did not, so the
  // takeover charges that call's $0.01 hold again, as uncertain.
  const run = await takenOverRun((lost) =>
    createScriptedAgent({
      replies: REPLIES,
      tools: { work: () => lost().then(() => 'late') },
      bound: { inputTokens: 1000, maxOutputTokens: 1000, model: 'gpt-local' },
      sleep: async () => undefined,
    }),
  );
  expect(run.usage.uncertainUsd).toBeCloseTo(0.02, 10);
  expect(run.uncertain).toEqual(
    expect.arrayContaining([
      { why: expect.stringMatching(TAKEN_OVER), calls: 1 },
      { why: 'it failed after the request may have left (HTTP 500)', calls: 1 },
    ]),
  );
  expect(run.uncertain).toHaveLength(2);
}, 60_000);

it('names a call in flight when its attempt was lost once, by the takeover that charges its hold again', async () => {
  // Lost with its retry in flight (reserved, held, not answered): that call is the credit's.
  const run = await takenOverRun((lost) =>
    sendingThrough(REPLIES, async (calls, send) => {
      if (calls === 2) await lost();
      return send();
    }),
  );
  // Each attempt's 500, and the credit; the second attempt began again (nothing answered to serve).
  expect(run.usage.uncertainUsd).toBeCloseTo(0.03, 10);
  expect(run.uncertain).toEqual([
    { why: expect.stringMatching(TAKEN_OVER), calls: 1 },
    { why: 'it failed after the request may have left (HTTP 500)', calls: 2 },
  ]);
}, 60_000);

it('names a call whose charge the credit takes the place of once, by the takeover: lost waiting to retry its 500', async () => {
  // Lost in its retry's minute-long wait: the 500's charge, kept for the next call, never reached
  // the budget, so the takeover charges its hold again. The second attempt is answered at once.
  let file = '';
  const run = await takenOverRun(
    (lost) =>
      sendingThrough(REPLIES.slice(1), async (calls, send) => {
        if (calls > 1) return send();
        void lost();
        throw Object.assign(new Error('HTTP 500'), { status: 500 });
      }),
    {
      replies: [{ text: 'done', model: 'gpt-local', usage }],
      retryDelayMs: 60_000,
      // Its records say why the 500's money is uncertain before the lock lapses.
      lostWhen: (dir) =>
        until('the 500 is in the records', () => {
          const batchDir = fs.readdirSync(dir).map((b) => path.join(dir, b))[0];
          file = batchDir === undefined ? '' : path.join(batchDir, 't0.jsonl');
          return fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('"chargedAtHold"');
        }),
    },
  );
  expect(run.usage.uncertainUsd).toBeCloseTo(0.01, 10);
  expect(run.uncertain).toEqual([{ why: expect.stringMatching(TAKEN_OVER), calls: 1 }]);
}, 60_000);
