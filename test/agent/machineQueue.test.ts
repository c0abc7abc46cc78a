import {
  AgentWithStateMachine,
  createScriptedAgent,
  type IllegalTransitionError,
  type TransitionRecord,
  type TurnResult,
} from '../../lib/index';

function adapterWith(replies: Array<{ text: string }>): {
  adapter: AgentWithStateMachine;
  rejected: IllegalTransitionError[];
} {
  const adapter = new AgentWithStateMachine(createScriptedAgent({ replies }), {
    logger: false,
    maxHistorySize: Infinity,
  });
  const rejected: IllegalTransitionError[] = [];
  adapter.machine.on('rejected', (e) => rejected.push(e));
  return { adapter, rejected };
}

describe("AgentWithStateMachine and the machine's queue of listener moves", () => {
  it('.runTurn() started from a reset listener runs normally (no false MachineMovedError)', async () => {
    const { adapter, rejected } = adapterWith([{ text: 'one' }, { text: 'two' }]);
    await adapter.runTurn('first');
    let turn: Promise<TurnResult> | undefined;
    adapter.machine.on('reset', () => {
      turn = adapter.runTurn('after reset');
    });
    adapter.machine.reset();
    const result = await turn!;
    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe('end_of_turn');
    expect(rejected).toEqual([]);
  });

  it('.runTurn() started by a listener that queued a move starts from that move, never asking for a rejected one', async () => {
    const { adapter, rejected } = adapterWith([{ text: 'one' }, { text: 'two' }]);
    await adapter.runTurn('first');
    let turn: Promise<TurnResult> | undefined;
    const off = adapter.machine.onTransition((record) => {
      if (record.to !== 'WaitingForUserInput') return;
      off();
      adapter.machine.transition('SendingToLLM', 'a listener moves on');
      turn = adapter.runTurn('from the listener');
    });
    adapter.machine.transition('WaitingForUserInput', 'by hand');
    const result = await turn!;
    expect(rejected).toEqual([]);
    expect(result.outcome).toBe('end_of_turn');
  });

  it('StateMachine reports a rejection asked for inside a listener after the queued move it was checked against', () => {
    const { adapter } = adapterWith([]);
    const machine = adapter.machine;
    const order: string[] = [];
    machine.on('transition', (r: TransitionRecord<string>) => order.push(`move ${r.from} → ${r.to}`));
    machine.on('rejected', (e) => order.push(`rejected ${e.from} → ${e.to}`));
    const off = machine.onTransition((r) => {
      if (r.to !== 'WaitingForUserInput') return;
      off();
      machine.transition('SendingToLLM');
      expect(() => machine.transition('Ready')).toThrow('SendingToLLM → Ready');
    });
    machine.transition('WaitingForUserInput');
    expect(order).toEqual([
      'move Ready → WaitingForUserInput',
      'move WaitingForUserInput → SendingToLLM',
      'rejected SendingToLLM → Ready',
    ]);
  });
});
