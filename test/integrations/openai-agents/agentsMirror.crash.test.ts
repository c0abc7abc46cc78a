// The framework crash test (test/helpers/frameworkCrash.ts) for OpenAI Agents SDK runs: an
// `Agent` run by `AgentsMirror`, streamed and not, on the SDK's own OpenAI provider against the
// local Chat Completions server.
import { describeFrameworkCrash } from '../../helpers/frameworkCrash';

describeFrameworkCrash('Agents SDK runs', { fixture: 'agentsBatchToKill', variants: ['run', 'stream'], seed: 34 });
