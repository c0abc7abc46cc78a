// Type tests: `npm test` type-checks this file, so each @ts-expect-error must stay an error.
import { State } from '../states/StateName';
import {
  StateMachine,
  extendTable,
  DEFAULT_TABLE,
  type HistorySink,
  type StateName,
  type TransitionRecord,
} from '../lib/index';
import { TRANSITIONS } from '../lib/machine/transitions';
import { runFacts, type RunUsage, type TurnFacts } from '../lib/subpaths/history';
import { RunFactsCollector } from '../lib/history/runFacts';

describe('types', () => {
  it('narrow state names to the sixteen, and widen with an extended table', () => {
    const machine = new StateMachine({ logger: false });
    const current: StateName = machine.current;
    // @ts-expect-error 'Waiting' is not a state name
    expect(() => machine.transition('Waiting')).toThrow();
    // @ts-expect-error a description must be a string
    expect(() => machine.transition(State.WaitingForUserInput, 42)).toThrow();
    // @ts-expect-error forceTransition needs a reason
    expect(() => machine.forceTransition(State.Error)).toThrow();
    // @ts-expect-error the table is read-only data
    expect(() => (TRANSITIONS.Ready = [])).toThrow();

    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'compacts', next: ['SendingToLLM'] }],
      edges: [['SendingToLLM', 'Compacting']],
    });
    const extended = new StateMachine({ table, logger: false });
    const name: StateName | 'Compacting' = extended.current;
    const record: TransitionRecord<StateName | 'Compacting'> = extended.transition('WaitingForUserInput');
    // @ts-expect-error records are read-only
    record.seq = 2;
    expect([current, name]).toEqual(['Ready', 'Ready']);

    // A sink typed for any string does not widen the machine's state names.
    const anySink: HistorySink<string> = { write: () => undefined };
    const sinked = new StateMachine({ sink: anySink, logger: false });
    // @ts-expect-error still only the sixteen names
    expect(() => sinked.transition('Waiting')).toThrow();

    machine.on('transition', (r) => {
      const seq: number = r.seq;
      void seq;
    });
    // @ts-expect-error no such event
    machine.on('transitioned', () => undefined);
  });

  it('give run facts as read-only data, the open turn and unknown usage typed as such', () => {
    const machine = new StateMachine({ logger: false });
    machine.transition(State.WaitingForUserInput);
    machine.transition(State.SendingToLLM);
    const facts = runFacts(machine.history());
    // @ts-expect-error facts are read-only
    facts.outcome = 'ok';
    // @ts-expect-error so are their lists
    facts.turns.push(facts.turns[0]!);
    const turn: TurnFacts = new RunFactsCollector().add(machine.history()[0]!) ?? facts.turns[0]!;
    // @ts-expect-error usage may be unknown: null until a record carries it
    const usage: RunUsage = turn.usage;
    // @ts-expect-error runFacts takes items, not a path
    expect(() => runFacts('run.jsonl')).toThrow();
    expect([turn.end, usage]).toEqual(['open', null]);
  });
});
