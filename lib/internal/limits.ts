import { formatDuration } from './formatDuration';
import { formatUsd } from './formatUsd';
import type { UsageFieldName } from './usageFields';

/** One budget limit: the usage it caps, and how people read it. */
export interface LimitSpec {
  /** The usage it caps: the sum of these fields. The limit is spent when the sum reaches it (≥). */
  readonly of: readonly UsageFieldName[];
  /** Its short name in compact storage: the field of its cap in a distributed batch's Redis hash. */
  readonly code: string;
  /** What it measures, as the report tables name it: `cost`, `LLM calls`. */
  readonly label: string;
  /** Usage against the cap, as messages say it: `$0.62 of $0.50`, `3 of 3 LLM calls`. */
  readonly against: (used: number, max: number) => string;
  /** An amount in a report table's cell: `$0.6200`, `12,345`, `1 minute`. */
  readonly cell: (value: number) => string;
}

/**
 * Every budget limit, in the order they are checked (the first spent one is reported): the one
 * list that validation, `Budget`, the distributed batch's Redis hash and Lua scripts, and the
 * reports are derived from (through fieldLists.ts). A limit's doc comment is its doc in
 * `BudgetLimits`. Adding a limit is an entry here; the usage it caps must be fields of
 * `USAGE_FIELDS`. Data only, never frozen: a test swaps in a longer list.
 */
export const LIMITS = {
  /** US dollars, as responses report them or `pricing` computes them. */
  maxCostUsd: { of: ['costUsd'], code: 'mc', label: 'cost', against: dollarsAgainst, cell: formatUsd },
  /** Input plus output tokens. */
  maxTokens: {
    of: ['inputTokens', 'outputTokens'],
    code: 'mt',
    label: 'tokens',
    against: (used, max) => `${tokens(used)} of ${tokens(max)}`,
    cell: count,
  },
  /** Tool calls, counted as they start. */
  maxToolCalls: {
    of: ['toolCalls'],
    code: 'mtc',
    label: 'tool calls',
    against: (used, max) => `${calls(used, 'tool call')} of ${calls(max, 'tool call')}`,
    cell: count,
  },
  /** LLM calls, counted as they start: each attempt of a retried call counts. */
  maxLlmCalls: {
    of: ['llmCalls'],
    code: 'mlc',
    label: 'LLM calls',
    against: (used, max) => `${count(used)} of ${calls(max, 'LLM call')}`,
    cell: count,
  },
  /** Milliseconds: an agent's time inside turns; for a batch's `total`, its elapsed time. */
  maxWallMs: {
    of: ['wallMs'],
    code: 'mw',
    label: 'wall time',
    against: (used, max) => `${formatDuration(used)} of wall time, of ${formatDuration(max)}`,
    cell: formatDuration,
  },
} as const satisfies Record<string, LimitSpec>;

/** The name of one limit: a key of `BudgetLimits`. */
export type LimitName = keyof typeof LIMITS;

/** `$0.0834 of $0.0800`: rounded as every amount is (`formatUsd`), so a reason and a report agree. */
function dollarsAgainst(used: number, max: number): string {
  return `${formatUsd(used)} of ${formatUsd(max)}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function tokens(n: number): string {
  return `${n.toLocaleString('en-US')} tokens`;
}

/** `1 tool call`, `3 tool calls`: no thousands separator, as budget messages always wrote them. */
function calls(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
