import { WorkerSlots } from '../../../lib/integrations/bullmq/WorkerSlots';

describe('WorkerSlots', () => {
  it('gives a freed slot to a raised run first, then to a new run, and refuses new runs once closed', async () => {
    const slots = new WorkerSlots(1);
    expect(await slots.take()).toBe(true);
    const order: string[] = [];
    const waitingNew = slots.take().then((taken) => order.push(`new:${taken}`));
    const raised = slots.takeFirst().then(() => order.push('raised'));
    slots.free();
    await raised;
    expect(order).toEqual(['raised']);

    slots.close();
    await waitingNew;
    // The new run waiting for a slot is told it gets none; one asking later is told at once.
    expect(order).toEqual(['raised', 'new:false']);
    expect(await slots.take()).toBe(false);
    // A raised run still gets the slot freed after the close.
    const again = slots.takeFirst().then(() => order.push('raised again'));
    slots.free();
    await again;
    expect(order).toEqual(['raised', 'new:false', 'raised again']);
    expect(slots.taken).toBe(1);
  });
});
