// The framework crash test (test/helpers/frameworkCrash.ts) for LangGraph runs: a prebuilt ReAct
// agent on LangChain's ChatOpenAI against the local Chat Completions server, its model and
// tools wrapped by `LangGraphMirror`.
import { describeFrameworkCrash } from '../../helpers/frameworkCrash';

describeFrameworkCrash('LangGraph runs', { fixture: 'langGraphBatchToKill', variants: ['invoke'], seed: 43 });
