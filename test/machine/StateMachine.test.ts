import type winston from 'winston';
import {
  IllegalTransitionError,
  InvalidArgumentError,
  StateMachine,
  UnknownStateError,
  type StateMachineOptions,
  type TransitionRecord,
} from '../../lib/index';
import { State } from '../../states/StateName';
import { captureLogger } from '../helpers/captureLogger';
import { manualClock } from '../helpers/manualClock';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

function quietMachine(options: StateMachineOptions = {}) {
  const clock = manualClock(T0);
  const machine = new StateMachine({ clock: clock.now, logger: false, ...options });
  return { machine, clock };
}

/** Drives the original's tool-use turn, advancing the clock by 10 ms before each move. */
function toolTurn(machine: StateMachine, clock: ReturnType<typeof manualClock>): void {
  for (const to of [
    State.SendingToLLM,
    State.ProcessingLLMResponse,
    State.ToolUseRequested,
    State.CheckingForCancellation,
    State.RunningTool,
    State.CheckingGitCommits,
    State.CheckingBudget,
    State.GatheringAdditionalMessages,
    State.SendingToolResults,
    State.ProcessingLLMResponse,
    State.EndOfTurn,
  ]) {
    clock.advance(10);
    machine.transition(to, `to ${to}`);
  }
}

