// StepMirror.modelStream(call): a streamed model call through the mirror's one step. Served from
// the journal in a resumed run, else gated and opened; each part read as it passes, the answer
// charged once a part makes it whole, its failure (an error part, a broken stream, a cut)
// reported once, a refusal thrown in the part's place, and `settled` called once however it ends.
import type { Pricing } from '../../lib/agent/AgentLoop';
import { Budget } from '../../lib/agent/money/Budget';
import { StepMirror } from '../../lib/agent/StepMirror';
import { ONE_ANSWER_JOURNAL } from '../helpers/oneAnswerJournal';
import { TurnCancelledError } from '../../lib/agent/TurnError';
import type { MirroredModelStream } from '../../lib/agent/mirror/mirrorModelStream';

// $0.001 a token, in or out: a bound of 250 + 250 tokens holds $0.5.
const pricing: Pricing = (u) => ((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) * 0.001;
const BOUND = { inputTokens: 250, maxOutputTokens: 250, model: 'm' };

/** A framework's streamed answer in its own shape: an id, and its parts. */
interface Answer {
  id: string;
  parts: AsyncIterable<Part>;
}
type Part =
  | { type: 'text'; text: string }
  | { type: 'done'; tokens: [number, number] }
  | { type: 'error'; error: unknown }
  | { type: 'call'; name: string };

async function* partsOf(list: Part[], breakAfter?: Error): AsyncGenerator<Part> {
  for (const part of list) yield part;
  if (breakAfter !== undefined) throw breakAfter;
}

async function drain(answer: Answer): Promise<Part[]> {
  const got: Part[] = [];
  for await (const part of answer.parts) got.push(part);
  return got;
}

/** Reads `answer` as a framework would until it ends or throws: the types of the parts it got, and what it threw. */
async function readUntilThrown(answer: Answer): Promise<{ got: string[]; thrown: unknown }> {
  const got: string[] = [];
  try {
    for await (const part of answer.parts) got.push(part.type);
  } catch (thrown) {
    return { got, thrown };
  }
  return { got, thrown: undefined };
}

/** A running mirror whose calls are held against a strict $1 cap (`shared`), priced at $0.001 a token. */
function strictRun(): { shared: Budget; mirror: StepMirror } {
  const shared = new Budget({ maxCostUsd: 1, strict: true });
  const mirror = new StepMirror({ logger: false, pricing, sharedBudgets: [shared] });
  mirror.runStart('go');
  return { shared, mirror };
}

/** A stream call of `list` (read as the framework's integration would), recording what happens to it. */
function streamCall(list: Part[], more: Partial<MirroredModelStream<Answer, Part>> & { breakAfter?: Error } = {}) {
  const seen = { sent: 0, settled: 0, read: [] as string[] };
  let text = '';
  const { breakAfter, ...hooks } = more;
  const call: MirroredModelStream<Answer, Part> = {
    send: () => (seen.sent++, Promise.resolve({ id: 'live', parts: partsOf(list, breakAfter) })),
    parts: (answer) => answer.parts,
    withParts: (answer, parts) => ({ ...answer, parts }),
    read: (part) => {
      seen.read.push(part.type);
      if (part.type === 'text') text += part.text;
      if (part.type === 'error') return { failed: part.error };
      if (part.type === 'call' && part.name === 'rm') throw new Error('a call of rm, which nobody may run');
      if (part.type !== 'done') return undefined;
      return { text, usage: { inputTokens: part.tokens[0], outputTokens: part.tokens[1] } };
    },
    served: (recorded) => ({ id: 'served', parts: partsOf([{ type: 'text', text: recorded.text ?? '' }]) }),
    settled: () => void seen.settled++,
    ...hooks,
  };
  return { call, seen };
}

describe('StepMirror.modelStream', () => {
  it('hands the framework every part, charging the answer at the part that makes it whole, and settles once', async () => {
    const mirror = new StepMirror({ logger: false, pricing });
    mirror.runStart('go');
    const { call, seen } = streamCall([
      { type: 'text', text: 'hi ' },
      { type: 'text', text: 'there' },
      { type: 'done', tokens: [100, 20] },
    ]);
    const answer = await mirror.modelStream(call);
    expect(answer.id).toBe('live');
    // Opened, nothing charged until the parts are read.
    expect(mirror.usage).toMatchObject({ inputTokens: 0, costUsd: 0 });
    expect((await drain(answer)).map((p) => p.type)).toEqual(['text', 'text', 'done']);
    expect(mirror.usage).toMatchObject({ llmCalls: 1, inputTokens: 100, outputTokens: 20, costUsd: 0.12 });
    expect(seen).toEqual({ sent: 1, settled: 1, read: ['text', 'text', 'done'] });
    expect(mirror.runEnd()).toMatchObject({ outcome: 'end_of_turn', text: 'hi there' });
  });

  it('serves a resumed run its journaled response through served, opening nothing', async () => {
    const mirror = new StepMirror({ logger: false, resumeFrom: { journal: ONE_ANSWER_JOURNAL } });
    mirror.runStart('go');
    const { call, seen } = streamCall([{ type: 'done', tokens: [1, 1] }]);
    const answer = await mirror.modelStream(call);
    expect(answer.id).toBe('served');
    expect(await drain(answer)).toEqual([{ type: 'text', text: 'hello' }]);
    expect(seen.sent).toBe(0);
    expect(mirror.resumed).toMatchObject({ recordedCalls: 1 });
  });

  it('holds the worst case under a strict cap while the stream is open, and lets it go when the answer is charged', async () => {
    const { shared, mirror } = strictRun();
    const { call } = streamCall([{ type: 'done', tokens: [125, 125] }], { bound: () => BOUND });
    const answer = await mirror.modelStream(call);
    expect(shared.held).toBe(0.5);
    await drain(answer);
    expect(shared.held).toBe(0);
    expect(shared.usage.costUsd).toBeCloseTo(0.25, 12);
  });

  it('reports an error part as the call failing, with the error as the provider gave it, and still hands the part on', async () => {
    const failures: unknown[] = [];
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    // A provider's error object, not an Error: its fields are what the billing rules read.
    const overloaded = { type: 'overloaded_error', status: 529 };
    const { call, seen } = streamCall(
      [
        { type: 'error', error: overloaded },
        { type: 'done', tokens: [9, 9] },
      ],
      { failed: (error) => void failures.push(error) },
    );
    expect((await drain(await mirror.modelStream(call))).map((p) => p.type)).toEqual(['error', 'done']);
    expect(failures).toEqual([overloaded]);
    // Every part is read, but the call's end is reported once: the later finish is not charged.
    expect(seen.read).toEqual(['error', 'done']);
    expect(mirror.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(seen.settled).toBe(1);
  });

  it('still cuts the stream after its failure was reported: a part past it that read refuses is thrown, not reported twice', async () => {
    const failures: unknown[] = [];
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const { call } = streamCall(
      [
        { type: 'error', error: { status: 500 } },
        { type: 'text', text: 'more' },
        { type: 'call', name: 'rm' },
        { type: 'done', tokens: [1, 1] },
      ],
      { failed: (error) => void failures.push(error) },
    );
    const { got, thrown } = await readUntilThrown(await mirror.modelStream(call));
    expect(thrown).toEqual(expect.objectContaining({ message: 'a call of rm, which nobody may run' }));
    expect(got).toEqual(['error', 'text']);
    expect(failures).toEqual([{ status: 500 }]);
  });

  it("reports the call as failed and settles it when parts or withParts throws, and a throwing settled does not hide the call's outcome", async () => {
    const failures: unknown[] = [];
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const broken = new Error('a bug in the integration');
    const first = streamCall([{ type: 'done', tokens: [1, 1] }], {
      withParts: () => {
        throw broken;
      },
      failed: (error) => void failures.push(error),
    });
    await expect(mirror.modelStream(first.call)).rejects.toBe(broken);
    expect(failures).toEqual([broken]);
    expect(first.seen.settled).toBe(1);
    const second = streamCall(
      [
        { type: 'text', text: 'fine' },
        { type: 'done', tokens: [2, 3] },
      ],
      {
        settled: () => {
          throw new Error('settled broke');
        },
      },
    );
    expect((await drain(await mirror.modelStream(second.call))).map((p) => p.type)).toEqual(['text', 'done']);
    expect(mirror.usage).toMatchObject({ inputTokens: 2, outputTokens: 3 });
  });

  it('reports a stream that breaks before its answer is whole as failed, at its worst case, and throws the break', async () => {
    const { shared, mirror } = strictRun();
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const { call, seen } = streamCall([{ type: 'text', text: 'partial' }], { bound: () => BOUND, breakAfter: reset });
    await expect(drain(await mirror.modelStream(call))).rejects.toBe(reset);
    expect(shared.held).toBe(0);
    expect(shared.usage.uncertainUsd).toBeCloseTo(0.5, 12);
    expect(seen.settled).toBe(1);
  });

  it('cuts the call where read throws: reported as its failure, the error thrown in the part’s place', async () => {
    const { shared, mirror } = strictRun();
    const { call, seen } = streamCall(
      [
        { type: 'text', text: 'sure' },
        { type: 'call', name: 'rm' },
        { type: 'done', tokens: [1, 1] },
      ],
      { bound: () => BOUND },
    );
    const { got, thrown } = await readUntilThrown(await mirror.modelStream(call));
    expect(thrown).toEqual(expect.objectContaining({ message: 'a call of rm, which nobody may run' }));
    expect(got).toEqual(['text']);
    expect(shared.usage.uncertainUsd).toBeCloseTo(0.5, 12);
    expect(seen.settled).toBe(1);
  });

  it('throws the refusal in place of the part that ends the run, through the refuse hook', async () => {
    // The answer calls a tool the approve policy names that reached the framework without it: the
    // run ends at the answer, and the framework must not act on it (its tool would run unasked).
    const mirror = new StepMirror({ logger: false, approve: { rm: true } });
    mirror.runStart('go');
    const refused: unknown[] = [];
    const { call } = streamCall([{ type: 'done', tokens: [10, 10] }], {
      read: (part) =>
        part.type === 'done' ? { text: '', toolCalls: [{ id: 'c1', name: 'rm', input: {} }], usage: {} } : undefined,
      refuse: (stop) => {
        refused.push(stop);
        throw new Error('the framework stopped');
      },
    });
    const answer = await mirror.modelStream(call);
    const { got, thrown } = await readUntilThrown(answer);
    expect(thrown).toEqual(expect.objectContaining({ message: 'the framework stopped' }));
    expect(got).toEqual([]);
    expect(refused).toHaveLength(1);
    expect(mirror.result).toMatchObject({ outcome: 'error' });
    expect(mirror.result?.error?.message).toContain('tool rm reaches the framework without it');
  });

  it('settles a stream the framework gives up on before its end, leaving the attempt to the run’s end (charged at its hold)', async () => {
    const { shared, mirror } = strictRun();
    const { call, seen } = streamCall(
      [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
        { type: 'done', tokens: [1, 1] },
      ],
      { bound: () => BOUND },
    );
    const answer = await mirror.modelStream(call);
    for await (const part of answer.parts) if (part.type === 'text') break;
    expect(seen.settled).toBe(1);
    expect(shared.held).toBe(0.5);
    mirror.runAborted('the user left');
    expect(shared.held).toBe(0);
    expect(shared.usage.uncertainUsd).toBeCloseTo(0.5, 12);
  });

  it('refuses the call of a cancelled run without opening it, and settles nothing it did not open', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    mirror.cancel('the user left');
    const { call, seen } = streamCall([{ type: 'done', tokens: [1, 1] }]);
    await expect(mirror.modelStream(call)).rejects.toBeInstanceOf(TurnCancelledError);
    expect(seen).toEqual({ sent: 0, settled: 0, read: [] });
  });

  it('reports a stream that fails to open, and settles it', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const failure = Object.assign(new Error('rate limited'), { status: 429 });
    const failures: unknown[] = [];
    const { call, seen } = streamCall([], {
      send: () => Promise.reject(failure),
      failed: (e) => void failures.push(e),
    });
    await expect(mirror.modelStream(call)).rejects.toBe(failure);
    expect(failures).toEqual([failure]);
    expect(seen.settled).toBe(1);
    expect(mirror.running).toBe(true);
  });

  it('refuses a call object it cannot use, by name, before anything is reported', async () => {
    const mirror = new StepMirror({ logger: false });
    mirror.runStart('go');
    const { call } = streamCall([{ type: 'done', tokens: [1, 1] }]);
    await expect(mirror.modelStream(null as never)).rejects.toThrow(
      'Expected `call` to be an object { send, parts, withParts, read, served, prepare?, bound?, failed?, refuse?, settled? }',
    );
    await expect(mirror.modelStream({ ...call, parts: undefined } as never)).rejects.toThrow(
      'Expected `call.parts` to be a function',
    );
    await expect(mirror.modelStream({ ...call, onPart: () => undefined } as never)).rejects.toThrow(
      'Expected `call.onPart` to be left out: StepMirror.modelStream takes send, parts, withParts, read, served, prepare, bound, failed, refuse and settled',
    );
    await expect(mirror.modelStream({ ...call, settled: 1 } as never)).rejects.toThrow(
      'Expected `call.settled` to be a function, or left out',
    );
    expect(mirror.usage.llmCalls).toBe(0);
    expect((await drain(await mirror.modelStream(call))).map((p) => p.type)).toEqual(['done']);
  });
});
