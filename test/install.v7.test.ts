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
  // skipLibCheck: false ai's types need @types/json-schema, as with ai 6 (see the README).
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
});
