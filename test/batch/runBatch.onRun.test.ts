import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch } from '../../lib/batch/runBatch';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';

const noWait = async (): Promise<void> => undefined;
const task = (id: string, replies: Array<{ text?: string; error?: string }>) => ({
  id,
  input: `do ${id}`,
  agent: createScriptedAgent({ replies, sleep: noWait }),
});

describe('runBatch() onRun', () => {
  it("runBatch() hands onRun each run's adapter before its turn and calls what it returns after the run", async () => {
    const log: string[] = [];
    const report = await runBatch([task('a', [{ text: 'A' }]), task('b', [{ text: 'B' }])], {
      concurrency: 1,
      logger: false,
      sleep: noWait,
      onRun: ({ id, index, agent }) => {
        expect(agent).toBeInstanceOf(AgentWithStateMachine);
        log.push(`start ${id} ${index} ${agent.machine.current}`);
        agent.machine.onTransition((r) => void (r.to === 'EndOfTurn' && log.push(`end of turn ${id}`)));
        return () => void log.push(`ended ${id}`);
      },
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'end_of_turn']);
    expect(log).toEqual(['start a 0 Ready', 'end of turn a', 'ended a', 'start b 1 Ready', 'end of turn b', 'ended b']);
  });

  it('runBatch() ends a run whose onRun throws as error, and the batch goes on', async () => {
    const report = await runBatch([task('a', [{ text: 'A' }]), task('b', [{ text: 'B' }])], {
      logger: false,
      sleep: noWait,
      onRun: ({ id }) => {
        if (id === 'a') throw new Error('tracer unavailable');
      },
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['error', 'end_of_turn']);
    expect(report.runs[0]!.error?.message).toMatch(/tracer unavailable/);
  });

  it('runBatch() counts the moves a run made before its onRun threw', async () => {
    const report = await runBatch([task('a', [{ text: 'A' }])], {
      logger: false,
      sleep: noWait,
      onRun: ({ agent }) => {
        agent.machine.transition('WaitingForUserInput', 'warmed up by the tracer');
        agent.machine.transition('SendingToLLM', 'probe');
        throw new Error('tracer unavailable');
      },
    });
    expect(report.runs[0]).toMatchObject({ outcome: 'error', transitions: 2 });
  });

  it('runBatch() rejects an onRun that is not a function, naming it', async () => {
    await expect(runBatch([], { onRun: 'trace' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(runBatch([], { onRun: 'trace' as never })).rejects.toThrow(/onRun/);
  });
});
