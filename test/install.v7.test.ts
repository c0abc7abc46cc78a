import fs from 'node:fs';
import path from 'node:path';
import { installSuite } from './helpers/installSuite';
import { run } from './helpers/packedInstall';

// test/install.test.ts beside the 7.x majors and @openai/agents (which depends on openai 7). They
// need Node 22 or later, so this file runs in the ai7-openai7 jest project only.
describe('npm install of the packed library beside ai 7, openai 7, @anthropic-ai/sdk and @openai/agents', () => {
  const suite = installSuite(['ai@7', 'openai@7', '@anthropic-ai/sdk', '@openai/agents'], {
    ai: { major: 7, spec: 'v4' },
    openai: { major: 7 },
  });

  // A user's code against our .d.ts and the 7.x majors' own types, ESM and CommonJS. Under
  // skipLibCheck: false ai's types need @types/json-schema, as with ai 6 (see docs/integrations/ai-sdk.md).
  it('type-checks an AI SDK 7 user of both module kinds against the published types', async () => {
    fs.mkdirSync(path.join(suite.project(), 'node_modules/@types'), { recursive: true });
    fs.cpSync(
      path.resolve(__dirname, '../node_modules/@types/json-schema'),
      path.join(suite.project(), 'node_modules/@types/json-schema'),
      { recursive: true },
    );
    const tsc = await run(
      process.execPath,
      [path.resolve(__dirname, '../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      suite.project(),
    );
    expect(tsc.stdout).toBe('');
    expect(tsc.code).toBe(0);
  }, 120_000);

  // agent-state-machine/openai-agents from the packed library, both module kinds: a tool round
  // trip of an Agents SDK agent on a canned Model, mirrored, then stopped by a budget.
  it.each(['agents.mjs', 'agents.cjs'])(
    '%s runs an Agents SDK agent through agentsMirror and stops it with a budget',
    async (script) => {
      fs.copyFileSync(path.resolve(__dirname, 'fixtures/install', script), path.join(suite.project(), script));
      const result = await run(process.execPath, [script], suite.project());
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual({
        output: 'done',
        outcome: 'end_of_turn',
        usage: { llmCalls: 2, toolCalls: 1 },
        stopped: { outcome: 'budget_exceeded', error: 'BudgetExceededError', resumable: true },
      });
    },
    60_000,
  );
});
