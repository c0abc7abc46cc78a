// What the LangGraph mirror's tests share: a tool that echoes, one that waits for its abort, the
// user message, and the check that a history is legal with so many forced moves.
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { validateHistory } from 'agent-state-machine/history';
import type { LangGraphMirror } from '../../../lib/integrations/langgraph';

export const echo = tool(async ({ text }: { text: string }) => `echo: ${text}`, {
  name: 'echo',
  description: 'Echoes its text',
  schema: z.object({ text: z.string() }),
});

export const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

export function expectLegal(lg: LangGraphMirror, forced = 0): void {
  const records = lg.machine.history();
  expect(validateHistory(records).issues).toEqual([]);
  expect(records.filter((r) => r.forced)).toHaveLength(forced);
}

/** A tool that runs until its signal aborts; `running` resolves once it has started. */
export function slowTool() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const slow = tool(
    (_input: Record<string, never>, config) =>
      new Promise<string>((_resolve, reject) => {
        started();
        const signal = (config as { signal?: AbortSignal }).signal!;
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
    { name: 'slow', description: 'Waits until aborted', schema: z.object({}) },
  );
  return { slow, running };
}
