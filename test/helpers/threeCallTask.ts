// One batch task, `t`, of three LLM calls (two ask for the tool `look`, the last ends the turn),
// for the tests that cut its file at a chosen line and resume it. `label` marks every answer,
// so a test can tell whose answers a resume served.
import { createScriptedAgent, type BatchTask } from 'agent-state-machine';

export function threeCallTask(usage: { inputTokens: number; outputTokens: number }, label = ''): BatchTask[] {
  const said = (text: string) => (label === '' ? {} : { text: `${label}${text}` });
  return [
    {
      id: 't',
      input: 'go',
      agent: () =>
        createScriptedAgent({
          sleep: async () => undefined,
          replies: [
            { toolCalls: [{ id: 'c1', name: 'look', input: {} }], ...said('1'), usage, model: 'm1' },
            { toolCalls: [{ id: 'c2', name: 'look', input: {} }], ...said('2'), usage, model: 'm1' },
            { text: label === '' ? 'done' : `${label} done`, usage, model: 'm1' },
          ],
          tools: { look: { output: 'seen' } },
        }),
    },
  ];
}
