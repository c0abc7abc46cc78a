import {
  LIMIT_NAMES,
  LIMIT_ROWS,
  limitUsed,
  RESPONSE_FIELD_NAMES,
  CHARGE_FIELD_NAMES,
  responseUsage,
  USAGE_FIELD_NAMES,
} from '../../lib/internal/fieldLists';
import { LIMITS } from '../../lib/internal/limits';
import { USAGE_FIELDS } from '../../lib/internal/usageFields';
import type { Usage } from '../../lib/agent/AgentLoop';
import { emptyUsage } from '../../lib/agent/UsageTotals';

describe('the lists of usage fields and limits', () => {
  it('USAGE_FIELD_NAMES and LIMIT_NAMES keep the order of UsageTotals and of the checks', () => {
    expect(USAGE_FIELD_NAMES).toEqual([
      'inputTokens',
      'outputTokens',
      'costUsd',
      'uncertainUsd',
      'releasedUsd',
      'unpricedCalls',
      'toolCalls',
      'llmCalls',
      'wallMs',
    ]);
    expect(RESPONSE_FIELD_NAMES).toEqual(['inputTokens', 'outputTokens', 'costUsd']);
    expect(CHARGE_FIELD_NAMES).toEqual([
      'inputTokens',
      'outputTokens',
      'costUsd',
      'uncertainUsd',
      'releasedUsd',
      'unpricedCalls',
    ]);
    expect(LIMIT_NAMES).toEqual(['maxCostUsd', 'maxTokens', 'maxToolCalls', 'maxLlmCalls', 'maxWallMs']);
  });

  it('LIMIT_ROWS lists the limits as a turn spends: what responses report, LLM calls, tool calls, time', () => {
    expect(LIMIT_ROWS).toEqual(['maxCostUsd', 'maxTokens', 'maxLlmCalls', 'maxToolCalls', 'maxWallMs']);
  });

  it('gives every field and limit its own short code, none of them the spent marker `x` of the budget hash', () => {
    const codes = [...USAGE_FIELD_NAMES.map((k) => USAGE_FIELDS[k].code), ...LIMIT_NAMES.map((k) => LIMITS[k].code)];
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).not.toContain('x');
  });

  it('has one field for wall time and one for each kind of call a budget reserves', () => {
    const growing = (how: string): string[] => USAGE_FIELD_NAMES.filter((k) => USAGE_FIELDS[k].grows === how);
    expect(growing('time')).toEqual(['wallMs']);
    expect(growing('llm')).toEqual(['llmCalls']);
    expect(growing('tool')).toEqual(['toolCalls']);
  });

  it('caps only fields of USAGE_FIELDS, at least one each', () => {
    for (const limit of LIMIT_NAMES) {
      expect(LIMITS[limit].of.length).toBeGreaterThan(0);
      for (const field of LIMITS[limit].of) expect(USAGE_FIELD_NAMES).toContain(field);
    }
  });

  it('limitUsed() sums the fields a limit measures', () => {
    const usage = { ...emptyUsage(), inputTokens: 7000, outputTokens: 5345, costUsd: 0.5, wallMs: 12 };
    expect(limitUsed(usage, 'maxTokens')).toBe(12_345);
    expect(limitUsed(usage, 'maxCostUsd')).toBe(0.5);
    expect(limitUsed(usage, 'maxWallMs')).toBe(12);
    expect(limitUsed(usage, 'maxLlmCalls')).toBe(0);
  });

  it('responseUsage() charges each field a response reports, 0 when absent, at the priced cost', () => {
    const reported: Usage = { inputTokens: 10, cachedInputTokens: 4, costUsd: 0.2 };
    expect(responseUsage(reported, 0.3)).toEqual({ inputTokens: 10, outputTokens: 0, costUsd: 0.3 });
    expect(responseUsage(undefined, undefined)).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });

  it('words each limit as budget messages always have', () => {
    expect(LIMIT_NAMES.map((k) => LIMITS[k].against(1, 2))).toEqual([
      '$1.0000 of $2.0000',
      '1 tokens of 2 tokens',
      '1 tool call of 2 tool calls',
      '1 of 2 LLM calls',
      '1 ms of wall time, of 2 ms',
    ]);
    expect(LIMIT_NAMES.map((k) => LIMITS[k].cell(1234.5))).toEqual([
      '$1234.50',
      '1,234.5',
      '1,234.5',
      '1,234.5',
      '1.2 s',
    ]);
  });
});