describe('StateMachine', () => {
  describe('construction', () => {
    it('starts in Ready with previous Unknown and an empty history', () => {
      const { machine } = quietMachine();
      expect(machine.current).toBe('Ready');
      expect(machine.previous).toBe('Unknown');
      expect(machine.history()).toEqual([]);
      expect(machine.maxHistorySize).toBe(100);
    });

    it.each([0, -3, 2.5, Number.NaN, '10', null])('rejects maxHistorySize %p, naming it', (bad) => {
      expect(() => new StateMachine({ maxHistorySize: bad as number, logger: false })).toThrow(
        new InvalidArgumentError('maxHistorySize', 'a positive integer or Infinity', bad),
      );
    });

    it('rejects a clock that is not a function or does not return finite milliseconds', () => {
      expect(() => new StateMachine({ clock: 5 as never, logger: false })).toThrow(
        'Expected `clock` to be a function returning epoch milliseconds, got `5` (number)',
      );
      expect(() => new StateMachine({ clock: (() => new Date()) as never, logger: false })).toThrow(
        /Expected `clock\(\)` to be a finite number of milliseconds, got `"20/,
      );
    });

    it('rejects a logger, sink or options of the wrong kind', () => {
      expect(() => new StateMachine({ logger: console as never })).toThrow(
        'Expected `logger` to be a winston logger or false',
      );
      expect(() => new StateMachine({ sink: {} as never, logger: false })).toThrow(
        'Expected `sink` to be a function or an object with write(record), got `{}` (object)',
      );
      expect(() => new StateMachine('fast' as never)).toThrow(
        'Expected `options` to be an object, got `fast` (string)',
      );
    });
  });

  describe('.transition()', () => {
    it('records a tool-use turn with timings', () => {
      const { machine, clock } = quietMachine();
      clock.advance(5);
      machine.transition(State.WaitingForUserInput, 'turn 1');
      toolTurn(machine, clock);
      const history = machine.history();
      expect(history.map((r) => `${r.seq} ${r.from}→${r.to} ${r.durationMs}`)).toMatchInlineSnapshot(`
        [
          "1 Ready→WaitingForUserInput 5",
          "2 WaitingForUserInput→SendingToLLM 10",
          "3 SendingToLLM→ProcessingLLMResponse 10",
          "4 ProcessingLLMResponse→ToolUseRequested 10",
          "5 ToolUseRequested→CheckingForCancellation 10",
          "6 CheckingForCancellation→RunningTool 10",
          "7 RunningTool→CheckingGitCommits 10",
          "8 CheckingGitCommits→CheckingBudget 10",
          "9 CheckingBudget→GatheringAdditionalMessages 10",
          "10 GatheringAdditionalMessages→SendingToolResults 10",
          "11 SendingToolResults→ProcessingLLMResponse 10",
          "12 ProcessingLLMResponse→EndOfTurn 10",
        ]
      `);
      expect(history[0]).toEqual({
        seq: 1,
        from: 'Ready',
        to: 'WaitingForUserInput',
        description: 'turn 1',
        at: T0 + 5,
        durationMs: 5,
        forced: false,
      });
      expect(machine.current).toBe('EndOfTurn');
      expect(machine.previous).toBe('ProcessingLLMResponse');
      expect(machine.isInTerminalState()).toBe(true);
      expect(machine.isInErrorState()).toBe(false);
    });

    it('returns the record, with data when given', () => {
      const { machine } = quietMachine();
      const record = machine.transition(State.WaitingForUserInput, { description: 'start', data: { turn: 1 } });
      expect(record).toEqual({
        seq: 1,
        from: 'Ready',
        to: 'WaitingForUserInput',
        description: 'start',
        data: { turn: 1 },
        at: T0,
        durationMs: 0,
        forced: false,
      });
      expect(machine.history()[0]).toBe(record);
      expect('data' in machine.transition(State.SendingToLLM)).toBe(false);
    });

    it('rejects a move the table lacks: nothing changes, the error says where it could go', () => {
      const { machine, clock } = quietMachine();
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      machine.transition(State.ProcessingLLMResponse);
      const rejected: IllegalTransitionError[] = [];
      machine.on('rejected', (e) => rejected.push(e));
      clock.advance(3);
      expect(() => machine.transition(State.BudgetExceeded, 'over budget')).toThrow(IllegalTransitionError);
      expect(machine.current).toBe('ProcessingLLMResponse');
      expect(machine.history()).toHaveLength(3);
      expect(rejected).toHaveLength(1);
      expect(rejected[0]).toMatchObject({
        from: 'ProcessingLLMResponse',
        to: 'BudgetExceeded',
        allowed: ['EndOfTurn', 'ToolUseRequested', 'Error'],
        description: 'over budget',
        at: T0 + 3,
      });
      expect(machine.transition(State.EndOfTurn).seq).toBe(4);
    });

    it('throws UnknownStateError for a name the table lacks, without a rejected event', () => {
      const { machine } = quietMachine();
      const rejected = jest.fn();
      machine.on('rejected', rejected);
      expect(() => machine.transition('Waiting' as never)).toThrow(UnknownStateError);
      expect(() => machine.transition(undefined as never)).toThrow(
        /Unknown state `undefined` as transition\(\) target/,
      );
      expect(rejected).not.toHaveBeenCalled();
      expect(machine.current).toBe('Ready');
    });

    it.each([42, null, { data: 1 }, { description: 7 }])('rejects the event %p, naming it', (bad) => {
      const { machine } = quietMachine();
      expect(() => machine.transition(State.WaitingForUserInput, bad as never)).toThrow(
        /^Expected `event` to be a description string or \{ description: string, data\? \}, got /,
      );
      expect(machine.history()).toEqual([]);
    });

    it('never records a negative duration when the clock goes backwards', () => {
      const { machine, clock } = quietMachine();
      machine.transition(State.WaitingForUserInput);
      clock.advance(-5000);
      const record = machine.transition(State.SendingToLLM);
      expect(record.durationMs).toBe(0);
      expect(record.at).toBe(T0 - 5000);
      expect(machine.timeInState()).toBe(0);
      clock.advance(7);
      expect(machine.timeInState()).toBe(7);
    });
  });

  describe('.forceTransition()', () => {
    it('bypasses the table, marks the record forced and logs a warning', () => {
      const { logger, entries } = captureLogger('warn');
      const clock = manualClock(T0);
      const machine = new StateMachine({ clock: clock.now, logger });
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      machine.transition(State.ProcessingLLMResponse);
      machine.transition(State.ToolUseRequested);
      machine.transition(State.CheckingForCancellation);
      machine.transition(State.RunningTool);
      clock.advance(40);
      const record = machine.forceTransition(State.Cancelled, {
        description: 'cancelled mid-tool',
        data: { tool: 'bash' },
      });
      expect(record).toMatchObject({
        from: 'RunningTool',
        to: 'Cancelled',
        forced: true,
        durationMs: 40,
        data: { tool: 'bash' },
      });
      expect(machine.current).toBe('Cancelled');
      expect(machine.isInErrorState()).toBe(true);
      expect(entries).toEqual([
        {
          level: 'warn',
          message: 'forced transition RunningTool → Cancelled: cancelled mid-tool',
          meta: { seq: 7, data: { tool: 'bash' } },
        },
      ]);
    });

    it("logs at info when the event says logLevel 'info', also when the move waits for a listener", () => {
      const { logger, entries } = captureLogger('info');
      const machine = new StateMachine({ clock: manualClock(T0).now, logger });
      machine.forceTransition(State.Cancelled, { description: 'expected', logLevel: 'info' });
      // Asked for from a listener: it takes effect (and is logged) after the current move.
      machine.once('transition', () =>
        machine.forceTransition(State.WaitingForUserInput, { description: 'queued', logLevel: 'info' }),
      );
      machine.forceTransition(State.Error, 'a fault');
      expect(entries.map((e) => [e.level, e.message])).toEqual([
        ['info', 'forced transition Ready → Cancelled: expected'],
        ['warn', 'forced transition Cancelled → Error: a fault'],
        ['info', 'forced transition Error → WaitingForUserInput: queued'],
      ]);
      // The level is how it is logged, not part of the record.
      expect(machine.history().map((r) => Object.keys(r).includes('logLevel'))).toEqual([false, false, false]);
    });

    it('logs nothing for a logLevel info move under a logger at warn', () => {
      const { logger, entries } = captureLogger('warn');
      const machine = new StateMachine({ clock: manualClock(T0).now, logger });
      machine.forceTransition(State.Cancelled, { description: 'expected', logLevel: 'info' });
      expect(entries).toEqual([]);
    });

    it('rejects a logLevel other than warn or info, naming it', () => {
      const { machine } = quietMachine();
      expect(() => machine.forceTransition(State.Error, { description: 'x', logLevel: 'debug' as never })).toThrow(
        "Expected `reason.logLevel` to be 'warn', 'info' or undefined, got `debug` (string)",
      );
      expect(machine.history()).toEqual([]);
    });

    it('requires a reason and a known state', () => {
      const { machine } = quietMachine();
      expect(() => machine.forceTransition(State.Error, '  ')).toThrow(
        'Expected `reason` to be a non-empty description of why the move is forced, got `  ` (string)',
      );
      expect(() => machine.forceTransition(State.Error, undefined as never)).toThrow(InvalidArgumentError);
      expect(() => machine.forceTransition('Eror' as never, 'typo')).toThrow(
        /Unknown state `Eror` \(string\) as forceTransition\(\) target/,
      );
      expect(machine.history()).toEqual([]);
    });
  });

  describe('queries', () => {
    it('.canTransition(), .canMoveTo() and .allowedFrom() follow the table', () => {
      const { machine } = quietMachine();
      expect(machine.canTransition(State.RunningTool, State.Cancelled)).toBe(false);
      expect(machine.canTransition(State.CheckingForCancellation, State.Cancelled)).toBe(true);
      expect(machine.canMoveTo(State.WaitingForUserInput)).toBe(true);
      expect(machine.canMoveTo(State.Error)).toBe(false);
      expect(machine.allowedFrom()).toEqual(['WaitingForUserInput']);
      expect(machine.allowedFrom(State.ProcessingLLMResponse)).toEqual(['EndOfTurn', 'ToolUseRequested', 'Error']);
    });

    it('.timeInState() reads the clock', () => {
      const { machine, clock } = quietMachine();
      clock.advance(250);
      expect(machine.timeInState()).toBe(250);
      machine.transition(State.WaitingForUserInput);
      clock.advance(30);
      expect(machine.timeInState()).toBe(30);
    });

    it('.history() is a copy', () => {
      const { machine } = quietMachine();
      machine.transition(State.WaitingForUserInput);
      machine.history().pop();
      expect(machine.history()).toHaveLength(1);
    });
  });

  describe('history bound', () => {
    it('keeps the newest maxHistorySize records while the sink sees them all', () => {
      const seen: number[] = [];
      const { machine, clock } = quietMachine({ maxHistorySize: 5, sink: (r) => seen.push(r.seq) });
      machine.transition(State.WaitingForUserInput);
      toolTurn(machine, clock);
      expect(machine.history().map((r) => r.seq)).toEqual([8, 9, 10, 11, 12]);
      expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    });

    it('.setMaxHistorySize() shrinks to the newest records and validates its argument', () => {
      const { machine, clock } = quietMachine();
      machine.transition(State.WaitingForUserInput);
      toolTurn(machine, clock);
      machine.setMaxHistorySize(2);
      expect(machine.history().map((r) => r.seq)).toEqual([11, 12]);
      expect(machine.maxHistorySize).toBe(2);
      expect(() => machine.setMaxHistorySize(0)).toThrow(
        'Expected `size` to be a positive integer or Infinity, got `0` (number)',
      );
    });
  });

  describe('.reset()', () => {
    it('returns to Ready, clears history, keeps seq counting and tells sink and listeners', () => {
      const sink = { write: jest.fn(), reset: jest.fn() };
      const { machine, clock } = quietMachine({ sink });
      const onReset = jest.fn();
      machine.on('reset', onReset);
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      clock.advance(9);
      machine.reset();
      expect(machine.current).toBe('Ready');
      expect(machine.previous).toBe('Unknown');
      expect(machine.history()).toEqual([]);
      expect(machine.timeInState()).toBe(0);
      const info = { from: 'SendingToLLM', at: T0 + 9, seq: 2 };
      expect(onReset).toHaveBeenCalledWith(info);
      expect(sink.reset).toHaveBeenCalledWith(info);
      expect(machine.transition(State.WaitingForUserInput)).toMatchObject({ seq: 3, from: 'Ready', durationMs: 0 });
    });
  });

  describe('events', () => {
    it('notifies after the state is committed', () => {
      const { machine } = quietMachine();
      const seen: string[] = [];
      machine.onTransition((r) => seen.push(`${r.to}:${machine.current}:${machine.history().length}`));
      machine.transition(State.WaitingForUserInput);
      expect(seen).toEqual(['WaitingForUserInput:WaitingForUserInput:1']);
    });

    it('.onTransition() returns an unsubscribe function', () => {
      const { machine } = quietMachine();
      const listener = jest.fn();
      const unsubscribe = machine.onTransition(listener);
      machine.transition(State.WaitingForUserInput);
      unsubscribe();
      machine.transition(State.SendingToLLM);
      expect(listener).toHaveBeenCalledTimes(1);
    });

    it('.once() runs a listener for one event only, and .off() removes one', () => {
      const { machine } = quietMachine();
      const once = jest.fn();
      const on = jest.fn();
      machine.once('transition', once);
      machine.on('transition', on);
      machine.transition(State.WaitingForUserInput);
      machine.off('transition', on);
      machine.transition(State.SendingToLLM);
      expect(once).toHaveBeenCalledTimes(1);
      expect(on).toHaveBeenCalledTimes(1);
    });

    it('contains a throwing listener: logged, reported, the others still run', () => {
      const { logger, entries } = captureLogger('warn');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      const before = jest.fn();
      const after = jest.fn();
      const errors: Array<{ event: string; error: unknown }> = [];
      machine.on('transition', before);
      machine.on('transition', () => {
        throw new Error('listener bug');
      });
      machine.on('transition', after);
      machine.on('listenerError', (info) => errors.push(info));
      expect(() => machine.transition(State.WaitingForUserInput)).not.toThrow();
      expect(machine.current).toBe('WaitingForUserInput');
      expect(before).toHaveBeenCalledTimes(1);
      expect(after).toHaveBeenCalledTimes(1);
      expect(errors).toEqual([{ event: 'transition', error: new Error('listener bug') }]);
      expect(entries.map((e) => [e.level, e.message])).toEqual([
        ['error', "a 'transition' listener threw: listener bug"],
      ]);
    });

    it('contains a throwing listenerError listener without looping', () => {
      const { machine } = quietMachine();
      machine.on('transition', () => {
        throw new Error('first');
      });
      const errorListener = jest.fn(() => {
        throw new Error('second');
      });
      machine.on('listenerError', errorListener);
      machine.transition(State.WaitingForUserInput);
      expect(errorListener).toHaveBeenCalledTimes(1);
    });

    it('rejects a listener that is not a function', () => {
      const { machine } = quietMachine();
      expect(() => machine.on('transition', 'log' as never)).toThrow(
        'Expected `listener` to be a function, got `log` (string)',
      );
    });
  });

  describe('run-to-completion', () => {
    it('a move asked for inside a listener takes effect after every listener saw the current one', () => {
      const { machine } = quietMachine();
      const seen: string[] = [];
      machine.on('transition', (r) => {
        seen.push(`A saw ${r.to} (current ${machine.current})`);
        if (r.to === 'EndOfTurn') {
          const queued = machine.transition(State.WaitingForUserInput, 'next turn');
          seen.push(`A queued seq ${queued.seq}, current still ${machine.current}`);
        }
      });
      machine.on('transition', (r) => seen.push(`B saw ${r.to} (current ${machine.current})`));
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      machine.transition(State.ProcessingLLMResponse);
      seen.length = 0;
      machine.transition(State.EndOfTurn);
      expect(seen).toEqual([
        'A saw EndOfTurn (current EndOfTurn)',
        'A queued seq 5, current still EndOfTurn',
        'B saw EndOfTurn (current EndOfTurn)',
        'A saw WaitingForUserInput (current WaitingForUserInput)',
        'B saw WaitingForUserInput (current WaitingForUserInput)',
      ]);
      expect(machine.history().map((r) => [r.seq, r.from, r.to])).toEqual([
        [1, 'Ready', 'WaitingForUserInput'],
        [2, 'WaitingForUserInput', 'SendingToLLM'],
        [3, 'SendingToLLM', 'ProcessingLLMResponse'],
        [4, 'ProcessingLLMResponse', 'EndOfTurn'],
        [5, 'EndOfTurn', 'WaitingForUserInput'],
      ]);
    });

    it('validates a queued move against the state it will follow', () => {
      const { machine } = quietMachine();
      const outcomes: string[] = [];
      machine.onTransition((r) => {
        if (r.to !== 'WaitingForUserInput' || r.seq !== 1) return;
        machine.transition(State.SendingToLLM);
        machine.transition(State.ProcessingLLMResponse);
        try {
          machine.transition(State.RunningTool);
        } catch (error) {
          outcomes.push((error as IllegalTransitionError).from);
        }
      });
      machine.transition(State.WaitingForUserInput);
      expect(outcomes).toEqual(['ProcessingLLMResponse']);
      expect(machine.current).toBe('ProcessingLLMResponse');
      expect(machine.history().map((r) => r.seq)).toEqual([1, 2, 3]);
    });

    it('drains long chains of listener-driven moves without deep recursion', () => {
      const { machine } = quietMachine({ maxHistorySize: 10 });
      const cycle: Record<string, string> = {
        WaitingForUserInput: 'SendingToLLM',
        SendingToLLM: 'ProcessingLLMResponse',
        ProcessingLLMResponse: 'EndOfTurn',
        EndOfTurn: 'WaitingForUserInput',
      };
      let moves = 0;
      machine.onTransition((r) => {
        if (++moves < 50_000) machine.transition(cycle[r.to] as never);
      });
      machine.transition(State.WaitingForUserInput);
      expect(moves).toBe(50_000);
      expect(machine.history().at(-1)!.seq).toBe(50_000);
    });

    it('queues a reset asked for inside a listener', () => {
      const { machine } = quietMachine();
      machine.onTransition((r) => {
        if (r.to === 'SendingToLLM') {
          machine.reset();
          machine.transition(State.WaitingForUserInput, 'after reset');
        }
      });
      const resets = jest.fn();
      machine.on('reset', resets);
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      expect(resets).toHaveBeenCalledWith({ from: 'SendingToLLM', at: T0, seq: 2 });
      expect(machine.history()).toEqual([
        expect.objectContaining({ seq: 3, from: 'Ready', to: 'WaitingForUserInput', description: 'after reset' }),
      ]);
    });
  });

  describe('sink', () => {
    it('receives every record, rejected moves, and a failure of its own does not stop the move', () => {
      const written: TransitionRecord[] = [];
      const rejected: IllegalTransitionError[] = [];
      const sink = {
        write(record: TransitionRecord) {
          written.push(record);
          if (record.seq === 2) throw new Error('disk full');
        },
        rejected: (e: IllegalTransitionError) => rejected.push(e),
      };
      const { logger, entries } = captureLogger('warn');
      const machine = new StateMachine({ sink, logger, clock: manualClock().now });
      const sinkErrors = jest.fn();
      machine.on('sinkError', sinkErrors);
      machine.transition(State.WaitingForUserInput);
      machine.transition(State.SendingToLLM);
      expect(() => machine.transition(State.EndOfTurn)).toThrow(IllegalTransitionError);
      expect(machine.current).toBe('SendingToLLM');
      expect(written.map((r) => r.seq)).toEqual([1, 2]);
      expect(rejected.map((e) => e.to)).toEqual(['EndOfTurn']);
      expect(sinkErrors).toHaveBeenCalledWith({ record: written[1], error: new Error('disk full') });
      expect(entries.map((e) => e.message)).toEqual([
        'history sink failed: disk full',
        'rejected transition SendingToLLM → EndOfTurn: ',
      ]);
    });
  });

  describe('failures around a move', () => {
    it('a logger that throws does not undo or interrupt a move that happened', () => {
      const { logger } = captureLogger('debug');
      jest.spyOn(logger, 'log').mockImplementation(() => {
        throw new TypeError('Do not know how to serialize a BigInt');
      });
      const warning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      try {
        const machine = new StateMachine({ logger, clock: manualClock().now });
        const seen: number[] = [];
        machine.onTransition((r) => seen.push(r.seq));
        expect(() =>
          machine.forceTransition(State.Cancelled, { description: 'stop', data: { big: 1n } }),
        ).not.toThrow();
        expect(machine.current).toBe('Cancelled');
        expect(seen).toEqual([1]);
        expect(warning).toHaveBeenCalledWith(
          expect.stringContaining('the logger threw while logging "forced transition Ready → Cancelled: stop"'),
        );
      } finally {
        warning.mockRestore();
      }
    });

    it('moves asked for by the sink or by sinkError and rejected listeners wait their turn', () => {
      const order: string[] = [];
      const sink = {
        write(r: TransitionRecord) {
          order.push(`sink ${r.seq}`);
          if (r.seq === 1) throw new Error('disk full');
        },
      };
      const machine = new StateMachine({ logger: false, clock: manualClock().now, sink });
      machine.on('sinkError', () => machine.transition(State.SendingToLLM, 'from sinkError'));
      machine.onTransition((r) => order.push(`listener ${r.seq}`));
      machine.transition(State.WaitingForUserInput);
      expect(order).toEqual(['sink 1', 'listener 1', 'sink 2', 'listener 2']);

      machine.on('rejected', () => machine.transition(State.ProcessingLLMResponse, 'from rejected'));
      expect(() => machine.transition(State.EndOfTurn)).toThrow(IllegalTransitionError);
      expect(machine.history().map((r) => r.to)).toEqual([
        'WaitingForUserInput',
        'SendingToLLM',
        'ProcessingLLMResponse',
      ]);
    });

    it('rejects a clock that goes bad later, before anything changes', () => {
      let now: unknown = 1000;
      const machine = new StateMachine({ logger: false, clock: () => now as number });
      now = Number.NaN;
      expect(() => machine.transition(State.WaitingForUserInput)).toThrow(
        'Expected `clock()` to be a finite number of milliseconds, got `NaN` (number)',
      );
      now = new Date(5);
      expect(() => machine.forceTransition(State.Error, 'x')).toThrow(
        /Expected `clock\(\)` to be a finite number of milliseconds/,
      );
      expect(machine.current).toBe('Ready');
      now = 2000;
      expect(machine.transition(State.WaitingForUserInput).seq).toBe(1);
    });

    it('tells an attachable sink its table once', () => {
      const attach = jest.fn();
      const machine = new StateMachine({ logger: false, sink: { write: () => undefined, attach } });
      expect(attach).toHaveBeenCalledTimes(1);
      expect(attach).toHaveBeenCalledWith(machine.table);
    });
  });

  describe('logging', () => {
    it('logs each move at debug with its data', () => {
      const { logger, entries } = captureLogger('debug');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      machine.transition(State.WaitingForUserInput, { description: 'start', data: { turn: 1 } });
      expect(entries).toEqual([
        {
          level: 'debug',
          message: 'transition Ready → WaitingForUserInput: start',
          meta: { seq: 1, durationMs: 0, data: { turn: 1 } },
        },
      ]);
    });

    it('does not call the logger for forced or rejected moves when warn is disabled', () => {
      const { logger, entries } = captureLogger('error');
      const log = jest.spyOn(logger, 'log');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      machine.forceTransition(State.Error, 'forced quietly');
      expect(() => machine.transition(State.EndOfTurn)).toThrow(IllegalTransitionError);
      expect(log).not.toHaveBeenCalled();
      expect(entries).toEqual([]);
    });

    it('builds nothing for a disabled level, and follows a level change on the logger', () => {
      const { logger, entries } = captureLogger('warn');
      const log = jest.spyOn(logger, 'log');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      machine.transition(State.WaitingForUserInput);
      expect(log).not.toHaveBeenCalled();
      logger.level = 'debug';
      machine.transition(State.SendingToLLM);
      expect(log).toHaveBeenCalledTimes(1);
      expect(entries.map((e) => e.message)).toEqual(['transition WaitingForUserInput → SendingToLLM: ']);
    });

    // A level that can be neither written nor redefined cannot change: the machine reads it
    // once, when made, instead of on every move.
    const fixedLevel = (
      level: string,
    ): { logger: winston.Logger; entries: ReturnType<typeof captureLogger>['entries']; reads: () => number } => {
      const { logger, entries } = captureLogger(level);
      Object.defineProperty(logger, 'level', { value: level, writable: false, configurable: false, enumerable: true });
      let reads = 0;
      const watched = new Proxy(logger, {
        get(target, key, receiver) {
          if (key === 'level') reads += 1;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      return { logger: watched, entries, reads: () => reads };
    };

    it('reads a fixed level once for ordinary moves, and still logs forced moves at warn', () => {
      const { logger, entries, reads } = fixedLevel('warn');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      machine.transition(State.WaitingForUserInput);
      const readsBefore = reads();
      for (let i = 0; i < 50; i++) {
        for (const to of [State.SendingToLLM, State.ProcessingLLMResponse, State.EndOfTurn, State.WaitingForUserInput])
          machine.transition(to);
      }
      expect(reads()).toBe(readsBefore);
      machine.forceTransition(State.Ready, 'start over');
      expect(entries).toEqual([
        expect.objectContaining({
          level: 'warn',
          message: 'forced transition WaitingForUserInput → Ready: start over',
        }),
      ]);
    });

    it('logs every move of a logger fixed at debug', () => {
      const { logger, entries } = fixedLevel('debug');
      const machine = new StateMachine({ logger, clock: manualClock().now });
      machine.transition(State.WaitingForUserInput, 'one');
      machine.transition(State.SendingToLLM, 'two');
      expect(entries.map((e) => e.message)).toEqual([
        'transition Ready → WaitingForUserInput: one',
        'transition WaitingForUserInput → SendingToLLM: two',
      ]);
    });
  });
});

describe('new StateMachine({ table })', () => {
  it('.transition() follows a hand-built, mutable table as it is when each machine is made', () => {
    const table = {
      initial: 'A',
      states: {
        A: { name: 'A', description: 'a', next: ['B'] as string[] },
        B: { name: 'B', description: 'b', next: ['A'] as string[] },
      },
    };
    const first = new StateMachine<string>({ table, logger: false });
    table.states.B.next.push('B');
    const second = new StateMachine<string>({ table, logger: false });
    second.transition('B');
    expect(second.transition('B').to).toBe('B');
    expect(second.canMoveTo('A')).toBe(true);
    first.transition('B');
    expect(() => first.transition('B')).toThrow(IllegalTransitionError);
  });

  it('.transition() on machines sharing a frozen table keeps each machine its own state', () => {
    const a = new StateMachine({ logger: false });
    const b = new StateMachine({ logger: false });
    a.transition('WaitingForUserInput');
    expect(a.current).toBe('WaitingForUserInput');
    expect(b.current).toBe('Ready');
    expect(b.canMoveTo('SendingToLLM')).toBe(false);
    expect(a.table).toBe(b.table);
  });
});
