import { InvalidArgumentError, StepMirror, type ToolCall } from '../../lib/index';

// A mirror's `approve` policy: the integrations put it on the framework's tools (their own tests
// show the runs parking); here, what the mirror itself promises — a call the policy names that
// the framework runs without asking never runs, and ends the run in Error saying why.

const DELETE: ToolCall = { id: 'c1', name: 'delete_file', input: { path: '/' } };
const LIST: ToolCall = { id: 'c2', name: 'ls', input: {} };

async function toToolPhase(mirror: StepMirror, calls: ToolCall[]): Promise<void> {
  mirror.runStart('go');
  expect(await mirror.modelCallStart()).toBeUndefined();
  mirror.modelResponse({ toolCalls: calls, usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 } });
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

  it('a named call the framework runs without asking is not run: the run ends in Error naming the policy and the call', async () => {
    const mirror = new StepMirror({ logger: false, approve: { delete_file: true } });
    await toToolPhase(mirror, [LIST, DELETE]);
    expect(await mirror.toolStart(LIST)).toBeUndefined();
    mirror.toolEnd(LIST.id, { output: 'a b' });
    const stop = await mirror.toolStart(DELETE);
    expect(stop).toBeInstanceOf(Error);
    expect(stop!.message).toMatch(/`approve`.*names call c1 \(delete_file\), which the framework ran without asking/);
    expect(mirror.running).toBe(false);
    expect(mirror.machine.current).toBe('Error');
  });

  it('an approved call runs; a call whose tool asks inside itself may start before its answer', async () => {
    const mirror = new StepMirror({ logger: false, approve: { delete_file: true } });
    await toToolPhase(mirror, [DELETE]);
    mirror.awaitApproval([DELETE]);
    expect(mirror.approvals.pending.map((p) => p.callId)).toEqual(['c1']);
    mirror.approvals.approve('c1', { by: 'ops' });
    await mirror.approvals.answers();
    expect(await mirror.toolStart(DELETE)).toBeUndefined();
    mirror.toolEnd(DELETE.id, { output: 'deleted' });
    expect(mirror.runEnd({ text: 'done' }).outcome).toBe('end_of_turn');

    const inTool = new StepMirror({ logger: false, approve: { delete_file: true } });
    await toToolPhase(inTool, [DELETE]);
    inTool.approvals.asksInTool('c1');
    expect(await inTool.toolStart(DELETE)).toBeUndefined();
  });

  it('a denied call is not run, and starting it anyway is refused', async () => {
    const mirror = new StepMirror({ logger: false, approve: { delete_file: true } });
    await toToolPhase(mirror, [DELETE]);
    mirror.awaitApproval([DELETE]);
    mirror.approvals.deny('c1', 'not today');
    await mirror.approvals.answers();
    const stop = await mirror.toolStart(DELETE);
    expect(stop?.message).toMatch(/names call c1 \(delete_file\)/);
  });
});
