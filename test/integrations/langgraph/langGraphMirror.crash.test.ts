// The framework crash test (test/helpers/frameworkCrash.ts) for LangGraph runs: a prebuilt ReAct
// agent on LangChain's ChatOpenAI against the local Chat Completions server, its model and
// tools wrapped by `LangGraphMirror`, which rides the graph's callbacks (variant `invoke`) or, in
// every other scenario, hears only the model and tools it wrapped (variant `wrapped`).
import { describeFrameworkCrash } from '../../helpers/frameworkCrash';

describeFrameworkCrash('LangGraph runs', {
  fixture: 'langGraphBatchToKill',
  variants: ['invoke', 'wrapped'],
  seed: 43,
});
