// The framework crash test (test/helpers/frameworkCrash.ts) for OpenAI Agents SDK runs: an
// `Agent` run by `AgentsMirror`, streamed and not, on the SDK's own OpenAI provider against the
// local Responses and Chat Completions servers.
import { describeFrameworkCrash } from '../../helpers/frameworkCrash';

describeFrameworkCrash('Agents SDK runs', {
  fixture: 'agentsBatchToKill',
  variants: ['responses-run', 'chat-stream', 'responses-stream', 'chat-run'],
  api: (variant) => (variant.startsWith('responses') ? 'responses' : 'chat'),
  seed: 34,
});
