// The ledger's reserve line is the write-ahead record of an LLM call: a call whose line was not
// kept is not made. A sink that throws on it (a file whose write or fsync failed: a full disk)
// fails closed as a store whose commit rejects does, on the adapter and on the mirror.
import { StepMirror } from '../../lib/agent/StepMirror';
import { drive } from '../helpers/drive';

/** A sink whose disk is full by the time the first reserve line comes. */
function fullDiskSink(): { write: () => void; journal: (e: { type: string }) => void; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    write: () => undefined,
    journal: (e) => {
      if (e.type === 'reserve') throw new Error('ENOSPC: no space left on device, write');
      lines.push(e.type);
    },
  };
}

describe('a reserve line the sink fails to keep', () => {
  it('stops the adapter before the call: no request, the run ends in error saying why', async () => {
    const sink = fullDiskSink();
    const d = drive({ replies: [{ text: 'never sent' }] }, { sink, ledger: true });
    const result = await d.adapter.runTurn('hi');
    expect(result.outcome).toBe('error');
    expect(result.error!.message).toMatch(/the ledger's reserve line.*ENOSPC/);
    expect(d.agent.calls.filter((c) => c.op === 'sendUserMessage')).toHaveLength(0);
    expect(result.usage.costUsd).toBe(0);
  });

  it('stops a framework mirror before the call the same way', async () => {
    const sink = fullDiskSink();
    const mirror = new StepMirror({ sink, ledger: true, logger: false });
    mirror.runStart('hi');
    const stop = await mirror.modelCallStart();
    expect(stop).toBeDefined();
    expect(stop!.message).toMatch(/the ledger's reserve line.*ENOSPC/);
    expect(mirror.result?.outcome).toBe('error');
  });
});
