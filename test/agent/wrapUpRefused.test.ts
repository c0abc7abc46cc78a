import { Budget, StepMirror } from 'agent-state-machine';
import { runTask } from '../../lib/batch/tasks/runTask';
import { submitBatch } from '../../lib/integrations/bullmq/index';
import { mirrorAISDK } from '../../lib/integrations/ai-sdk';
import { AgentsMirror } from '../../lib/integrations/openai-agents';
import { LangGraphMirror } from '../../lib/integrations/langgraph';

// Where a final call cannot be made by us (a framework owns the loop and its requests), `wrapUp`
// and `visible` are refused by name, never dropped: each mirror says what it honours.

const pricing = (): number => 0;

describe('budget.wrapUp and budget.visible refused where a path cannot honour them', () => {
  it('a StepMirror driven by hand (it honours nothing) refuses both, saying why', () => {
    expect(() => new StepMirror({ budget: { maxCostUsd: 1, wrapUp: true } })).toThrow(
      /^Expected `budget\.wrapUp` to be left out of a framework run \(StepMirror\): this mirror's calls are made by the framework as it built them, so no final call with no tools can be made \(mirrorAISDK makes one/,
    );
    expect(() => new StepMirror({ budget: { visible: true } })).toThrow(
      /^Expected `budget\.visible` to be left out of a framework run \(StepMirror\): this mirror's requests are built by the framework/,
    );
    const pool = new Budget({ maxCostUsd: 1, wrapUp: true }, { label: 'pool' });
    expect(() => new StepMirror({ sharedBudgets: [pool] })).toThrow(/^Expected `pool\.wrapUp` to be left out/);
    // Off is no request: nothing to refuse.
    expect(() => new StepMirror({ budget: { maxCostUsd: 1, visible: false } })).not.toThrow();
  });

  it("a StepMirror takes an external budget's endings as its own (a BullMQ batch's total.wrapUp): refused where the integration cannot honour them", async () => {
    const outside = {
      label: 'total',
      endings: { wrapUp: true as const, visible: true },
      capsCost: true,
      holdsWrapUp: true,
      reserve: () => Promise.resolve(undefined),
      charge: () => Promise.resolve(undefined),
    };
    expect(() => new StepMirror({ externalBudgets: [outside] })).toThrow(
      /^Expected `total\.wrapUp` to be left out of a framework run \(StepMirror\): this mirror's calls are made by the framework/,
    );
    const honours = { wrapUp: true, budgetNote: true };
    expect(() => new StepMirror({ externalBudgets: [outside], honours, pricing, logger: false })).not.toThrow();
    // A batch's mirror (it honours both until its integration says): the Agents SDK's refuses them by name.
    const agents = await runTask(
      { id: 'agents', drive: (mirror) => void new AgentsMirror({ mirror }) },
      { adapter: { logger: false, pricing, externalBudgets: [outside] } },
    );
    expect(agents.outcome).toBe('error');
    expect(agents.error?.message).toMatch(
      /`total\.wrapUp` to be left out of new AgentsMirror\(\): the Agents SDK's Runner decides/,
    );
    // A call reported by hand cannot be made the final one: refused, naming the batch's option.
    const mirror = new StepMirror({ externalBudgets: [outside], honours, pricing, logger: false });
    await expect(mirror.modelCallStart({ inputTokens: 1, maxOutputTokens: 1 })).rejects.toThrow(
      /^Expected `total\.wrapUp` to be left out of a mirror whose model calls come through modelCallStart\(\)/,
    );
  });

  it('mirrorAISDK honours both; the Agents SDK and LangGraph mirrors refuse them, each saying why its framework does not let it', () => {
    const budget = { maxCostUsd: 1, wrapUp: true as const };
    expect(() => mirrorAISDK({ budget, pricing, logger: false })).not.toThrow();
    expect(() => mirrorAISDK({ budget: { visible: true }, logger: false })).not.toThrow();
    expect(() => new AgentsMirror({ budget, pricing, logger: false })).toThrow(
      /^Expected `budget\.wrapUp` to be left out of new AgentsMirror\(\): the Agents SDK's Runner decides from each model response whether its run goes on/,
    );
    expect(() => new AgentsMirror({ budget: { visible: true }, logger: false })).toThrow(
      /^Expected `budget\.visible` to be left out of new AgentsMirror\(\): the Agents SDK's Runner builds each request/,
    );
    expect(() => new LangGraphMirror({ budget, pricing, logger: false })).toThrow(
      /^Expected `budget\.wrapUp` to be left out of new LangGraphMirror\(\): LangGraph's callbacks see a chat model call but cannot change its request/,
    );
    expect(() => new LangGraphMirror({ budget: { visible: true }, logger: false })).toThrow(
      /^Expected `budget\.visible` to be left out of new LangGraphMirror\(\): LangGraph's callbacks/,
    );
    // What an integration honours is its own to say.
    expect(() => new AgentsMirror({ honours: { wrapUp: true }, budget, pricing, logger: false })).toThrow(
      /^Expected `honours` to be left out of new AgentsMirror\(\): the integration says what it honours/,
    );
  });

  it("a batch's mirror (it honours both until its integration says) is refused by the Agents SDK and LangGraph mirrors, and by a call reported by hand", async () => {
    const adapter = { logger: false as const, pricing, budget: { maxCostUsd: 1, wrapUp: true as const } };
    const agents = await runTask({ id: 'agents', drive: (mirror) => void new AgentsMirror({ mirror }) }, { adapter });
    expect(agents.outcome).toBe('error');
    expect(agents.error?.message).toMatch(
      /`budget\.wrapUp` to be left out of new AgentsMirror\(\): the Agents SDK's Runner decides/,
    );
    const graph = await runTask({ id: 'graph', drive: (mirror) => void new LangGraphMirror({ mirror }) }, { adapter });
    expect(graph.outcome).toBe('error');
    expect(graph.error?.message).toMatch(/`budget\.wrapUp` to be left out of new LangGraphMirror\(\): LangGraph's/);
    let made = 0;
    const byHand = await runTask(
      {
        id: 'by-hand',
        drive: async (mirror) => {
          await mirror.modelCallStart({ inputTokens: 10, maxOutputTokens: 10 });
          made += 1;
        },
      },
      { adapter: { ...adapter, budget: { visible: true } } },
    );
    expect(made).toBe(0);
    expect(byHand.outcome).toBe('error');
    expect(byHand.error?.message).toMatch(
      /`budget\.visible` to be left out of a mirror whose model calls come through modelCallStart\(\)/,
    );
    expect(byHand.usage.llmCalls).toBe(0);
  });

  it("submitBatch refuses total.wrapUp beside whenSpent: 'pause', before it connects", async () => {
    const opts = { connection: 'redis://127.0.0.1:1', name: 'q' };
    await expect(
      submitBatch([], { ...opts, total: { maxCostUsd: 1, wrapUp: true, whenSpent: 'pause' } }),
    ).rejects.toThrow(/^Expected `total\.wrapUp` to be left out when `whenSpent` is 'pause'/);
  });
});
