import OpenAI from 'openai';
import { fromOpenAIResponses } from '../../../lib/integrations/openai';
import { recordedFetch } from '../../fixtures/recordedFetch';
import { agentOf, readFile } from '../../helpers/sdkLoopTest';

// Responses whose only output item asks the client to act in a way the loop cannot (shapes from
// the SDK's types: test/fixtures/openai/NOTICE.md), read by the real `openai` client through a
// fake `fetch`. Each used to end the turn with empty text; each now ends it in an error that
// names the item and what to do, without retrying and without committing anything.

const ITEMS = [
  ['shell_call', 'sh_68f0a1', 'call_shell_1', /shell tool in `request.tools`/],
  ['local_shell_call', 'lsh_68f0a2', 'call_local_1', /local_shell tool/],
  ['apply_patch_call', 'apc_68f0a3', 'call_patch_1', /applies a patch/],
  ['custom_tool_call', 'ctc_68f0a4', 'call_custom_1', /name code_exec\): give the tool in `tools`/],
  ['computer_call', 'cu_68f0a5', 'call_computer_1', /computer use needs a harness/],
  ['mcp_approval_request', 'mcpr_68f0a6', undefined, /name dmcp\.roll\): set `require_approval: 'never'`/],
] as const;

describe.each([
  ['streamed', true, '.sse'],
  ['not streamed', false, '.json'],
] as const)('fromOpenAIResponses, %s', (_mode, stream, ext) => {
  it.each(ITEMS)('ends the turn in an error naming a %s item (%s), tried once', async (type, id, callId, remedy) => {
    const recorded = recordedFetch('openai', [`${type}${ext}`, `${type}${ext}`]);
    const client = new OpenAI({ apiKey: 'sk-local', fetch: recorded.fetch });
    const loop = fromOpenAIResponses(client, { model: 'gpt-5.1', tools: { read_file: readFile }, stream });
    const result = await agentOf(loop).runTurn('Do it');
    expect(result.outcome).toBe('error');
    const message = String(result.error?.message);
    expect(message).toContain(`resp_${type} asks the client for an action`);
    expect(message).toContain(`a ${type} item (id ${id}`);
    if (callId !== undefined) expect(message).toContain(`call_id ${callId}`);
    expect(message).toMatch(remedy);
    expect(recorded.requests).toHaveLength(1);
    expect(loop.items).toEqual([]);
  });
});
