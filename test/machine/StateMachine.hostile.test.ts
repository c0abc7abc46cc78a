import winston from 'winston';
import { StateMachine } from '../../lib/machine/StateMachine';
import { IllegalTransitionError } from '../../lib/machine/IllegalTransitionError';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

/** Lets pending promise callbacks run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('StateMachine with async sinks and listeners', () => {
  it('.transition() reports a sink promise that rejects as sinkError, not an unhandled rejection', async () => {
    const errors: unknown[] = [];
    const machine = new StateMachine({
      logger: false,
      sink: (r) => Promise.reject(new Error(`disk gone at ${r.seq}`)) as unknown as void,
    });
    machine.on('sinkError', ({ record, error }) => errors.push([record?.seq, (error as Error).message]));
    machine.transition('WaitingForUserInput');
    await settle();
    expect(errors).toEqual([[1, 'disk gone at 1']]);
    expect(machine.current).toBe('WaitingForUserInput');
  });

  it('.reset() and rejected moves report an async sink that rejects', async () => {
    const errors: unknown[] = [];
    const sink = {
      write: () => undefined,
      rejected: async () => Promise.reject(new Error('rejected failed')),
      reset: async () => Promise.reject(new Error('reset failed')),
    };
    const machine = new StateMachine({ logger: false, sink });
    machine.on('sinkError', ({ error }) => errors.push((error as Error).message));
    expect(() => machine.transition('EndOfTurn')).toThrow(IllegalTransitionError);
    machine.reset();
    await settle();
    expect(errors.sort()).toEqual(['rejected failed', 'reset failed']);
  });

  it('.on() reports an async listener that rejects as listenerError and the machine goes on', async () => {
    const reported: unknown[] = [];
    const machine = new StateMachine({ logger: false });
    machine.on('transition', async () => {
      await Promise.resolve();
      throw new Error('listener broke');
    });
    machine.on('listenerError', ({ event, error }) => reported.push([event, (error as Error).message]));
    machine.transition('WaitingForUserInput');
    await settle();
    expect(reported).toEqual([['transition', 'listener broke']]);
    machine.transition('SendingToLLM');
    expect(machine.current).toBe('SendingToLLM');
  });
});

describe('StateMachine with half-done moves', () => {
  it('.transition() completes a move whose logger level check throws, and a queued move is not stranded', () => {
    const logger = winston.createLogger({ silent: true });
    Object.defineProperty(logger, 'isLevelEnabled', {
      value: () => {
        throw new Error('level check broke');
      },
    });
    const written: TransitionRecord<string>[] = [];
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const machine = new StateMachine({ logger, sink: (r) => void written.push(r) });
      machine.once('transition', () => machine.transition('SendingToLLM'));
      expect(() => machine.transition('WaitingForUserInput')).not.toThrow();
      expect(machine.current).toBe('SendingToLLM');
      expect(written.map((r) => r.to)).toEqual(['WaitingForUserInput', 'SendingToLLM']);
      // A legal move is still accepted afterwards.
      machine.transition('ProcessingLLMResponse');
      expect(machine.current).toBe('ProcessingLLMResponse');
    } finally {
      warn.mockRestore();
    }
  });

  it('.on() survives a thrown value whose message cannot be read', () => {
    const logger = winston.createLogger({
      level: 'error',
      transports: [new winston.transports.Console({ silent: true })],
    });
    const hostile = Object.create(null) as Record<string, unknown>;
    hostile.self = hostile;
    const reported: unknown[] = [];
    const machine = new StateMachine({ logger });
    machine.on('transition', () => {
      throw hostile;
    });
    machine.on('listenerError', ({ error }) => reported.push(error));
    machine.once('transition', () => machine.transition('SendingToLLM'));
    expect(() => machine.transition('WaitingForUserInput')).not.toThrow();
    expect(reported[0]).toBe(hostile);
    expect(machine.current).toBe('SendingToLLM');
    machine.transition('ProcessingLLMResponse');
  });

  it('.reset() and rejected moves check the clock, so a NaN never reaches the file', () => {
    let now = 1000;
    const written: unknown[] = [];
    const machine = new StateMachine({
      logger: false,
      clock: () => now,
      sink: {
        write: (r) => void written.push(r),
        reset: (i) => void written.push(i),
        rejected: (e) => void written.push(e),
      },
    });
    now = NaN;
    expect(() => machine.reset()).toThrow(InvalidArgumentError);
    expect(() => machine.transition('EndOfTurn')).toThrow(InvalidArgumentError);
    expect(written).toEqual([]);
    now = 2000;
    machine.transition('WaitingForUserInput');
    expect(written).toHaveLength(1);
  });

  it('.transition() reads a description getter once, so it cannot record a number', () => {
    let reads = 0;
    const event = {
      get description(): unknown {
        return reads++ === 0 ? 'first' : 42;
      },
    };
    const machine = new StateMachine({ logger: false });
    const record = machine.transition('WaitingForUserInput', event as never);
    expect(record.description).toBe('first');
    const forced = machine.forceTransition('Error', {
      get description() {
        return reads++ === 1 ? 'why' : 7;
      },
    } as never);
    expect(forced.description).toBe('why');
  });
});
