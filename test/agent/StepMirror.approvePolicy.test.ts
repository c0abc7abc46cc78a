import { InvalidArgumentError, StepMirror, type ToolCall } from '../../lib/index';

// A mirror's `approve` policy: the integrations put it on the framework's tools (their own tests
// show the runs parking); here, what the mirror itself promises — a call the policy names whose
// tool does not carry it, or that the framework runs without asking, never runs, and ends the run
// in Error saying why.

const DELETE: ToolCall = { id: 'c1', name: 'delete_file', input: { path: '/' } };
const LIST: ToolCall = { id: 'c2', name: 'ls', input: {} };

async function toToolPhase(mirror: StepMirror, calls: ToolCall[]): Promise<Error | undefined> {
  mirror.runStart('go');
  expect(await mirror.modelCallStart()).toBeUndefined();
  return mirror.modelResponse({ toolCalls: calls, usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 } });
}

/** A mirror whose `delete_file` carries the policy (as an integration's wrapped tool does). */
function carrying(): StepMirror {
  const mirror = new StepMirror({ logger: false, approve: { delete_file: true } });
  mirror.approvals.carry('delete_file');
  return mirror;
}

describe('new StepMirror({ approve })', () => {
  it('turns approvals on, and refuses them turned off beside it', () => {
    expect(new StepMirror({ logger: false, approve: { delete_file: true } }).approvals.enabled).toBe(true);
    expect(() => new StepMirror({ logger: false, approve: { delete_file: true }, approvals: false })).toThrow(
      /`approvals` to be true \(or left out\) beside `approve`/,
    );
    expect(() => new StepMirror({ logger: false, approve: 'delete_file' as never })).toThrow(InvalidArgumentError);
    expect(() => new StepMirror({ logger: false, approve: 'delete_file' as never })).toThrow(
      /`approve` to be an object \{ toolName: true \} or a function/,
    );
    // An array of names would read as tools '0' and '1': no call would ever wait. Refused, saying what to write.
    expect(() => new StepMirror({ logger: false, approve: ['delete_file', 'ls'] as never })).toThrow(
      'not an array: write { "delete_file": true, "ls": true }',
    );
  });

  it('says which calls wait: named tools, a function of the call, and a function that throws (fail closed)', () => {
    const named = new StepMirror({ logger: false, approve: { delete_file: true, ls: false } });
    expect([named.approvals.requires(DELETE), named.approvals.requires(LIST)]).toEqual([true, false]);
    const byInput = new StepMirror({ logger: false, approve: (c) => JSON.stringify(c.input).includes('/') });
    expect([byInput.approvals.requires(DELETE), byInput.approvals.requires(LIST)]).toEqual([true, false]);
    const throwing = new StepMirror({
      logger: false,
      approve: () => {
        throw new Error('no policy today');
      },
    });
    expect(throwing.approvals.requires(LIST)).toBe(true);
    expect(new StepMirror({ logger: false, approvals: true }).approvals.requires(DELETE)).toBe(false);
  });

  it('a response calling a named tool that does not carry the policy ends the run before any of its tools runs', async () => {
    const mirror = new StepMirror({ logger: false, approve: { delete_file: true } });
    const stop = await toToolPhase(mirror, [LIST, DELETE]);
    expect(stop?.message).toMatch(
      /`approve`.*names call c1 \(delete_file\), and tool delete_file reaches the framework without it/,
    );
    expect(mirror.running).toBe(false);
    expect(mirror.machine.current).toBe('Error');
    expect(await mirror.toolStart(LIST)).toBeInstanceOf(Error);
    // The response was charged all the same.
    expect(mirror.usage.llmCalls).toBe(1);
  });

  it('a named call the framework runs without asking is not run: the run ends in Error naming the policy and the call', async () => {
    const mirror = carrying();
    expect(await toToolPhase(mirror, [LIST, DELETE])).toBeUndefined();
    expect(await mirror.toolStart(LIST)).toBeUndefined();
    mirror.toolEnd(LIST.id, { output: 'a b' });
    const stop = await mirror.toolStart(DELETE);
    expect(stop).toBeInstanceOf(Error);
    expect(stop!.message).toMatch(/`approve`.*names call c1 \(delete_file\), which the framework ran without asking/);
    expect(mirror.running).toBe(false);
    expect(mirror.machine.current).toBe('Error');
  });

  it('an approved call runs; a call whose tool asks inside itself may start before its answer', async () => {
    const mirror = carrying();
    await toToolPhase(mirror, [DELETE]);
    mirror.awaitApproval([DELETE]);
    expect(mirror.approvals.pending.map((p) => p.callId)).toEqual(['c1']);
    mirror.approvals.approve('c1', { by: 'ops' });
    await mirror.approvals.answers();
    expect(await mirror.toolStart(DELETE)).toBeUndefined();
    mirror.toolEnd(DELETE.id, { output: 'deleted' });
    expect(mirror.runEnd({ text: 'done' }).outcome).toBe('end_of_turn');

    const inTool = carrying();
    await toToolPhase(inTool, [DELETE]);
    inTool.approvals.asksInTool('c1');
    expect(await inTool.toolStart(DELETE)).toBeUndefined();
  });

  it('a denied call is not run, and starting it anyway is refused', async () => {
    const mirror = carrying();
    await toToolPhase(mirror, [DELETE]);
    mirror.awaitApproval([DELETE]);
    mirror.approvals.deny('c1', 'not today');
    await mirror.approvals.answers();
    const stop = await mirror.toolStart(DELETE);
    expect(stop?.message).toMatch(/names call c1 \(delete_file\)/);
  });

  it("an approval is the run's: a later run of the mirror calling the same id asks again", async () => {
    const mirror = carrying();
    await toToolPhase(mirror, [DELETE]);
    mirror.awaitApproval([DELETE]);
    mirror.approvals.approve('c1');
    await mirror.approvals.answers();
    expect(await mirror.toolStart(DELETE)).toBeUndefined();
    mirror.toolEnd(DELETE.id, { output: 'deleted' });
    mirror.runEnd({ text: 'done' });
    // A provider that numbers calls per response gives the next run's call the same id.
    await toToolPhase(mirror, [DELETE]);
    expect((await mirror.toolStart(DELETE))?.message).toMatch(/names call c1 \(delete_file\), which the framework ran/);
  });

  it('asks a policy once per call: a policy with state cannot clear a call and then refuse it', async () => {
    let asked = 0;
    const mirror = new StepMirror({ logger: false, approve: () => ++asked > 1 });
    mirror.approvals.carry('delete_file');
    await toToolPhase(mirror, [DELETE]);
    // The framework asks (the SDK's needsApproval), then runs the call it was told needs none.
    expect(mirror.approvals.requires(DELETE)).toBe(false);
    expect(await mirror.toolStart(DELETE)).toBeUndefined();
    expect(asked).toBe(1);
  });
});
