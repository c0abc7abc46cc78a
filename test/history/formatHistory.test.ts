import { formatHistory, StateMachine } from '../../lib/index';
import { State } from '../../states/StateName';
import { manualClock } from '../helpers/manualClock';

describe('formatHistory()', () => {
  it('renders a readable table with forced moves marked and data shown', () => {
    const clock = manualClock(Date.UTC(2026, 10, 22, 9, 30, 0));
    const machine = new StateMachine({ clock: clock.now, logger: false });
    machine.transition(State.WaitingForUserInput, 'turn 1');
    clock.advance(1200);
    machine.transition(State.SendingToLLM, { description: 'send user message', data: { attempt: 1 } });
    clock.advance(185_000);
    machine.transition(State.ProcessingLLMResponse, 'response');
    clock.advance(12);
    machine.forceTransition(State.Cancelled, 'user pressed stop');
    expect(formatHistory(machine.history())).toMatchInlineSnapshot(`
"seq  time          move                                  in from              description
  1  09:30:00.000  Ready → WaitingForUserInput           0 ms                 turn 1
  2  09:30:01.200  WaitingForUserInput → SendingToLLM    1.2 s                send user message  {"attempt":1}
  3  09:33:06.200  SendingToLLM → ProcessingLLMResponse  3 minutes 5 seconds  response
  4  09:33:06.212  ProcessingLLMResponse → Cancelled     12 ms                FORCED user pressed stop"
`);
  });

  it('can hide data and change the time format', () => {
    const machine = new StateMachine({ clock: () => Date.UTC(2026, 0, 2, 3, 4, 5), logger: false });
    machine.transition(State.WaitingForUserInput, { description: 'go', data: { secret: true } });
    expect(formatHistory(machine.history(), { data: false, timeFormat: 'yyyy-MM-dd HH:mm' })).toBe(
      'seq  time              move                         in from  description\n  1  2026-01-02 03:04  Ready → WaitingForUserInput  0 ms     go',
    );
  });

  it('keeps one row per move: line breaks escaped, long data cut', () => {
    const machine = new StateMachine({ clock: () => Date.UTC(2026, 0, 2, 3, 4, 5), logger: false });
    machine.transition(State.WaitingForUserInput, {
      description: 'line one\nline two',
      data: { blob: 'x'.repeat(500) },
    });
    const [, row] = formatHistory(machine.history(), { maxDataChars: 30 }).split('\n');
    expect(row).toBe(
      '  1  03:04:05.000  Ready → WaitingForUserInput  0 ms     line one\\nline two  {"blob":"xxxxxxxxxxxxxxxxxxxx…',
    );
  });

  it('names input that is not a history', () => {
    expect(() => formatHistory(undefined as never)).toThrow(
      'Expected `records` to be an array of transition records, got `undefined`',
    );
    expect(() => formatHistory([{ seq: 1 }] as never)).toThrow(/Expected `records\[0\]` to be a transition record/);
  });

  it('says so when there is nothing to show', () => {
    expect(formatHistory([])).toBe('(no transitions)');
  });
});
