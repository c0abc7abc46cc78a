import type OpenAI from 'openai';
import type { Billing } from './billingServer';
import { unreadOvershootUsd } from './billingServer';

// What a report must say of what a billing server billed (test/helpers/billingServer.ts), as
// every path's reconciliation tests check it: the in-process loops, the metered fetch, the
// framework mirrors and the BullMQ workers.

/** What these checks read of a report: its totals and its runs. */
interface Reported {
  totals: { costUsd: number; uncertainUsd?: number | undefined; releasedUsd?: number | undefined };
  runs: readonly { outcome: string; error?: { message?: string } | undefined }[];
}

/** What a report calls billed: its cost but what it holds uncertain. */
const billedOf = (report: Reported): number => report.totals.costUsd - (report.totals.uncertainUsd ?? 0);

/**
 * A strict batch: the server billed no more than the cap (but for the documented overshoot of
 * answers past their max tokens sent whole); no more than the report's billed + uncertain (but an
 * overshoot no run read); and the report calls nothing billed that was not.
 */
export function expectReconciled(report: Reported, billing: Billing, capUsd: number): void {
  expect(billing.usd - billing.overshotUsd).toBeLessThanOrEqual(capUsd + 1e-12);
  expect(report.totals.costUsd).toBeGreaterThanOrEqual(billing.usd - unreadOvershootUsd(billing, report.runs) - 1e-9);
  expect(billedOf(report)).toBeLessThanOrEqual(billing.usd + 1e-9);
}

/** A batch whose every answer was read on time: its billed is, to the cent, what the server billed for them. */
export function expectBilledAsAnswered(report: Reported, billing: Billing): void {
  expect(billedOf(report)).toBeCloseTo(billing.answeredUsd, 9);
  expect(report.totals.costUsd).toBeGreaterThanOrEqual(billing.usd - 1e-9);
}

/**
 * A 429 storm's verdict: the runs done, and how many the cap allowed at the real cost per done
 * run, but no more than the runs that did not end on a 429 of their own (a framework that gives
 * up on one, as LangChain does without retry-after, or a retry policy run out: the cap had no
 * part in it). Throws when no run was done: a storm that completes nothing proves nothing.
 */
export function stormCompletion(
  report: Reported,
  billedUsd: number,
  capUsd: number,
): { done: number; allowed: number } {
  const { runs } = report;
  const done = runs.filter((r) => r.outcome === 'end_of_turn').length;
  if (done === 0) throw new Error(`a 429 storm: no run was done (${runs.map((r) => r.outcome).join(', ')})`);
  const refused = runs.filter((r) => r.outcome === 'error' && /\b429\b/.test(r.error?.message ?? '')).length;
  return { done, allowed: Math.min(Math.floor(capUsd / (billedUsd / done)), runs.length - refused) };
}

/**
 * A strict batch through a 429 storm, every answer read on time: it completes at least 90% of
 * what the cap allows, within it, every 429 released and nothing held uncertain.
 */
export function expectStormCompleted(report: Reported, billedUsd: number, capUsd: number): void {
  const { done, allowed } = stormCompletion(report, billedUsd, capUsd);
  expect(done).toBeGreaterThanOrEqual(Math.floor(0.9 * allowed));
  expect(billedUsd).toBeLessThanOrEqual(capUsd + 1e-12);
  expect(report.totals.releasedUsd).toBeGreaterThan(0);
  expect(report.totals.uncertainUsd ?? 0).toBe(0);
}

/** The user's own loop in these tests: one Chat Completions call saying "Say done", streamed (with its usage chunk) or sent whole. */
export async function sayDone(client: OpenAI, stream: boolean, maxTokens: number): Promise<string> {
  const request = {
    model: 'gpt-local',
    messages: [{ role: 'user' as const, content: 'Say done' }],
    max_completion_tokens: maxTokens,
  };
  if (!stream) return (await client.chat.completions.create(request)).choices[0]?.message.content ?? '';
  let text = '';
  const chunks = await client.chat.completions.create({
    ...request,
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of chunks) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}
