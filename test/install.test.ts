import { installSuite } from './helpers/installSuite';

// The packed library installed from its tarball with plain `npm install` beside the 6.x majors
// from the registry (which needs the registry), then used. test/install.v7.test.ts does the same
// beside the 7.x majors, on Node 22 and later.
describe('npm install of the packed library beside ai 6, openai 6 and @anthropic-ai/sdk', () => {
  installSuite(['ai@6', 'openai@6', '@anthropic-ai/sdk'], { ai: { major: 6, spec: 'v3' }, openai: { major: 6 } });
});
